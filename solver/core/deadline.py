"""One wall-clock deadline shared by every step of a solve (path search, model building, LP).

A :class:`Deadline` is an absolute ``time.perf_counter()`` instant. ``perf_counter`` is the system's
monotonic clock on Linux and macOS, so a deadline handed to a forked worker process means the same
instant there. Long steps check it between chunks of work (:meth:`Deadline.check`) and raise
:class:`TimeLimitReached`; the TE entry point catches it and returns the best feasible answer found
so far with its lower bound (status ``time_limit``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from backbone.errors import SolverError

T = TypeVar("T")


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


COMPILING_NOTE = ("the compiled kernel was still being compiled (the first run after installing compiles it, about "
                  "a minute on a loaded machine; the compilation goes on and later runs load it from the cache)")
"""What :func:`call_compiled` says when the deadline passes while a kernel compiles."""


def call_compiled(kernel: Callable[..., T], args: tuple[Any, ...], deadline: Deadline | None, what: str) -> T:
    """``kernel(*args)`` for a numba-compiled ``kernel``, within ``deadline``.

    A kernel that is not compiled yet in this process (``kernel.signatures`` empty) compiles, or loads its
    cache, on its first call, in one step no deadline check can enter; on a loaded machine a first compile takes
    minutes. That first call runs in a thread while this one waits at most until ``deadline``; when it passes,
    :class:`TimeLimitReached` names ``what`` and :data:`COMPILING_NOTE`. The thread is not a daemon: the
    compilation finishes (and writes the cache) before the process ends, so the next run loads it.

    Raises
    ------
    TimeLimitReached
        ``deadline`` passed before the first call returned.
    """
    if deadline is None or getattr(kernel, "signatures", None):
        return kernel(*args)
    deadline.check(what)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = kernel(*args)
        except BaseException as exc:  # handed to the waiting caller
            box["error"] = exc

    worker = threading.Thread(target=run, name=f"compile {getattr(kernel, '__name__', 'kernel')}")
    worker.start()
    worker.join(max(0.0, deadline.remaining()))
    if worker.is_alive():
        raise TimeLimitReached(f"time limit reached during {what}: {COMPILING_NOTE}")
    if "error" in box:
        raise box["error"]
    return box["value"]
