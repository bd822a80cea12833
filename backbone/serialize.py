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
