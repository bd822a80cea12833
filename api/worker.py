"""The job queue in the database, and the processes around it: ``backbone worker`` and a queue-mode server.

With ``BACKBONE_JOB_EXECUTION=queue`` a server only enqueues jobs (:class:`QueueDispatcher`); any number of
``backbone worker`` processes on any machine that reaches the database and the results directory claim them
(:class:`QueueWorker`, started by :func:`run_worker`).

A worker claims a job with a *lease* (:meth:`~backbone.api.store.JobRepository.claim_next_job` with a worker id:
the fair share, quotas and caps are the server's own claim rules) and runs it exactly as a server runs a job
inline: the same :class:`~backbone.api.jobs.JobManager` machinery, one child process per job forked from the
preloaded fork server, under the same memory, CPU and wall-clock limits, with the job's processes in one process
group. Every ``job_heartbeat_s`` it renews its leases; every :data:`CANCEL_POLL_S` it asks whether any of its jobs
was cancelled (the cancel may come through any server) and stops that job's process tree. When a worker is killed
(``kill -9``, a lost machine) its job processes die with it (parent-death signal and the lifeline pipe, as under a
server), its leases run out, and the next worker or server to look (:meth:`reclaim_expired_jobs`) puts each job
back in the queue once when its kind is idempotent, or fails it with the reason "worker lost".

SIGTERM drains a worker: it claims nothing more, lets its running jobs finish for up to ``drain_s`` seconds, then
stops what is left and hands those jobs back to the queue (they do not count as an attempt).

Why plain ``SELECT ... FOR UPDATE SKIP LOCKED`` leasing rather than Procrastinate or PgQueuer: the job table,
its fair-share order and its caps already exist and the API reads them; a queue library brings its own tables and
its own order (FIFO per queue, priorities), so the fair share would have to be rebuilt on top of it or the state
kept twice. Both libraries are PostgreSQL-only, and SQLite stays the zero-set-up default here. The lease is four
columns and three conditional UPDATEs (claim, heartbeat, reclaim); docs/deploy.md.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backbone.api.job_limits import SERVER_KINDS
from backbone.api.jobs import JobManager
from backbone.api.settings import Settings
from backbone.api.store import IMPORT_KIND, Store
from backbone.api.worker_health import HealthServer, WorkerMetrics, monotonic_age_s

if TYPE_CHECKING:
    from backbone.solver.tasks import Task

logger = logging.getLogger(__name__)

CANCEL_POLL_S = 1.0
"""Seconds between a worker's checks for cancelled jobs (a cancel stops the job's processes within about this,
plus the 2 s grace of SIGTERM before SIGKILL)."""

HANDED_BACK = "handed back: the worker stopped before the job finished"
"""The message of a job a draining worker returns to the queue."""


def idempotent_kinds(registry: Mapping[str, Task | str]) -> frozenset[str]:
    """The kinds of ``registry`` that may run again after their worker was lost (``Task.idempotent``; an extra kind
    given as ``"module:function"`` when its function says ``idempotent = True``). Unloadable kinds are not. An
    ``import`` is (it writes its scenario in the transaction that marks it succeeded, so a rerun never writes
    twice), and so is a ``map`` (:data:`~backbone.api.job_limits.SERVER_KINDS`)."""
    from backbone.solver.tasks.base import load_task

    kinds = set(SERVER_KINDS)
    for kind, task in registry.items():
        try:
            loaded = load_task(kind, task) if isinstance(task, str) else task
        except (ImportError, AttributeError, ValueError):
            continue
        if loaded.idempotent:
            kinds.add(kind)
    return frozenset(kinds)


def new_worker_id() -> str:
    """``host:pid:random``, unique across machines and restarts (it names the lease holder in the job rows)."""
    return f"{socket.gethostname()[:120]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class QueueWorker(JobManager):
    """Claim jobs from the shared queue with a lease and run them (the process behind ``backbone worker``).

    Parameters
    ----------
    store
        The shared database.
    settings
        ``workers`` is the worker's concurrency; ``job_lease_s``, ``job_heartbeat_s``, the job limits
        (``job_timeout_s``, ``worker_memory_mb``, ``worker_cpu_s``, ``job_processes``) and
        ``max_running_jobs_per_token`` as on a server.
    results_dir
        Where finished jobs' folders go (``<results_dir>/<job id>``): the folder the servers read, the server's
        ``<data dir>/results`` on shared storage. Jobs run into ``<results_dir>/.staging/<worker>/<job id>`` (same
        file system, so the final rename is atomic). With ``BACKBONE_RESULT_STORE=s3://...`` finished folders are
        uploaded to the object store instead, and this folder only holds the staging folders.
    registry
        Extra kinds (tests); the shipped kinds come from :data:`backbone.solver.tasks.registry.TASKS`.
    worker_id
        The lease holder's name (default :func:`new_worker_id`).
    """

    def __init__(self, store: Store, settings: Settings, results_dir: Path,
                 registry: Mapping[str, Task | str] | None = None, worker_id: str | None = None) -> None:
        self._results_dir = Path(results_dir)
        super().__init__(store, settings, registry)
        self.holder: str = worker_id or new_worker_id()
        """This worker's name in the jobs it holds (also :attr:`worker_id`)."""
        self.worker_id = self.holder
        self._staging_dir = staging_dir_of(self._results_dir, self.worker_id)
        self._idempotent = idempotent_kinds(self.registry())
        self._draining = threading.Event()
        self._watch: threading.Thread | None = None
        self._last_beat: float | None = None
        self._kinds: dict[str, str] = {}
        self.metrics = WorkerMetrics()
        """This worker's Prometheus registry (served by ``backbone worker --health-port``)."""

    @property
    def results_dir(self) -> Path:
        return self._results_dir

    @property
    def staging_dir(self) -> Path:
        return self._staging_dir

    def _recover(self) -> None:
        """A worker owns no job at start (its predecessor's jobs come back through their leases): only make its
        folders."""
        self._staging_dir.mkdir(parents=True, exist_ok=True)
        for stale in self._staging_dir.iterdir():
            shutil.rmtree(stale, ignore_errors=True)

    def _claim(self) -> Any:
        if self._draining.is_set():
            return None
        job = self.store.claim_next_job(self.settings.max_running_jobs_per_token, worker_id=self.worker_id,
                                        lease_s=self.settings.job_lease_s)
        if job is not None:
            self._kinds[job.id] = job.kind
        return job

    def _finish(self, job_id: str, status: str, message: str, error: dict[str, Any] | None = None,
                files: list[str] | None = None, result_bytes: int | None = None) -> bool:
        recorded = super()._finish(job_id, status, message, error=error, files=files, result_bytes=result_bytes)
        if recorded:
            self.metrics.job_finished(self._kinds.pop(job_id, "unknown"), status)
        return recorded

    def heartbeat_age_s(self) -> float | None:
        """Seconds since the lease thread last went round its loop (None before its first round)."""
        return monotonic_age_s(self._last_beat)

    def heartbeat_alive(self) -> bool:
        """The lease thread runs."""
        return self._watch is not None and self._watch.is_alive()

    def draining(self) -> bool:
        """SIGTERM came: the worker claims nothing more."""
        return self._draining.is_set()

    def start(self) -> None:
        super().start()
        self._watch = threading.Thread(target=self._watch_leases, name="job-leases", daemon=True)
        self._watch.start()

    def stop(self) -> None:
        super().stop()
        if self._watch is not None:
            self._watch.join(timeout=10)

    def _tick(self) -> None:
        """Nothing besides running jobs: the lease thread renews, polls and reclaims; servers apply retention."""

    def _watch_leases(self) -> None:
        """Every :data:`CANCEL_POLL_S` (at most ``job_heartbeat_s``) see which jobs this worker may still run and
        stop the others (cancelled, or lost); every ``job_heartbeat_s`` renew the leases (every job claimed, also
        one whose process is still starting) and reclaim the jobs of lost workers. A thread of its own, so a slow
        start of a job process never lets a lease run out."""
        poll_s = min(CANCEL_POLL_S, self.settings.job_heartbeat_s)
        next_heartbeat = 0.0
        self._last_beat = time.monotonic()
        while not self._stop.wait(poll_s):
            self._last_beat = time.monotonic()
            try:
                claimed = set(self.running_ids())  # before the query, so a job claimed meanwhile is not stopped
                if time.monotonic() >= next_heartbeat:
                    next_heartbeat = time.monotonic() + self.settings.job_heartbeat_s
                    held = set(self.store.renew_leases(self.holder, self.settings.job_lease_s))
                    reclaim(self.store, self._idempotent, self.results_dir)
                else:
                    held = set(self.store.held_jobs(self.holder))
                for job_id in (claimed - held) & set(self.running_ids()):
                    logger.info("job %s was cancelled or is no longer this worker's: stopping its processes", job_id)
                    self.cancel(job_id)
                    kind = self._kinds.pop(job_id, "unknown")
                    if self.store.get_job(job_id).status == "cancelled":
                        self.metrics.job_finished(kind, "cancelled")
            except Exception:  # the database is away: retry at the next poll, the lease has some margin
                logger.exception("lease heartbeat failed")

    def _record_outcome(self, job_id: str, what: str, msg: tuple[Any, ...]) -> None:
        # a worker whose lease ran out (it was cut off from the database) must not replace the result of the
        # worker that took the job over
        if not self.store.heartbeat(job_id, self.holder, self.settings.job_lease_s).held:
            logger.warning("job %s: lease lost or job cancelled before its result was stored; discarded", job_id)
            shutil.rmtree(self.staging_dir / job_id, ignore_errors=True)
            return
        super()._record_outcome(job_id, what, msg)
        if what == "imported" and self.store.get_job(job_id).status == "succeeded":  # written with its job
            self.metrics.job_finished(self._kinds.pop(job_id, IMPORT_KIND), "succeeded")

    def _interrupted(self, job_id: str) -> None:
        """A job still running when the worker stops goes back to the queue (not counted as an attempt)."""
        self._kinds.pop(job_id, None)
        if self.store.release_job(job_id, self.holder, HANDED_BACK):
            logger.warning("job %s handed back to the queue", job_id)

    def drain(self, timeout_s: float) -> list[str]:
        """Claim nothing more; wait up to ``timeout_s`` for the running jobs to finish, then :meth:`stop` (which
        hands back what is left). Returns the ids of the jobs handed back."""
        self._draining.set()
        deadline = time.monotonic() + timeout_s
        while self.running_count() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = self.running_ids()
        self.stop()
        return left


class QueueDispatcher(JobManager):
    """What a server in queue mode runs instead of a job supervisor: it starts no job (workers do), and every
    ``job_heartbeat_s`` reclaims the jobs of lost workers; it applies the retention settings as a server does."""

    def start(self) -> None:
        self.settings.ensure_dirs()
        self._idempotent = idempotent_kinds(self.registry())
        self._next_reclaim = 0.0
        self._stop.clear()
        self._thread = threading.Thread(target=self._supervise, name="job-dispatcher", daemon=True)
        self._thread.start()

    def _claim(self) -> Any:
        return None

    def _tick(self) -> None:
        super()._tick()
        if time.monotonic() >= self._next_reclaim:
            self._next_reclaim = time.monotonic() + self.settings.job_heartbeat_s
            reclaim(self.store, self._idempotent, self.results_dir)


def staging_dir_of(results_dir: Path, worker_id: str) -> Path:
    """The folder a worker runs its jobs into: ``<results_dir>/.staging/<worker id, made a safe file name>``."""
    return Path(results_dir) / ".staging" / re.sub(r"[^A-Za-z0-9._-]", "_", worker_id)


def reclaim(store: Store, idempotent: frozenset[str], results_dir: Path | None = None) -> list[Path]:
    """Reclaim the jobs whose lease expired, log what happened to them, and remove the staging folders under
    ``results_dir`` of the workers they belonged to that now hold no running job (their leases all expired: the
    worker is gone). Returns the folders removed."""
    report = store.reclaim_expired_jobs(idempotent)
    if report.requeued:
        logger.warning("worker lost: requeued %s", ", ".join(report.requeued))
    if report.failed:
        logger.warning("worker lost: failed %s", ", ".join(report.failed))
    if results_dir is None or not report.workers:
        return []
    removed = []
    for lost in sorted(set(report.workers) - store.workers_holding_leases(report.workers)):
        folder = staging_dir_of(results_dir, lost)
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            logger.info("worker %s lost: removed its staging folder %s", lost, folder)
            removed.append(folder)
    return removed


def run_worker(settings: Settings, results_dir: Path | None = None, drain_s: float = 60.0,
               registry: Mapping[str, Task | str] | None = None, worker_id: str | None = None,
               stop: threading.Event | None = None, health_host: str = "127.0.0.1",
               health_port: int | None = None) -> list[str]:
    """Run a queue worker until SIGTERM or SIGINT (or ``stop`` is set), then drain it.

    Parameters
    ----------
    settings
        Database, concurrency (``workers``), lease and heartbeat, job limits.
    results_dir
        Shared results folder (default ``<data dir>/results``).
    drain_s
        Seconds running jobs may take to finish after SIGTERM before they are stopped and handed back.
    registry, worker_id
        As for :class:`QueueWorker`.
    stop
        Set it to stop the worker from another thread (signals set it too, when this runs in the main thread).
    health_host, health_port
        Serve ``/livez``, ``/readyz`` and ``/metrics`` there (:class:`~backbone.api.worker_health.HealthServer`);
        None: no port.

    Raises
    ------
    backbone.api.worker_health.HealthPortError
        When the health port cannot be bound.

    Returns
    -------
    list[str]
        The ids of the jobs handed back to the queue when the worker stopped.
    """
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    store = Store(settings.resolved_database_url(), token_max_lifetime_days=settings.token_max_lifetime_days)
    worker = QueueWorker(store, settings, results_dir or settings.data_dir / "results", registry, worker_id)
    health = None
    try:
        worker.start()
        if health_port is not None:
            health = HealthServer(store, worker, worker.metrics, settings.job_lease_s, health_host, health_port)
            health.start()
            logger.info("worker %s: health and metrics on http://%s:%d/", worker.worker_id, health_host, health.port)
        logger.info("worker %s: up to %d job(s) at once, results in %s", worker.worker_id, settings.workers,
                    worker.results.describe())
        while not stop.wait(0.5):
            pass
        logger.info("worker %s draining (up to %g s)", worker.worker_id, drain_s)
        return worker.drain(drain_s)
    finally:
        if health is not None:
            health.stop()
        worker.stop()
        store.dispose()
