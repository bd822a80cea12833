"""Progress as plain lines, for a stderr that is not a terminal (a log file, a pipe, CI, a job runner).

A rich progress bar draws nothing until it ends when stderr is not a terminal, so a long ``plan`` or
``roadmap`` would look dead for minutes. :class:`PlainProgress` writes one line per stage change and at most
one line every ``interval_s`` seconds within a stage, with no colour or cursor codes; used as a context
manager it also repeats the last message every ``interval_s`` while no new one comes (a long MIP reports
nothing for minutes), so a log shows the run is alive::

    [    0 s] plan   0 %: place: building the placement model
    [   42 s] plan  38 %: failures: 37/97 scenarios
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

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
        self.fraction, self.message = 0.0, "starting"
        self.lines = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None

    def __call__(self, fraction: float, message: str) -> None:
        with self._lock:
            now = self.clock()
            self.fraction, self.message = float(fraction), message
            stage = stage_of(message)
            new_stage = stage != self.stage and (bool(stage) or self.stage is None)
            if new_stage:
                self.stage = stage
            if new_stage or self.last_line_s is None or now - self.last_line_s >= self.interval_s:
                self._line(now)

    def __enter__(self) -> PlainProgress:
        """Start the heartbeat: the last message again whenever ``interval_s`` passes without a line."""
        self._heartbeat = threading.Thread(target=self._beat, name="plain-progress", daemon=True)
        self._heartbeat.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s / 4):
            with self._lock:
                now = self.clock()
                if self.last_line_s is None or now - self.last_line_s >= self.interval_s:
                    self._line(now)

    def finish(self, message: str = "done") -> None:
        """The closing line (with the elapsed time)."""
        with self._lock:
            self.fraction, self.message = 1.0, message
            self._line(self.clock())

    def _line(self, now: float) -> None:
        pct = 100.0 * min(1.0, max(0.0, self.fraction))
        text = " ".join(self.message.split())  # one line, whatever the message holds
        self.write(f"[{now - self.start_s:5.0f} s] {self.kind} {pct:3.0f} %: {text}\n")
        self.last_line_s = now
        self.lines += 1
