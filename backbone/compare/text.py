"""How a compared number reads, in the terminal, the report and the deck alike: ratios as percent, USD in
millions, other numbers with their unit; a change with its sign; ``–`` for unknown."""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["change_text", "value_text"]


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    v = float(value)
    return None if math.isnan(v) else v


def value_text(value: Any, unit: str = "") -> str:
    """``value`` as shown: ``12.5 %`` (ratio), ``13.12 M USD``, ``4,096 GPU``, ``2.35 ms``; text as is.

    Example
    -------
    >>> value_text(0.125, "ratio"), value_text(13_120_000, "USD"), value_text(4096.0, "GPU")
    ('12.5 %', '13.12 M USD', '4,096 GPU')
    """
    v = _number(value)
    if v is None:
        return "–" if value is None or isinstance(value, float) else str(value)
    if unit == "ratio":
        return f"{100 * v:,.1f} %"
    if unit == "USD":
        return f"{v / 1e6:,.2f} M USD"
    text = f"{v:,.0f}" if v.is_integer() else f"{v:,.3f}".rstrip("0").rstrip(".")
    return f"{text} {unit}".strip()


def change_text(delta: Any, unit: str = "") -> str:
    """A change with its sign (``+3.2 %``, ``-1 states``, ``0 USD`` when unchanged).

    Example
    -------
    >>> change_text(-1.0, "states"), change_text(0.032, "ratio")
    ('-1 states', '+3.2 %')
    """
    v = _number(delta)
    if v is None:
        return "–"
    text = value_text(abs(v), unit)
    return ("+" if v > 0 else "-" if v < 0 else "") + text
