"""What a job's process runs, by kind: a planning task on its scenario version (:func:`~backbone.api.jobs.
worker_main`), an ``import`` of a stored upload (:func:`~backbone.api.imports.import_main`), or a ``map`` drawn
from a scenario version and optionally a succeeded job's result (:func:`map_main`).

``import`` and ``map`` are the server's own kinds: a client asks for them through ``Prefer: respond-async`` (or
``?async=true``) on ``POST``/``PUT /v1/scenarios`` and ``GET /v1/scenarios/{id}/map``, never through
``POST .../jobs``. Both run where jobs run (a server inline, or any ``backbone worker``), under the job limits and
:data:`~backbone.api.settings.Settings.document_timeout_s`, with the synchronous path's own functions.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backbone.api.documents import render_scenario_map
from backbone.api.input_policy import server_job_options
from backbone.api.job_limits import MAP_KIND
from backbone.api.jobs import (
    WorkerLimits,
    begin_job_process,
    error_document,
    process_cpu_s,
    worker_main,
)
from backbone.api.resource_errors import report_failure
from backbone.api.result_store import ResultStore
from backbone.api.settings import Settings
from backbone.api.store import IMPORT_KIND, GoneError, Store

if TYPE_CHECKING:
    from backbone.solver.tasks import Task

MAP_OPTIONS = ("color_by", "region", "center_lon", "size", "candidates")
"""The options of a map job passed on to :func:`~backbone.api.documents.render_scenario_map`."""


def job_process(store: Store, results: ResultStore, settings: Settings, job: Any, out: Path, events: Any,
                lifeline: Any, registry: Mapping[str, Task | str]) -> tuple[Any, tuple[Any, ...]]:
    """The function and arguments of ``job``'s process.

    Raises
    ------
    LookupError
        When its input is gone: the scenario version, an import's upload, or the result a map draws.
    """
    limits = WorkerLimits.from_settings(settings)
    if job.kind == IMPORT_KIND:
        from backbone.api.imports import import_main

        upload = store.import_input(job.id)
        return import_main, (job.id, upload.content, upload.filename, settings, events, lifeline, limits)
    version = store.get_version(job.scenario_id, job.scenario_version, include_deleted=True)
    if job.kind == MAP_KIND:
        options = job.options or {}
        result = None
        if options.get("job"):
            drawn = store.get_job(str(options["job"]))
            opened = results.open(drawn.id, f"{drawn.kind}.json")
            if opened is None:
                raise GoneError(f"job {drawn.id} has no result file")
            result = b"".join(opened.chunks)
        return map_main, (job.id, version.content, result, str(options.get("format", "png")),
                          {k: options[k] for k in MAP_OPTIONS if k in options}, str(out), events, lifeline, limits)
    from backbone.api.store import decode_document

    return worker_main, (job.id, job.kind, decode_document(version.content),
                         server_job_options(job.kind, job.options or {}, settings.dask_scheduler,
                                            settings.dask_timeout_s), str(out), events, registry, lifeline, limits)


def map_main(job_id: str, content: bytes, result: bytes | None, map_format: str, options: dict[str, Any],
             out_dir: str, events: Any, lifeline: Any = None, limits: WorkerLimits | None = None) -> None:
    """Entry point of a map job's process: draw the stored scenario version (with ``result``, a succeeded job's
    result JSON, when given) into ``<out_dir>/map.<format>`` and report it as the job's one file."""
    begin_job_process(lifeline, limits)
    events.put(("started", job_id))
    try:
        events.put(("progress", job_id, 0.1, "drawing the map"))
        with tempfile.TemporaryDirectory(prefix="backbone-map-") as scratch:
            result_file = None
            if result is not None:
                result_file = Path(scratch) / "result.json"
                result_file.write_bytes(result)
            data = render_scenario_map(content, None if result_file is None else str(result_file), map_format,
                                       options)
        name = f"map.{map_format}"
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / name).write_bytes(data)
        events.put(("usage", job_id, process_cpu_s()))
        events.put(("done", job_id, [name], f"drew {name} ({len(data)} bytes)"))
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            events.put(("usage", job_id, process_cpu_s()))
        report_failure(job_id, exc, events, limits.memory_bytes if limits is not None else 0, error_document)
    finally:
        events.close()
        events.join_thread()
