"""``backbone worker``: claim planning jobs from the shared queue and run them (docs/deploy.md).

The worker reads the same ``BACKBONE_*`` settings as ``backbone serve`` (database, job limits, lease and
heartbeat); the options below override them. Servers enqueue jobs for workers when ``BACKBONE_JOB_EXECUTION=queue``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from backbone.api.cli.common import err_console, handle_errors
from backbone.api.cli.server_cmds import load_settings

if TYPE_CHECKING:
    from backbone.api.settings import Settings


def register(app: typer.Typer) -> None:
    """Add ``worker`` to ``app``."""
    app.command("worker")(worker)


def check_worker_storage(settings: Settings, results_dir: Path) -> None:
    """Check that the worker can write the results folder (its staging folders, with an object store) and the
    object store ``BACKBONE_RESULT_STORE`` names, and reach the database (migrating it, as a server does, when
    ``BACKBONE_RUN_MIGRATIONS`` is on).

    Raises
    ------
    backbone.api.cli.server_cmds.StorageUnusableError
        One sentence naming the folder or the database (password hidden) and the reason.
    """
    import tempfile

    from sqlalchemy.engine import make_url

    from backbone.api.cli.server_cmds import StorageUnusableError, check_result_store
    from backbone.api.store import Store

    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=results_dir, prefix=".write-probe-"):
            pass
    except OSError as exc:
        raise StorageUnusableError(f"the results directory {results_dir} is not writable ({exc.strerror or exc}); "
                                   "point --results-dir at the servers' <data dir>/results") from None
    check_result_store(settings)
    url = settings.resolved_database_url()
    try:
        store = Store(url)
        try:
            if settings.run_migrations:
                store.upgrade()
            else:
                store.check_schema()  # release N needs schema N (docs/deploy.md "Rolling upgrades")
            store.count_jobs_by_status()
        finally:
            store.dispose()
    except Exception as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:200]
        shown = make_url(url).render_as_string(hide_password=True)
        raise StorageUnusableError(f"the database {shown} cannot be used ({reason})") from None


@handle_errors
def worker(
    concurrency: Annotated[int | None, typer.Option(help="Jobs run at the same time, one process each (default "
                                                         "BACKBONE_WORKERS or 2).", min=1, max=64)] = None,
    database_url: Annotated[str | None, typer.Option(help="SQLAlchemy URL of the shared database (default "
                                                          "BACKBONE_DATABASE_URL, as for serve).")] = None,
    results_dir: Annotated[Path | None, typer.Option(help="Shared folder the servers read results from (default "
                                                          "<BACKBONE_DATA_DIR>/results); with BACKBONE_RESULT_STORE="
                                                          "s3://... only the worker's staging folders.")] = None,
    lease_s: Annotated[float | None, typer.Option(help="Seconds a job stays claimed without a heartbeat (default "
                                                       "BACKBONE_JOB_LEASE_S or 30).", min=1, max=3600)] = None,
    heartbeat_s: Annotated[float | None, typer.Option(help="Seconds between heartbeats (default "
                                                           "BACKBONE_JOB_HEARTBEAT_S or 5; below the lease).",
                                                      min=0.1, max=600)] = None,
    drain_s: Annotated[float, typer.Option(help="On SIGTERM, seconds running jobs may take to finish before they "
                                                "are stopped and handed back to the queue.", min=0)] = 60.0,
    health_port: Annotated[int | None, typer.Option(help="Serve /livez, /readyz and /metrics (Prometheus) on this "
                                                        "port (0: any free port; default: none).", min=0,
                                                   max=65535)] = None,
    health_host: Annotated[str, typer.Option(help="Address of the health port (no authentication: keep it on "
                                                  "loopback or a private network).")] = "127.0.0.1",
    log_level: Annotated[str, typer.Option(help="Log level (debug, info, warning).")] = "info",
) -> None:
    """Claim planning jobs from the shared queue and run them until SIGTERM (then drain).

    Runs each job in its own process under the server's job limits (BACKBONE_JOB_TIMEOUT_S, _WORKER_MEMORY_MB,
    _WORKER_CPU_S, _JOB_PROCESSES), renews its lease every heartbeat, stops a job cancelled through any server,
    and writes results where the servers read them. Servers enqueue for workers when BACKBONE_JOB_EXECUTION=queue.
    """
    import logging

    from backbone.api.worker import run_worker

    settings = load_settings(workers=concurrency, database_url=database_url, job_lease_s=lease_s,
                             job_heartbeat_s=heartbeat_s)
    results = results_dir or settings.data_dir / "results"
    check_worker_storage(settings, results)
    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    shown = settings.result_store or str(results)
    err_console.print(f"backbone worker: up to {settings.workers} job(s) at once, results in {shown}",
                      highlight=False)
    handed_back = run_worker(settings, results, drain_s=drain_s, health_host=health_host, health_port=health_port)
    if handed_back:
        err_console.print(f"handed back {len(handed_back)} job(s) to the queue: {', '.join(handed_back)}",
                          highlight=False)
