"""Progress reporting: the callback every long computation takes (``progress(fraction_done, message)``)."""

from __future__ import annotations

from collections.abc import Callable

ProgressFn = Callable[[float, str], None]
"""``progress(fraction_done, message)``; fraction in [0, 1]."""


def no_progress(fraction: float, message: str) -> None:
    """A progress callback that ignores its input."""
