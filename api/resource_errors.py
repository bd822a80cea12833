"""Failures of the environment told apart from defects: storage that is full or read-only, and a job
that hit its memory or CPU limit.

An agent acts differently on each: a full disk is a 503 with ``Retry-After`` (try again later), a job
killed by its memory limit is a smaller job or a bigger limit, and only what is left is an internal
error worth a bug report. The classification lives here, once, for request handlers
(:mod:`backbone.api.app`), job workers and the job supervisor (:mod:`backbone.api.jobs`).
"""

from __future__ import annotations

import errno
import logging
import signal
from collections.abc import Callable, Iterator
from typing import Any

logger = logging.getLogger(__name__)

STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})
"""``OSError`` numbers of storage that cannot take a write now: disk full, quota exceeded, read-only
file system, I/O error."""

STORAGE_MESSAGES = ("database or disk is full", "no space left on device", "disk quota exceeded",
                    "attempt to write a readonly database", "read-only file system", "readonly database",
                    "disk i/o error", "could not extend file", "could not write to file")
"""Fragments (lower case) of database driver messages for the same conditions (SQLite, PostgreSQL)."""

STORAGE_RETRY_AFTER_S = 60
"""``Retry-After`` of a 503 for a storage failure: an operator has to free space first."""

MEMORY_MESSAGES = ("can't start new thread", "cannot allocate memory", "failed to map segment from shared object",
                   "out of memory", "cannot map zero-fill pages", "std::bad_alloc")
"""Fragments (lower case) of errors raised when an allocation fails: a thread stack, a shared library
mapped at import (``ImportError``/``OSError``), numpy's ``_ArrayMemoryError`` (a ``MemoryError``)."""

MEMORY_EXIT_CODE = 86
"""Exit code of a worker that hit its memory limit and could not even report it (the report itself
needed memory); the supervisor reads it as a memory-limit death."""


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, its causes and contexts, and a database driver's original error (``.orig``), each once."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        orig = getattr(e, "orig", None)
        todo += [e.__cause__, e.__context__, orig if isinstance(orig, BaseException) else None]


def storage_failure(exc: BaseException) -> str | None:
    """Why storage refused a write (disk full, quota, read-only, I/O error), or None for any other error.

    Parameters
    ----------
    exc
        Any exception; its causes and a database driver's original error are looked at too.
    """
    for e in _chain(exc):
        if isinstance(e, OSError) and e.errno in STORAGE_ERRNOS:
            import os

            return os.strerror(e.errno)
        text = str(e).lower()
        if type(e).__name__ in ("OperationalError", "DiskFull", "InsufficientResources", "ReadOnlySqlTransaction") \
                or isinstance(e, OSError):
            for fragment in STORAGE_MESSAGES:
                if fragment in text:
                    return fragment
    return None


def storage_document(reason: str) -> dict[str, Any]:
    """The problem document of a storage failure (503; the caller sends ``Retry-After``)."""
    return {"type": "about:blank", "title": "Storage unavailable", "status": 503, "errors": [],
            "detail": f"the server's storage cannot take a write now ({reason}); nothing was stored. "
                      f"Try again later (Retry-After)"}


def memory_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation that failed: ``MemoryError`` (numpy's ``_ArrayMemoryError`` too),
    a thread that could not start, a shared library that could not be mapped, ``ENOMEM``.

    Under a job's address-space limit (RLIMIT_AS) these are how the limit shows; they are not defects.
    """
    for e in _chain(exc):
        if isinstance(e, MemoryError) or (isinstance(e, OSError) and e.errno == errno.ENOMEM):
            return True
        if isinstance(e, RuntimeError | OSError | ImportError):
            text = str(e).lower()
            if any(fragment in text for fragment in MEMORY_MESSAGES):
                return True
    return False


def memory_limit_document(memory_bytes: int, how: str = "") -> dict[str, Any]:
    """The problem document of a job that needed more than its memory limit (``memory_bytes``; 0 = none:
    the machine ran out)."""
    how = f"; {how}" if how else ""
    if memory_bytes:
        return {"type": "about:blank", "title": "Memory limit", "status": 500, "errors": [],
                "detail": f"the job needed more than the server's memory limit of {memory_bytes // (1024 * 1024)} "
                          f"MiB per process (BACKBONE_WORKER_MEMORY_MB){how}"}
    return {"type": "about:blank", "title": "Out of memory", "status": 500, "errors": [],
            "detail": f"the job needed more memory than the machine had{how}"}


def death_document(exitcode: int | None, memory_bytes: int, cpu_s: int) -> dict[str, Any]:
    """The problem document of a worker that died without reporting, from its exit code.

    ``SIGXCPU`` is the CPU-time limit (soft); ``SIGKILL`` is the CPU-time hard limit or the kernel's
    out-of-memory killer (the server kills a running job only when cancelling it or at its time limit,
    which are reported as such); ``SIGABRT`` under a memory limit is an allocation that failed in native
    code; :data:`MEMORY_EXIT_CODE` is a worker that hit its memory limit and could not report it.
    Anything else is a worker that died: a defect.
    """
    code = exitcode
    mib = memory_bytes // (1024 * 1024)
    if code == -signal.SIGXCPU and cpu_s:
        return _doc("CPU time limit", f"the job used more than the server's CPU-time limit of {cpu_s} s per process "
                                      f"(BACKBONE_WORKER_CPU_S); exit code {code}")
    if code == MEMORY_EXIT_CODE:
        return memory_limit_document(memory_bytes, f"the worker could not even report it (exit code {code})")
    if code == -signal.SIGKILL:
        causes = [f"the CPU-time hard limit ({cpu_s} s + 5 s grace, BACKBONE_WORKER_CPU_S)" if cpu_s else "",
                  "the kernel's out-of-memory killer (the machine ran out of memory"
                  + (f"; this job's limit is {mib} MiB per process, BACKBONE_WORKER_MEMORY_MB)" if mib else ")")]
        return _doc("Resource limit", f"the job was killed by the system (SIGKILL, exit code {code}): "
                                      + " or ".join(c for c in causes if c))
    if code == -signal.SIGABRT and memory_bytes:
        return memory_limit_document(memory_bytes, f"native code aborted on a failed allocation (exit code {code})")
    return _doc("Worker died", f"worker process exited unexpectedly (exit code {code})")


def _doc(title: str, detail: str) -> dict[str, Any]:
    return {"type": "about:blank", "title": title, "status": 500, "detail": detail, "errors": []}


def report_failure(job_id: str, exc: BaseException, events: Any, memory_bytes: int,
                   document: Callable[[BaseException], dict[str, Any]]) -> None:
    """Send a failed job's problem document on ``events`` (from a job's worker process).

    An allocation that failed (:func:`memory_failure`) under the memory limit ``memory_bytes`` is reported
    as the limit, never as an internal error; everything else as ``document(exc)``. When even the report
    fails for lack of memory, the worker exits with :data:`MEMORY_EXIT_CODE`.
    """
    import os
    import traceback

    from backbone.errors import BackboneError

    traceback.clear_frames(exc.__traceback__)  # free what the failed task held (locals) before reporting
    out_of_memory = memory_failure(exc) and (memory_bytes > 0 or isinstance(exc, MemoryError))
    if out_of_memory:
        doc = memory_limit_document(memory_bytes, f"it showed as {type(exc).__name__}")
        logger.warning("job %s hit its memory limit: %s: %.200s", job_id, type(exc).__name__, exc)
    else:
        if isinstance(exc, Exception) and not isinstance(exc, BackboneError):
            logger.error("job %s failed", job_id, exc_info=True)
        doc = document(exc)
    try:
        events.put(("error", job_id, doc))
    except BaseException as again:
        if out_of_memory or memory_failure(again):
            os._exit(MEMORY_EXIT_CODE)  # the supervisor reads the exit code as the memory limit
        raise
