"""Child processes of the solver: how many a run may start, and tying their life to their parent's.

A sweep or a path search may start a process pool. On a laptop the CLI uses every CPU; inside the
API server each job is one worker process and the server caps how many processes that job may
start (``BACKBONE_JOB_PROCESSES``). The cap is process-wide state set once by the API's worker
(:func:`set_process_limit`), read by every pool (:func:`capped_workers`).

:func:`die_with_parent` asks Linux to SIGKILL the calling process when its parent exits
(``prctl(PR_SET_PDEATHSIG)``), so pool processes do not keep computing after the process that
started them died; elsewhere it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys

_PROCESS_LIMIT: int | None = None
PR_SET_PDEATHSIG = 1
"""``prctl`` option number (linux/prctl.h)."""


def set_process_limit(limit: int | None) -> None:
    """Cap the processes any pool of this process may start (None: no cap, use every CPU)."""
    global _PROCESS_LIMIT
    if limit is not None and limit < 1:
        raise ValueError(f"process limit must be at least 1, got {limit}")
    _PROCESS_LIMIT = limit


def process_limit() -> int | None:
    """The cap set by :func:`set_process_limit` (None when there is none)."""
    return _PROCESS_LIMIT


def capped_workers(requested: int | None) -> int:
    """Processes a pool may start: ``requested`` (default: the CPU count), at most the process limit."""
    n = requested or os.cpu_count() or 1
    if _PROCESS_LIMIT is not None:
        n = min(n, _PROCESS_LIMIT)
    return max(1, n)


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Have the kernel send ``sig`` to this process when its parent exits (Linux only).

    Returns True when the request was registered. If the parent is already gone (re-parented to
    init or a subreaper) the process exits at once, so no orphan keeps computing.
    """
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        ok = libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
    if parent == 1 or os.getppid() != parent:  # died before the request took effect
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), sig)
        os._exit(1)
    return ok


def pool_initializer() -> None:
    """Initializer for solver process pools: each pool process dies with the process that started it."""
    die_with_parent()
