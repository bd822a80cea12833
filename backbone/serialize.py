"""JSON for results: numpy scalars and arrays, paths; NaN is not JSON (callers map it to null)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def json_default(o: Any) -> Any:
    """``json.dumps(default=...)`` hook for numpy values and paths.

    Raises
    ------
    TypeError
        For anything else, as ``json`` expects.
    """
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def finite_or_none(value: Any, digits: int | None = None) -> float | None:
    """``float(value)`` (rounded to ``digits`` when given) when it is a finite number, else ``None`` (NaN, ±inf,
    None, or not a number): the scalar form of :func:`json_safe`.

    Example
    -------
    >>> finite_or_none(float("nan")), finite_or_none(2.0000004, 6)
    (None, 2.0)
    """
    import math

    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(f):
        return None
    return round(f, digits) if digits is not None else f


def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float (NaN, ±inf; Python or numpy) replaced by ``None``.

    The one place result JSON turns NaN into null: the planning service's files and the CLI's
    ``--json`` both go through it, so a value that could not be computed reads as ``null``.

    Example
    -------
    >>> json_safe({"a": float("nan"), "b": [1.0, float("inf")]})
    {'a': None, 'b': [1.0, None]}
    """
    import math

    import numpy as np

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, np.floating):
        return float(obj) if np.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    return obj


def gbps_text(value: Any) -> str:
    """Gbps with a thousands separator and one decimal, or ``unknown`` when not measured (None or NaN).

    The one way every front door prints an unmet or impact figure that may be unknown (an overloaded state
    whose shortfall was not measured), so unknown never reads as 0.
    """
    import math

    return f"{float(value):,.1f}" if value is not None and not math.isnan(float(value)) else "unknown"


def count_text(n: Any, word: str, plural: str | None = None) -> str:
    """``n`` and ``word`` with the word in the singular for exactly one and the plural otherwise: ``1 link``,
    ``2 links``, ``0 iterations``, ``1,234 demands`` (thousands separator).

    The plural is ``plural`` when given, else ``word`` + ``s`` (``y`` after a consonant becomes ``ies``). The one
    way the front doors and the report print a count with its noun, so no output reads "1 links".
    """
    if plural is None:
        plural = word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"
    value = int(n) if float(n) == int(n) else n
    number = f"{value:,}" if isinstance(value, int) else f"{float(value):,.2f}"
    return f"{number} {word if value == 1 else plural}"
