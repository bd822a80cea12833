"""One wall-clock deadline shared by every step of a solve (path search, model building, LP).

A :class:`Deadline` is an absolute ``time.perf_counter()`` instant. ``perf_counter`` is the system's
monotonic clock on Linux and macOS, so a deadline handed to a forked worker process means the same
instant there. Long steps check it between chunks of work (:meth:`Deadline.check`) and raise
:class:`TimeLimitReached`; the TE entry point catches it and returns the best feasible answer found
so far with its lower bound (status ``time_limit``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from backbone.errors import SolverError


class TimeLimitReached(SolverError):
    """The time limit passed during a step that has no usable partial result (e.g. path search).

    A :class:`~backbone.errors.SolverError`, so callers that do not recover from it report a solver
    error, never a traceback.
    """


@dataclass(frozen=True)
class Deadline:
    """An absolute deadline on ``time.perf_counter()`` (picklable; valid in forked workers).

    Example
    -------
    >>> d = Deadline.after(10.0)
    >>> 9.0 < d.remaining() <= 10.0
    True
    """

    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline ``seconds`` from now."""
        return cls(time.perf_counter() + float(seconds))

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - time.perf_counter()

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return time.perf_counter() >= self.at

    def check(self, what: str) -> None:
        """Raise :class:`TimeLimitReached` naming ``what`` was running if the deadline has passed."""
        if time.perf_counter() >= self.at:
            raise TimeLimitReached(f"time limit reached during {what}")
