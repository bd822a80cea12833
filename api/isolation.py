"""Bounded workers for the heavy work a request brings: parsing an uploaded scenario, drawing a map.

The API process never parses or renders an untrusted document itself. :class:`DocumentWorkers` runs
a function in a fresh process (forked from the jobs' preloaded fork server, so it starts in
milliseconds) under the same memory and CPU limits as a job (``BACKBONE_WORKER_MEMORY_MB``,
``BACKBONE_WORKER_CPU_S``) and its own wall-clock limit (``BACKBONE_DOCUMENT_TIMEOUT_S``); at most
``BACKBONE_DOCUMENT_WORKERS`` run at once. A request that waits longer than
``BACKBONE_DOCUMENT_QUEUE_S`` for a free worker gets 503 with ``Retry-After``.

The outcome crosses a pipe as plain data: the result, the problems of a validation error (422), or
which limit ended the work. A worker that hits a limit is answered 413 naming the limit, never 500:
an agent can tell "too large for this server" from a defect.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from backbone.api.resource_errors import MEMORY_EXIT_CODE, memory_failure
from backbone.api.settings import Settings
from backbone.errors import Problem, ValidationError

logger = logging.getLogger(__name__)


class DocumentLimitError(Exception):
    """The work needed more memory, CPU or time than the server allows a document; the API answers 413."""

    http_status = 413
    title = "Content Too Large"

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(message)
        self.limit = limit

    def problem_errors(self) -> list[dict[str, str]]:
        """One problem naming the limit (RFC 9457 ``errors``)."""
        return [{"file": "request body", "table": "", "record": "", "field": self.limit, "message": str(self)}]


class WorkersBusyError(Exception):
    """Every document worker stayed busy while the request waited; the API answers 503 with Retry-After."""

    http_status = 503
    title = "Service Unavailable"

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    @property
    def headers(self) -> dict[str, str]:
        """``Retry-After`` for the API's answer."""
        return {"Retry-After": str(self.retry_after_s)}


@dataclass(frozen=True)
class IsolationLimits:
    """What bounds one document worker."""

    memory_bytes: int  # RLIMIT_AS; 0 = none
    cpu_s: int  # RLIMIT_CPU; 0 = none
    timeout_s: float  # wall clock

    @classmethod
    def from_settings(cls, settings: Settings) -> IsolationLimits:
        """The job's memory and CPU limits, and the document wall-clock limit."""
        cpu = settings.worker_cpu_s
        if cpu:
            cpu = min(cpu, max(1, int(settings.document_timeout_s) + 1))
        return cls(settings.worker_memory_mb * 1024 * 1024, cpu, settings.document_timeout_s)


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...], limits: IsolationLimits) -> None:
    """The worker: bound itself, run ``fn``, send ``(status, payload)`` and exit."""
    from backbone.solver.core.processes import die_with_parent

    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    die_with_parent()
    try:
        import resource

        if limits.memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        if limits.cpu_s:
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 2))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not POSIX
        pass
    try:
        out: tuple[str, Any] = ("ok", fn(*args))
    except ValidationError as exc:
        out = ("invalid", [asdict(p) for p in exc.problems])
    except DocumentLimitError as exc:
        out = ("limit", (str(exc), exc.limit))
    except BaseException as exc:  # every failure is reported; the process ends right after
        if memory_failure(exc):
            out = ("memory", f"{type(exc).__name__}")
        else:
            logger.error("document worker failed", exc_info=True)
            out = ("error", f"{type(exc).__name__}")
    try:
        conn.send(out)
    except MemoryError:
        try:
            conn.send(("memory", "MemoryError"))
        except BaseException:
            os._exit(MEMORY_EXIT_CODE)  # could not even report it: the parent reads the code
    finally:
        conn.close()


START_ATTEMPTS = 3
"""Tries to start a process from the fork server (see :func:`start_process`)."""


def start_process(ctx: Any, target: Callable[..., Any], args: tuple[Any, ...], name: str, daemon: bool) -> Any:
    """A started process of ``ctx`` (the jobs' fork-server context). The fork server dies with the thread that
    started it (parent-death signal), so a start may be answered with EOF while the next attempt starts a new
    fork server: tried :data:`START_ATTEMPTS` times, then the last error is raised. Jobs and document workers
    both start their processes here.

    Raises
    ------
    EOFError, ConnectionError
        When every attempt failed.
    """
    for attempt in range(START_ATTEMPTS):
        proc = ctx.Process(target=target, args=args, name=name, daemon=daemon)
        try:
            proc.start()
            return proc
        except (EOFError, ConnectionError) as exc:
            logger.warning("%s did not start (%s: %s); attempt %d of %d", name, type(exc).__name__, exc,
                           attempt + 1, START_ATTEMPTS)
            if attempt == START_ATTEMPTS - 1:
                raise
            time.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


class DocumentWorkers:
    """Run heavy per-request work in bounded worker processes (see the module docstring).

    Parameters
    ----------
    settings
        ``document_workers`` (how many at once), ``document_queue_s``, and the limits
        (:meth:`IsolationLimits.from_settings`).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.limits = IsolationLimits.from_settings(settings)
        self._slots = threading.BoundedSemaphore(settings.document_workers)

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in a bounded worker process; returns its result.

        ``fn`` must be a module-level function and its arguments and result picklable.

        Raises
        ------
        ValidationError
            As ``fn`` raised it (422).
        DocumentLimitError
            When the worker ran out of memory, CPU time or wall-clock time (413, naming the limit).
        WorkersBusyError
            When no worker came free within ``document_queue_s`` (503).
        RuntimeError
            When ``fn`` failed otherwise (500; the cause is in the server log).
        """
        if not self._slots.acquire(timeout=self.settings.document_queue_s):
            raise WorkersBusyError(f"all {self.settings.document_workers} document workers are busy; retry later",
                                   retry_after_s=max(1, int(self.settings.document_queue_s)))
        try:
            return self._run(fn, args)
        finally:
            self._slots.release()

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        from backbone.api.jobs import worker_context

        ctx = worker_context()
        receiver, sender = ctx.Pipe(duplex=False)
        try:
            proc = start_process(ctx, _child, (sender, fn, args, self.limits), "backbone-document", daemon=True)
        except (EOFError, ConnectionError):
            raise WorkersBusyError("the document workers cannot be started right now; retry later",
                                   retry_after_s=5) from None
        started = time.monotonic()
        sender.close()
        msg: tuple[str, Any] | None = None
        try:
            if receiver.poll(self.limits.timeout_s):
                with contextlib.suppress(EOFError, OSError):
                    msg = receiver.recv()
        finally:
            receiver.close()
            self._stop(proc)
        if msg is None:
            raise self._death(proc.exitcode, time.monotonic() - started)
        status, payload = msg
        if status == "ok":
            return payload
        if status == "invalid":
            raise ValidationError([Problem(**p) for p in payload])
        if status == "limit":
            raise DocumentLimitError(payload[0], payload[1])
        if status == "memory":
            raise self._memory_error()
        raise RuntimeError(f"document worker failed: {payload}")

    def _memory_error(self) -> DocumentLimitError:
        mib = self.limits.memory_bytes // (1024 * 1024)
        return DocumentLimitError(f"the document needed more than this server's memory limit of {mib} MiB "
                                  "(BACKBONE_WORKER_MEMORY_MB)", "memory limit")

    def _death(self, code: int | None, elapsed_s: float) -> Exception:
        """What ended a worker that sent nothing (the exit codes as
        :func:`backbone.api.resource_errors.death_document` reads a job's)."""
        if code is None or elapsed_s >= self.limits.timeout_s:
            return DocumentLimitError(f"the document took longer than this server's limit of "
                                      f"{self.limits.timeout_s:g} s (BACKBONE_DOCUMENT_TIMEOUT_S)", "time limit")
        if code == -signal.SIGXCPU or (code == -signal.SIGKILL and self.limits.cpu_s and
                                       elapsed_s >= self.limits.cpu_s):
            return DocumentLimitError(f"the document needed more than this server's CPU-time limit of "
                                      f"{self.limits.cpu_s} s (BACKBONE_WORKER_CPU_S)", "cpu limit")
        if code == MEMORY_EXIT_CODE or (self.limits.memory_bytes and code in (-signal.SIGABRT, -signal.SIGSEGV)):
            return self._memory_error()
        if code == -signal.SIGKILL:
            return DocumentLimitError("the document worker was killed by the system (SIGKILL): the kernel's "
                                      "out-of-memory killer", "memory limit")
        return RuntimeError(f"document worker exited unexpectedly (exit code {code})")

    @staticmethod
    def _stop(proc: Any) -> None:
        """End the worker and anything it started (its process group)."""
        proc.join(timeout=0.5)
        if proc.is_alive() and proc.pid:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                proc.kill()
            proc.join(timeout=5)
