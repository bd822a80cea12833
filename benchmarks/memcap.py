"""Run one benchmark solve in a subprocess under a wall-clock cap and a resident-memory cap.

The machine is shared (2 cores, 23 GB, several engineers), so a solve that would not fit must be
stopped and reported ("did not fit: X GB"), not left to push the machine into swapping or the OOM
killer. :func:`run_capped` starts the command in its own process group, samples the resident set of
the whole group (the command and any worker processes it starts) from ``/proc`` every
``interval_s`` and kills the group when the sum passes ``cap_gb`` or the wall clock passes
``cap_s``. The peak it reports is the largest sum it saw (a sampled figure: the child's own
``ru_maxrss``, printed by the child, is the exact one for a single process).

Linux only (``/proc``); the benchmarks run on the project's Linux machines.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Capped:
    """What :func:`run_capped` saw: ``outcome`` is ``ok``, ``error``, ``memory`` (killed at the memory
    cap) or ``timeout`` (killed at the wall-clock cap)."""

    outcome: str
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    peak_gb: float


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            out += [int(x) for x in task.read_text().split()]
        except OSError:
            pass
    return out


def tree_rss_gb(pid: int) -> float:
    """Resident set of ``pid`` and its descendants, GB (0 when it has gone)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):
            continue
        todo += _children(p)
    return total / 2**30


def run_capped(cmd: list[str], cap_s: float, cap_gb: float, cwd: str | Path | None = None,
               env: dict[str, str] | None = None, interval_s: float = 0.25) -> Capped:
    """Run ``cmd``; kill its process group at ``cap_s`` seconds or ``cap_gb`` GB resident (summed over the
    group's processes). Output goes through temporary files, so a large stderr cannot block the child."""
    t0 = time.perf_counter()
    peak = 0.0
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, cwd=cwd, env=env, start_new_session=True)
        outcome = ""
        while proc.poll() is None:
            peak = max(peak, tree_rss_gb(proc.pid))
            elapsed = time.perf_counter() - t0
            if peak > cap_gb or elapsed > cap_s:
                outcome = "memory" if peak > cap_gb else "timeout"
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                break
            time.sleep(interval_s)
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if not outcome:
        outcome = "ok" if proc.returncode == 0 else "error"
    return Capped(outcome, proc.returncode, stdout, stderr, seconds, peak)
