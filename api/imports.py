"""Scenario uploads run as jobs (``POST /v1/scenarios`` or ``PUT /v1/scenarios/{id}`` with ``Prefer:
respond-async`` or ``?async=true``): the process that parses an upload, and the record of what it wrote.

Whoever claims an ``import`` job (a server running jobs inline, or any ``backbone worker``) runs
:func:`import_main` in a job process under the job limits (memory, CPU time, process group, parent-death
signal) and :data:`~backbone.api.settings.Settings.document_timeout_s`; it calls the synchronous path's own
:func:`~backbone.api.documents.parse_scenario` with the same caps (sites, links, demands, document bytes), so an
upload is refused with the same problems whichever way it came. The parsed, encoded document goes back to the
job's supervisor, which writes it with the job's success in one transaction
(:meth:`~backbone.api.store.imports.ImportRepository.finish_import`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from backbone.api.documents import ParsedScenario, parse_scenario
from backbone.api.jobs import WorkerLimits, begin_job_process, error_document, process_cpu_s
from backbone.api.resource_errors import report_failure
from backbone.api.settings import Settings
from backbone.api.store import Store

logger = logging.getLogger(__name__)


def import_main(job_id: str, data: bytes, filename: str | None, settings: Settings, events: Any,
                lifeline: Any = None, limits: WorkerLimits | None = None) -> None:
    """Entry point of an import job's process: tie it to its supervisor, bound it, parse and check the upload,
    send back ``("imported", job_id, ParsedScenario)`` or the problem document of its refusal."""
    begin_job_process(lifeline, limits)
    events.put(("started", job_id))
    try:
        events.put(("progress", job_id, 0.1, "parsing the upload"))
        parsed = parse_scenario(data, filename, settings)
        events.put(("usage", job_id, process_cpu_s()))
        events.put(("imported", job_id, parsed))
    except BaseException as exc:  # report every failure (a ValidationError lists every problem)
        with contextlib.suppress(BaseException):
            events.put(("usage", job_id, process_cpu_s()))
        report_failure(job_id, exc, events, limits.memory_bytes if limits is not None else 0, error_document)
    finally:
        events.close()
        events.join_thread()


def record_import(store: Store, job_id: str, parsed: ParsedScenario, worker_id: str | None,
                  finish: Callable[..., bool]) -> bool:
    """Write what import ``job_id`` parsed and mark it succeeded (only while ``worker_id`` holds it, when given);
    fail it with 409 through ``finish`` when its scenario can no longer take the version. Returns whether the
    scenario was written."""
    outcome = store.finish_import(job_id, parsed.document, parsed.counts, parsed.source_format, worker_id)
    if outcome.recorded:
        logger.info("job %s imported scenario %s version %s", job_id, outcome.scenario_id, outcome.version)
        return True
    if outcome.conflict is not None:
        finish(job_id, "failed", outcome.conflict, error={"type": "about:blank", "title": "Conflict", "status": 409,
                                                          "detail": outcome.conflict, "errors": []})
    return False
