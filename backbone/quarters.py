"""Calendar quarters, the model's one reading of them: ``2027Q3`` is absolute quarter number ``2027 * 4 + 2``.

A candidate's ``available_from``, a training job's ``start`` and ``end`` and a roadmap's periods are quarters like
``2027Q3``; every layer turns them into numbers with :func:`quarter_number` and back with :func:`quarter_label`, so
that "the quarter after" is ``+ 1`` everywhere.
"""

from __future__ import annotations

import re

__all__ = ["QUARTER_PATTERN", "quarter_label", "quarter_number"]

QUARTER_PATTERN = re.compile(r"^(\d{4})Q([1-4])$")
"""A calendar quarter such as ``2027Q3``: groups year and quarter (1-4)."""


def quarter_number(text: str) -> int:
    """Absolute quarter number (year x 4 + quarter - 1) of a quarter label like ``2027Q3``.

    Parameters
    ----------
    text
        The label; surrounding blanks are ignored.

    Returns
    -------
    int
        ``2027Q3`` -> ``2027 * 4 + 2`` = 8110.

    Raises
    ------
    ValueError
        For a label that is not a quarter like ``2027Q3``.

    Example
    -------
    >>> quarter_number("2027Q3") - quarter_number("2026Q4")
    3
    """
    m = QUARTER_PATTERN.match(str(text).strip())
    if not m:
        raise ValueError(f"expected a quarter like '2027Q3', got {text!r}")
    return int(m.group(1)) * 4 + int(m.group(2)) - 1


def quarter_label(number: int) -> str:
    """The label of absolute quarter ``number`` (the inverse of :func:`quarter_number`: 8110 -> ``2027Q3``)."""
    year, q = divmod(int(number), 4)
    return f"{year}Q{q + 1}"
