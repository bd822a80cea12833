"""Progress as plain lines, for a stderr that is not a terminal (a log file, a pipe, CI, a job runner).

A rich progress bar draws nothing until it ends when stderr is not a terminal, so a long ``plan`` or
``roadmap`` would look dead for minutes. :class:`PlainProgress` writes one line per stage change and at most
one line every ``interval_s`` seconds within a stage, with no colour or cursor codes::

    [    0 s] plan   0 %: place: building the placement model
    [   42 s] plan  38 %: failures: 37/97 scenarios
"""

from __future__ import annotations

import time
from collections.abc import Callable

PLAIN_INTERVAL_S = 10.0
"""Seconds between two progress lines within one stage."""


def stage_of(message: str) -> str:
    """The stage a progress message belongs to: its text before the first ``": "`` (empty when it has none).

    Example
    -------
    >>> stage_of("failures: 37/97 scenarios (srlg:red-sea)")
    'failures'
    >>> stage_of("37/97 scenarios (srlg:red-sea)")
    ''
    """
    head, sep, _ = message.partition(": ")
    return head if sep else ""


class PlainProgress:
    """A progress callback (``progress(fraction, message)``) that writes plain, throttled lines.

    Parameters
    ----------
    kind
        The command (``plan``, ``te``, ...), at the start of every line.
    write
        Where a line goes (one call per line, the newline included), e.g. ``sys.stderr.write``.
    interval_s
        Seconds between two lines within one stage; a new stage is written at once.
    clock
        Monotonic seconds (tests pass a fake clock).
    """

    def __init__(self, kind: str, write: Callable[[str], object], interval_s: float = PLAIN_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.kind, self.write, self.interval_s, self.clock = kind, write, float(interval_s), clock
        self.start_s = clock()
        self.last_line_s: float | None = None
        self.stage: str | None = None
        self.fraction, self.message = 0.0, ""
        self.lines = 0

    def __call__(self, fraction: float, message: str) -> None:
        now = self.clock()
        self.fraction, self.message = float(fraction), message
        stage = stage_of(message)
        new_stage = stage != self.stage and (bool(stage) or self.stage is None)
        if new_stage:
            self.stage = stage
        if new_stage or self.last_line_s is None or now - self.last_line_s >= self.interval_s:
            self._line(now)

    def finish(self, message: str = "done") -> None:
        """The closing line (with the elapsed time)."""
        self.fraction, self.message = 1.0, message
        self._line(self.clock())

    def _line(self, now: float) -> None:
        pct = 100.0 * min(1.0, max(0.0, self.fraction))
        text = " ".join(self.message.split())  # one line, whatever the message holds
        self.write(f"[{now - self.start_s:5.0f} s] {self.kind} {pct:3.0f} %: {text}\n")
        self.last_line_s = now
        self.lines += 1
