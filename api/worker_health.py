"""Health and metrics of a ``backbone worker``: ``/livez``, ``/readyz`` and ``/metrics`` on an opt-in loopback port.

``backbone worker --health-port 9101`` serves, from a thread of the worker process (the standard library's
``ThreadingHTTPServer``: no web framework in the worker):

* ``GET /livez``: 200 while the worker's lease thread is alive and has run its loop within the last
  ``job_lease_s`` seconds (a wedged or dead heartbeat thread lets leases expire, so the container should restart);
  503 otherwise. It does not touch the database: a database outage is not a reason to restart a worker.
* ``GET /readyz``: 200 when the database answers, the results directory is writable and the worker is not
  draining; 503 with the reasons otherwise.
* ``GET /metrics``: Prometheus text (``prometheus_client``, one registry per worker): jobs finished by this worker
  by kind and final status (counter), jobs in flight (gauge), the queue's jobs by status and the oldest lease's age
  (gauges read from the database at scrape time, two cheap aggregate queries).

Every answer is JSON (health) or text (metrics); an unknown path is a 404. Bound to ``127.0.0.1`` unless
``--health-host`` says otherwise: the port has no authentication.
"""

from __future__ import annotations

import json
import logging
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from backbone.errors import BackboneError

logger = logging.getLogger(__name__)


class HealthPortError(BackboneError):
    """The health address cannot be bound (port in use, not an address of this machine): exit code 2."""

    exit_code = 2
    http_status = 422
    title = "Health port unusable"

FINAL_STATUSES = ("succeeded", "failed", "cancelled")
"""The label values of ``backbone_worker_jobs_total{status}``: how a job this worker ran ended."""


class QueueView(Protocol):
    """What the health endpoints read from the database (a :class:`~backbone.api.store.Store` is one)."""

    def count_jobs_by_status(self) -> dict[str, int]: ...

    def oldest_lease_age_s(self) -> float: ...


class WorkerView(Protocol):
    """What the health endpoints read from the worker (a :class:`~backbone.api.worker.QueueWorker` is one)."""

    @property
    def results_dir(self) -> Path: ...

    def running_count(self) -> int: ...

    def heartbeat_age_s(self) -> float | None: ...

    def heartbeat_alive(self) -> bool: ...

    def draining(self) -> bool: ...


@dataclass(frozen=True)
class Probe:
    """One health answer: ``ok`` and the reasons it is not."""

    ok: bool
    problems: list[str]

    def document(self) -> dict[str, Any]:
        """The JSON body: ``{"status": "ok"|"fail", "problems": [...]}``."""
        return {"status": "ok" if self.ok else "fail", "problems": self.problems}


class WorkerMetrics:
    """The worker's Prometheus registry. :meth:`job_finished` is called by the worker; :meth:`render` at scrape."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge

        self.registry = CollectorRegistry(auto_describe=True)
        self.jobs = Counter("backbone_worker_jobs", "Jobs this worker ran, by kind and final status "
                            "(succeeded, failed, cancelled).", ["kind", "status"], registry=self.registry)
        self.in_flight = Gauge("backbone_worker_jobs_in_flight", "Jobs this worker runs now (one process each).",
                               registry=self.registry)
        self.queue = Gauge("backbone_queue_jobs", "Jobs in the shared queue by status (read from the database at "
                           "scrape time).", ["status"], registry=self.registry)
        self.lease_age = Gauge("backbone_queue_oldest_lease_age_seconds", "Seconds since the least recently renewed "
                               "lease of a running job was renewed, over all workers (0 when no job is leased).",
                               registry=self.registry)
        self.up = Gauge("backbone_queue_database_up", "1 when the database answered this scrape, else 0.",
                        registry=self.registry)

    def job_finished(self, kind: str, status: str) -> None:
        """Count one job of ``kind`` that ended ``status`` (one of :data:`FINAL_STATUSES`)."""
        if status not in FINAL_STATUSES:
            raise ValueError(f"status {status!r} is not one of {', '.join(FINAL_STATUSES)}")
        self.jobs.labels(kind, status).inc()

    def render(self, queue: QueueView, worker: WorkerView) -> str:
        """The Prometheus text exposition, the gauges read now (the queue's left at their last value, and
        ``backbone_queue_database_up`` 0, when the database does not answer)."""
        from prometheus_client import generate_latest

        self.in_flight.set(worker.running_count())
        try:
            counts, age_s = queue.count_jobs_by_status(), queue.oldest_lease_age_s()
        except Exception as exc:  # the database is away: say so, keep serving the worker's own numbers
            logger.warning("metrics: database unavailable (%s)", str(exc).splitlines()[0][:200] if str(exc) else exc)
            self.up.set(0)
        else:
            for status, n in counts.items():
                self.queue.labels(status).set(n)
            self.lease_age.set(age_s)
            self.up.set(1)
        return generate_latest(self.registry).decode("utf-8")


def liveness(worker: WorkerView, lease_s: float) -> Probe:
    """Alive: the lease thread runs and last went round its loop less than ``lease_s`` seconds ago."""
    if not worker.heartbeat_alive():
        return Probe(False, ["the heartbeat thread is not running"])
    age_s = worker.heartbeat_age_s()
    if age_s is None or age_s > lease_s:
        shown = "never" if age_s is None else f"{age_s:.1f} s ago"
        return Probe(False, [f"the last heartbeat was {shown} (the lease is {lease_s:g} s)"])
    return Probe(True, [])


def readiness(queue: QueueView, worker: WorkerView) -> Probe:
    """Ready: the database answers, the results directory is writable, and the worker is not draining."""
    problems = []
    if worker.draining():
        problems.append("draining: the worker claims no more jobs")
    try:
        queue.count_jobs_by_status()
    except Exception as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        problems.append(f"the database cannot be reached ({reason})")
    try:
        with tempfile.TemporaryFile(dir=worker.results_dir, prefix=".write-probe-"):
            pass
    except OSError as exc:
        problems.append(f"the results directory {worker.results_dir} is not writable ({exc.strerror or exc})")
    return Probe(not problems, problems)


def _handler(routes: dict[str, Callable[[], tuple[int, str, str]]]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "backbone-worker"

        def do_GET(self) -> None:
            route = routes.get(self.path.split("?", 1)[0])
            if route is None:
                code, ctype, body = 404, "application/json", json.dumps({"status": "fail",
                                                                         "problems": [f"no route {self.path}"]})
            else:
                try:
                    code, ctype, body = route()
                except Exception as exc:  # never a traceback on the wire
                    logger.exception("health endpoint %s failed", self.path)
                    code, ctype, body = 500, "application/json", json.dumps({"status": "fail",
                                                                             "problems": [type(exc).__name__]})
            data = body.encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("health %s", format % args)

    return Handler


class HealthServer:
    """``/livez``, ``/readyz`` and ``/metrics`` of one worker on ``host:port``, served from a daemon thread.

    Parameters
    ----------
    queue, worker
        The database and the worker the answers describe.
    metrics
        The worker's registry (the one its :meth:`WorkerMetrics.job_finished` calls count into).
    lease_s
        The lease (``job_lease_s``): a heartbeat older than this is not alive.
    host, port
        Where to listen (port 0: any free port, see :attr:`port`).

    Raises
    ------
    HealthPortError
        When the address cannot be bound (in use, not a local address), naming it and the reason.
    """

    def __init__(self, queue: QueueView, worker: WorkerView, metrics: WorkerMetrics, lease_s: float,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        def probe(check: Callable[[], Probe]) -> Callable[[], tuple[int, str, str]]:
            def answer() -> tuple[int, str, str]:
                result = check()
                return (200 if result.ok else 503), "application/json", json.dumps(result.document())
            return answer

        routes = {"/livez": probe(lambda: liveness(worker, lease_s)),
                  "/readyz": probe(lambda: readiness(queue, worker)),
                  "/metrics": lambda: (200, "text/plain; version=0.0.4; charset=utf-8", metrics.render(queue, worker))}
        try:
            self._server = ThreadingHTTPServer((host, port), _handler(routes))
        except OSError as exc:
            raise HealthPortError(f"--health-port: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="worker-health", daemon=True)

    @property
    def port(self) -> int:
        """The port listened on."""
        return int(self._server.server_address[1])

    def start(self) -> None:
        """Serve from a daemon thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()


def monotonic_age_s(since: float | None) -> float | None:
    """Seconds since the ``time.monotonic()`` reading ``since`` (None stays None)."""
    return None if since is None else time.monotonic() - since
