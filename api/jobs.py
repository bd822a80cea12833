"""Running planning jobs in worker processes.

The API never solves inside a request handler. A :class:`JobManager` owns a supervisor thread
that claims queued jobs from the store (fair share: the oldest job of the token with the fewest
running jobs; at most ``settings.workers`` at a time),
starts one worker process per job (forked from a preloaded fork server, see :func:`worker_context`) and listens on a multiprocessing queue for its
progress and its outcome. A worker runs :func:`backbone.solver.tasks.run_task` into
``<data dir>/staging/<job id>``; on success the supervisor renames that folder to
``<data dir>/results/<job id>`` (so a result is never half-written) and marks the job succeeded.

Each worker leads its own process group (it may start a process pool: a failure sweep, the path
search; at most ``settings.job_processes`` processes) and runs under RLIMIT_AS / RLIMIT_CPU from the
settings. Cancelling terminates the group (SIGTERM, then SIGKILL). A job exceeding
``settings.job_timeout_s`` is killed and failed. Workers die with the server, however it dies: the
fork server and each worker get SIGKILL from the kernel when their parent exits (Linux parent-death
signal), and each worker also watches a pipe whose only write end the server holds and kills its
group at EOF. At the next start-up every job still marked ``running`` is failed with reason
"server restarted" and stale staging folders are removed. Queued jobs stay queued and run.

This is the ``inline`` execution (``BACKBONE_JOB_EXECUTION``, the default). In ``queue`` execution the server only
enqueues and ``backbone worker`` processes run this same machinery with a lease on each job
(:mod:`backbone.api.worker`: the subclass overrides the claim, the record of a job's end and the periodic work).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import queue as queue_mod
import shutil
import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backbone.api.isolation import start_process
from backbone.api.job_limits import CAPPED_OPTIONS as CAPPED_OPTIONS
from backbone.api.job_limits import OptionsTooLargeError as OptionsTooLargeError
from backbone.api.job_limits import check_job_limits as check_job_limits
from backbone.api.job_limits import job_timeout_s
from backbone.api.job_outcome import listed_files, outcome_message
from backbone.api.resource_errors import death_document, report_failure, storage_document, storage_failure
from backbone.api.result_store import ResultStore, open_result_store
from backbone.api.result_store import tree_bytes as tree_bytes
from backbone.api.settings import Settings
from backbone.api.store import PurgeReport, Store

if TYPE_CHECKING:
    from backbone.solver.tasks import Task

logger = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.2
"""Workers send at most this many progress updates per second (and always the last one)."""


def error_document(exc: BaseException) -> dict[str, Any]:
    """An RFC 9457 problem document for an exception raised by a task (or by input handling).

    The status, title, detail and ``errors`` come from the exception's class (``http_status``, ``title``,
    ``problem_detail()``, ``problem_errors()``: :class:`backbone.errors.BackboneError` and the API's own errors),
    never from a table here. ``errors`` lists ``{file, table, record, field, message}`` for validation errors and
    one entry per reason for infeasibility. Storage that is full or read-only is a 503
    (:func:`~backbone.api.resource_errors.storage_failure`). Any other exception is a 500 whose text stays in
    the server log.
    """
    status = getattr(type(exc), "http_status", None)
    storage = None if isinstance(status, int) else storage_failure(exc)
    if storage is not None:
        return storage_document(storage)
    if isinstance(status, int):
        detail = getattr(exc, "problem_detail", None)
        errors = getattr(exc, "problem_errors", None)
        return {"type": "about:blank", "title": str(getattr(exc, "title", "") or _phrase(status)),
                "status": int(getattr(exc, "http_status", status)),
                "detail": detail() if callable(detail) else str(exc),
                "errors": errors() if callable(errors) else []}
    # any viewer reads a job's error: an unexpected exception's text (paths, data) stays in the server log
    return {"type": "about:blank", "title": "Internal error", "status": 500,
            "detail": f"{type(exc).__name__} (details in the server log)", "errors": []}


def _phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


# ---------------------------------------------------------------------- worker side
@dataclass(frozen=True)
class WorkerLimits:
    """What bounds one job's worker process (from :class:`~backbone.api.settings.Settings`)."""

    processes: int
    memory_bytes: int  # RLIMIT_AS of each process of the job; 0 = none
    cpu_s: int  # RLIMIT_CPU of each process of the job; 0 = none
    nice: int = 0  # added to the scheduling niceness, so request handling keeps the CPU it needs

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkerLimits:
        return cls(settings.job_processes, settings.worker_memory_mb * 1024 * 1024, settings.worker_cpu_s,
                   settings.worker_nice)


def apply_limits(limits: WorkerLimits) -> None:
    """Resource limits of this process (inherited by every process it starts)."""
    from backbone.solver.core.processes import set_process_limit

    set_process_limit(limits.processes)
    if limits.nice:
        with contextlib.suppress(OSError):
            os.nice(limits.nice)
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    if limits.memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    if limits.cpu_s:
        # SIGXCPU at the soft limit (the job fails with "CPU time limit"), SIGKILL at the hard limit
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5))


def _watch_lifeline(lifeline: Any) -> None:
    """Kill this worker's whole process group (the worker and every pool process it started) as
    soon as the server is gone: the server holds the only write end of ``lifeline``, and the
    kernel closes it when the server dies, however it dies."""
    with contextlib.suppress(BaseException):
        while True:
            lifeline.recv_bytes()  # the server never writes: this returns only by EOFError (server gone)
    with contextlib.suppress(OSError):
        os.killpg(os.getpgid(0), signal.SIGKILL)
    os._exit(3)


def tie_to_server(lifeline: Any) -> None:
    """Make this worker a process-group leader that dies with the server (see :func:`_watch_lifeline`)."""
    from backbone.solver.core.processes import die_with_parent

    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # the job's processes form one group: cancel and crash handling kill the group
    die_with_parent()  # the parent is the fork server, which exits with the server (its alive pipe closes)
    threading.Thread(target=_watch_lifeline, args=(lifeline,), name="lifeline", daemon=True).start()


def process_cpu_s() -> float:
    """CPU seconds (user + system) of this process and of the child processes it waited for (a job's pool)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return float(own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime)


def begin_job_process(lifeline: Any = None, limits: WorkerLimits | None = None) -> None:
    """The first steps of every job process (a task, an import, a map): tie it to its supervisor through
    ``lifeline`` (when given), apply its resource ``limits`` (when given) and log warnings only."""
    if lifeline is not None:
        tie_to_server(lifeline)
    if limits is not None:
        apply_limits(limits)
    logging.basicConfig(level=logging.WARNING)


def worker_main(job_id: str, kind: str, document: dict[str, Any], options: dict[str, Any], out_dir: str,
                events: Any, registry: Mapping[str, Task | str], lifeline: Any = None,
                limits: WorkerLimits | None = None) -> None:
    """Entry point of a worker process: tie it to the server, bound it, build the network, run the
    task, report the outcome."""
    begin_job_process(lifeline, limits)
    with contextlib.suppress(OSError):
        os.dup2(2, 1)  # solver banners written at C level go to the server's stderr, not its stdout
    last = [0.0]

    def progress(fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL_S or fraction >= 1.0:
            last[0] = now
            events.put(("progress", job_id, float(fraction), str(message)))

    events.put(("started", job_id))  # starts the queue's feeder thread now, while there is memory for it
    try:
        from backbone.io import network_from_dict
        from backbone.solver.tasks import run_task

        net = network_from_dict(document, file="scenario")
        result = run_task(kind, net, options, out_dir, progress, extra=registry)
        events.put(("usage", job_id, process_cpu_s()))
        events.put(("done", job_id, [str(f) for f in result.files], outcome_message(result.document())))
    except BaseException as exc:  # report every failure; the process ends right after
        with contextlib.suppress(BaseException):  # out of memory: the failure report matters more
            events.put(("usage", job_id, process_cpu_s()))
        report_failure(job_id, exc, events, limits.memory_bytes if limits is not None else 0, error_document)
    finally:
        events.close()
        events.join_thread()


# ---------------------------------------------------------------------- server side
PRELOAD = ("backbone.api.jobs", "numpy", "pandas", "scipy.sparse", "pydantic", "networkx", "backbone.io", "backbone.solver.tasks",
           "backbone.solver.tasks.registry")
"""Modules the fork server imports once, so a job's worker starts in milliseconds, not seconds
(missing ones are skipped)."""


def worker_context() -> Any:
    """The multiprocessing context of worker processes.

    ``forkserver`` where available: a clean, single-threaded server process (started like
    ``spawn``, never forked from the threaded API process) imports :data:`PRELOAD` once and forks a
    fresh worker per job. Elsewhere ``spawn``. The fork server exits as soon as the process that
    started it does, however it dies: that process holds the only write end of the fork server's
    "alive" pipe (``multiprocessing.forkserver``'s own), and the kernel closes it.
    """
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
        return ctx
    return mp.get_context("spawn")


@dataclass
class _Running:
    process: BaseProcess
    started: float
    final: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class JobManager:
    """Queue, run, watch and cancel jobs (one worker process per running job).

    Parameters
    ----------
    store
        The store holding jobs and scenarios.
    settings
        Data dir, worker count, job time limit.
    registry
        Extra kinds (``kind -> Task`` or ``"module:function"``; tests register slow or failing tasks here);
        the shipped kinds come from :data:`backbone.solver.tasks.registry.TASKS`.
    results
        The result store (default: the one ``settings.result_store`` names, else :attr:`results_dir`).
    """

    worker_id: str | None = None
    """The lease holder's id when jobs are claimed from a shared queue (:class:`backbone.api.worker.QueueWorker`);
    None: this server runs its jobs inline, without a lease."""

    def __init__(self, store: Store, settings: Settings, registry: Mapping[str, Task | str] | None = None,
                 results: ResultStore | None = None) -> None:
        self.store = store
        self.settings = settings
        self.results: ResultStore = results or open_result_store(settings.result_store, self.results_dir)
        """Where finished jobs' folders go (``BACKBONE_RESULT_STORE``: the results folder or an object store)."""
        self.extra_registry = dict(registry or {})
        self._ctx = worker_context()
        self._events: Any = None
        self._lifeline: tuple[Any, Any] | None = None  # (read end for workers, write end kept here)
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_maintenance = 0.0

    @property
    def results_dir(self) -> Path:
        return self.settings.data_dir / "results"

    @property
    def staging_dir(self) -> Path:
        return self.settings.data_dir / "staging"

    def registry(self) -> dict[str, Task | str]:
        """Every runnable kind -> its :class:`~backbone.solver.tasks.Task` (or ``module:function`` for an extra
        kind)."""
        from backbone.solver.tasks.registry import TASKS

        return {**TASKS, **self.extra_registry}

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Recover from a previous run, then start the supervisor thread."""
        self.settings.ensure_dirs()
        self._recover()
        self._events = self._ctx.Queue()
        self._lifeline = self._ctx.Pipe(duplex=False)  # workers watch the read end for EOF (server gone)
        if self._ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()  # start importing PRELOAD now, not at the first job
        self._stop.clear()
        self._thread = threading.Thread(target=self._supervise, name="job-supervisor", daemon=True)
        self._thread.start()

    def _recover(self) -> None:
        """Fail the jobs this server ran when it stopped, and remove their staging folders."""
        failed = self.store.fail_interrupted_jobs("server restarted")
        if failed:
            logger.warning("marked %d interrupted job(s) failed: %s", len(failed), ", ".join(failed))
        for stale in self.staging_dir.iterdir():
            shutil.rmtree(stale, ignore_errors=True)

    def stop(self) -> None:
        """Stop the supervisor, kill running workers and mark their jobs failed."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        with self._lock:
            running = list(self._running.items())
            self._running.clear()
        for job_id, r in running:
            _kill(r.process)
            self._interrupted(job_id)
            shutil.rmtree(self.staging_dir / job_id, ignore_errors=True)
        if self._events is not None:
            self._events.close()
            self._events.cancel_join_thread()
            self._events = None
        if self._lifeline is not None:
            for end in self._lifeline:
                end.close()
            self._lifeline = None

    def _interrupted(self, job_id: str) -> None:
        """Record a job whose worker :meth:`stop` killed."""
        self._finish(job_id, "failed", "server stopped while the job was running",
                     error={"type": "about:blank", "title": "Job interrupted", "status": 500,
                            "detail": "server stopped while the job was running", "errors": []})

    def _finish(self, job_id: str, status: str, message: str, error: dict[str, Any] | None = None,
                files: list[str] | None = None, result_bytes: int | None = None) -> bool:
        """Record a job's end (only while this manager still holds it, when it holds jobs by lease)."""
        return self.store.finish_job(job_id, status, message, error=error, files=files, worker_id=self.worker_id,
                                     result_bytes=result_bytes)

    def _claim(self) -> Any:
        """The next job to run (fair share), now ``running``; None when none may start."""
        return self.store.claim_next_job(self.settings.max_running_jobs_per_token)

    def _tick(self) -> None:
        """Periodic work of the supervisor loop besides running jobs: retention."""
        if time.monotonic() >= self._next_maintenance:
            self._next_maintenance = time.monotonic() + self.settings.maintenance_interval_s
            self.maintain()

    def notify(self) -> None:
        """Wake the supervisor (a job was queued)."""
        self._wake.set()

    def cancel(self, job_id: str) -> None:
        """Kill the worker of a job already marked cancelled in the store (no-op when not running)."""
        with self._lock:
            r = self._running.pop(job_id, None)
        if r is not None:
            _kill(r.process)
            shutil.rmtree(self.staging_dir / job_id, ignore_errors=True)
            logger.info("job %s cancelled, worker %s killed", job_id, r.process.pid)

    def running_count(self) -> int:
        """Jobs with a live worker process."""
        with self._lock:
            return len(self._running)

    def running_ids(self) -> list[str]:
        """Ids of the jobs whose worker process is still computing (its outcome not yet received)."""
        with self._lock:
            return [job_id for job_id, r in self._running.items() if not r.final]

    # ------------------------------------------------------------------ supervisor
    def maintain(self) -> PurgeReport:
        """Apply the retention settings now (see :func:`apply_retention`)."""
        return apply_retention(self.store, self.settings, self.results)

    def _supervise(self) -> None:
        self._next_maintenance = time.monotonic()
        while not self._stop.is_set():
            try:
                self._tick()
                self._drain(timeout=0.1)
                self._reap()
                self._launch_queued()
            except Exception:
                logger.exception("job supervisor error")
                time.sleep(0.5)
            if not self._running_any():
                self._wake.wait(0.25)
                self._wake.clear()

    def _running_any(self) -> bool:
        with self._lock:
            return bool(self._running)

    def _launch_queued(self) -> None:
        while len(self._running) < self.settings.workers and not self._stop.is_set():
            job = self._claim()
            if job is None:
                return
            out = self.staging_dir / job.id
            shutil.rmtree(out, ignore_errors=True)
            process = self._process_of(job, out)
            if process is None:
                continue
            # not a daemon: a job may start its own process pool (failure sweeps, path search); it
            # still dies with the server (lifeline, parent-death signal) and is killed with its group
            try:
                proc = start_process(self._ctx, process[0], process[1], f"backbone-job-{job.id[:8]}", daemon=False)
            except (EOFError, ConnectionError) as exc:  # claimed but not started: never left 'running'
                self._finish(job.id, "failed", f"worker did not start: {exc}", error=error_document(exc))
                continue
            with self._lock:
                self._running[job.id] = _Running(proc, time.monotonic(),
                                                 extra={"timeout_s": job_timeout_s(job.kind, self.settings)})
            logger.info("job %s (%s) started in worker %s", job.id, job.kind, proc.pid)

    def _process_of(self, job: Any, out: Path) -> tuple[Any, tuple[Any, ...]] | None:
        """The function and arguments of ``job``'s process (:func:`backbone.api.job_processes.job_process`);
        None when its input is gone (the job is failed)."""
        from backbone.api.job_processes import job_process

        assert self._lifeline is not None
        try:
            return job_process(self.store, self.results, self.settings, job, out, self._events, self._lifeline[0],
                               self.extra_registry)
        except LookupError as exc:
            self._finish(job.id, "failed", str(exc), error={
                "type": "about:blank", "title": "Input missing", "status": 404, "detail": str(exc), "errors": []})
            return None

    def _drain(self, timeout: float) -> None:
        events = self._events
        if events is None:
            return
        block = True
        while True:
            try:
                msg = events.get(timeout=timeout) if block else events.get_nowait()
            except (queue_mod.Empty, OSError, EOFError, ValueError):
                return
            block = False
            self._handle(msg)

    def _handle(self, msg: tuple[Any, ...]) -> None:
        what, job_id = msg[0], msg[1]
        with self._lock:
            r = self._running.get(job_id)
        if r is None:  # cancelled meanwhile
            return
        if what == "progress":
            self.store.set_progress(job_id, msg[2], msg[3])
            return
        if what == "started":
            return
        if what == "usage":  # sent just before the job's outcome
            self.store.record_usage(job_id, cpu_s=float(msg[2]))
            return
        r.final = True
        try:
            self._record_outcome(job_id, what, msg)
        except Exception as exc:  # the store refuses writes: _reap records the failure once it takes them again
            reason = storage_failure(exc)
            if reason is None:
                raise
            r.final, r.extra["outcome"] = False, storage_document(reason)
            with contextlib.suppress(Exception):
                self.results.delete(job_id)
            shutil.rmtree(self.staging_dir / job_id, ignore_errors=True)
            raise

    def _record_outcome(self, job_id: str, what: str, msg: tuple[Any, ...]) -> None:
        if what == "imported":  # the scenario is written with the job's success, in one transaction
            from backbone.api.imports import record_import

            record_import(self.store, job_id, msg[2], self.worker_id, self._finish)
        elif what == "done":
            src = self.staging_dir / job_id
            files = listed_files([str(f) for f in msg[2]], src)
            try:
                src.mkdir(parents=True, exist_ok=True)
                stored_bytes = self.results.store(job_id, src)
            except OSError as exc:  # disk full, read-only, the object store refused: no result is half-stored
                shutil.rmtree(src, ignore_errors=True)
                logger.error("job %s: could not store results in %s: %s", job_id, self.results.describe(), exc)
                self._finish(job_id, "failed", f"could not store results: {_stored_reason(exc)}",
                             error=error_document(exc))
                return
            message = str(msg[3]) if len(msg) > 3 else "done"
            if not self._finish(job_id, "succeeded", message, files=files, result_bytes=stored_bytes):
                self.results.delete(job_id)  # cancelled at the last moment
        else:
            err = msg[2]
            self._finish(job_id, "failed", str(err.get("detail") or err.get("title"))[:2000], error=err)
            shutil.rmtree(self.staging_dir / job_id, ignore_errors=True)

    def _reap(self) -> None:
        now = time.monotonic()
        with self._lock:
            items = list(self._running.items())
        for job_id, r in items:
            if r.final:
                r.process.join(timeout=5)
                with self._lock:
                    self._running.pop(job_id, None)
                continue
            if not r.process.is_alive():
                self._drain(timeout=0.2)  # its last message may still be in the pipe
                _kill_group(r.process)  # pool processes the worker left behind
                if not r.final:
                    doc = r.extra.get("outcome") or death_document(
                        r.process.exitcode, self.settings.worker_memory_mb * 1024 * 1024, self.settings.worker_cpu_s)
                    self._finish(job_id, "failed", doc["detail"], error=doc)
                    shutil.rmtree(self.staging_dir / job_id, ignore_errors=True)
                with self._lock:
                    self._running.pop(job_id, None)
            elif now - r.started > r.extra.get("timeout_s", self.settings.job_timeout_s):
                _kill(r.process)
                detail = f"job exceeded the server's time limit of {r.extra.get('timeout_s'):g} s"
                self._finish(job_id, "failed", detail, error={
                    "type": "about:blank", "title": "Time limit", "status": 500, "detail": detail, "errors": []})
                shutil.rmtree(self.staging_dir / job_id, ignore_errors=True)
                with self._lock:
                    self._running.pop(job_id, None)


def _stored_reason(exc: OSError) -> str:
    """Why a result could not be stored, for the job's message (which any viewer reads): the errno's words, or the
    result store's own one-line reason; never a server path."""
    return exc.strerror or type(exc).__name__


def apply_retention(store: Store, settings: Settings, results: ResultStore | None = None) -> PurgeReport:
    """Free what the retention settings no longer keep: purge the store, then delete the purged
    jobs' results from ``results`` (default: the result store the settings name; the server does this every
    ``maintenance_interval_s``; ``backbone db purge`` does it once)."""
    day = 86_400.0
    results = results or open_result_store(settings.result_store, settings.data_dir / "results")
    report = store.purge(settings.deleted_retention_days * day, settings.job_retention_days * day,
                         settings.audit_retention_days * day, settings.max_versions_per_scenario)
    for job_id in report.job_ids:
        try:
            results.delete(job_id)
        except OSError as exc:  # the object store is away: the rows are gone, the files wait for the operator
            logger.error("retention: could not delete job %s's results from %s: %s", job_id, results.describe(),
                         exc)
    if report.any():
        logger.info("retention: freed %s", report.counts())
    return report


def _signal_group(proc: BaseProcess, sig: int) -> bool:
    """Send ``sig`` to the worker's process group (the worker leads it); False when there is none."""
    pid = proc.pid
    if pid is None:
        return False
    try:
        if os.getpgid(pid) != pid:  # not yet a group leader (just started): signal the worker only
            return False
        os.killpg(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _kill_group(proc: BaseProcess) -> None:
    """SIGKILL whatever is left of a finished worker's process group (its pool processes)."""
    pid = proc.pid
    if pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _kill(proc: BaseProcess, grace_s: float = 2.0) -> None:
    """SIGTERM to the worker and its processes, wait, then SIGKILL."""
    with contextlib.suppress(Exception):
        if proc.is_alive():
            if not _signal_group(proc, signal.SIGTERM):
                proc.terminate()
            proc.join(grace_s)
        if proc.is_alive() and not _signal_group(proc, signal.SIGKILL):
            proc.kill()
        proc.join(grace_s)
        _kill_group(proc)
