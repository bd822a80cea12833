"""The ``roadmap`` planning task: a multi-period build plan (``backbone roadmap``, API kind ``roadmap``).

Options :class:`~backbone.solver.roadmap.options.RoadmapOptions` (beside the algorithm that reads them, as the
``te``, ``place`` and ``failures`` options are; importable from here), the rolling horizon
:func:`backbone.solver.roadmap.rolling.plan_roadmap`, the independent check :func:`backbone.solver.checks.roadmap.check_roadmap`
(``verify``) and the files :func:`backbone.solver.roadmap.output.write_roadmap` writes: ``periods/<period>/scenario/``,
the CSV companions of ``roadmap.json``, the timeline, the maps per year and ``report.html``; the planning service
adds ``roadmap.json`` (the summary).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.roadmap.options import RoadmapOptions
from backbone.solver.roadmap.rolling import RoadmapResult, plan_roadmap
from backbone.solver.roadmap.summary import RoadmapSummary
from backbone.solver.tasks.base import TaskResult

__all__ = ["RoadmapOptions", "RoadmapTaskResult", "load_roadmap_file", "run_roadmap_task"]


@dataclass(kw_only=True)
class RoadmapTaskResult(TaskResult[RoadmapSummary]):
    """The ``roadmap`` task's outcome: the JSON summary, the files, and the :class:`RoadmapResult` (periods,
    builds, the budgets' ledger and each period's network)."""

    roadmap: RoadmapResult


def run_roadmap_task(net: Network, opts: RoadmapOptions, out_dir: Path | None,
                     progress: ProgressFn) -> RoadmapTaskResult:
    """Plan the roadmap and, with ``out_dir``, write ``periods/<period>/scenario/``, ``roadmap.json``'s
    companions (CSVs), the timeline, the maps per year and ``report.html``."""
    from backbone.solver.roadmap.output import write_roadmap

    result = plan_roadmap(net, opts, lambda f, m: progress(0.85 * f, m))
    summary = result.typed_summary()
    files: list[str] = []
    if opts.verify:  # the checker reads what roadmap.json holds: the builds and each period's survivability
        from backbone.solver.checks.roadmap import check_roadmap

        progress(0.86, "verifying the roadmap independently")
        report = check_roadmap(net, result.options, summary, result.networks,  # lead times resolved
                               progress=lambda f, m: progress(0.86 + 0.08 * f, f"verify: {m}"))
        summary.verification = report.record()
    if out_dir is not None:
        files = write_roadmap(net, result, summary, out_dir, lambda f, m: progress(0.94 + 0.06 * f, m))
    progress(1.0, "done")
    return RoadmapTaskResult("roadmap", summary, files, roadmap=result)


def load_roadmap_file(path: str | Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a YAML roadmap file into roadmap options (``plan_file``/``plan_text`` recorded), ``overrides`` over
    it: :func:`backbone.solver.tasks.options_file.load_options_file` for kind ``roadmap``.

    Raises
    ------
    ValidationError
        When the file is missing, not YAML, not a mapping, or names unknown or bad options (each
        problem names the file, the line and the option).
    """
    from backbone.solver.tasks.options_file import load_options_file

    return load_options_file(path, "roadmap", overrides)
