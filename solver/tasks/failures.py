"""The ``failures`` planning task: sweep failure scenarios, write ``failures_scenarios.csv`` (worst first) and
``failures_links.csv`` (per-link worst scenario); options :class:`~backbone.solver.failures.FailureOptions`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from backbone.artifacts import ArtifactWriter
from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.failures import FailureOptions, SweepResult, sweep
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.summaries import FailuresSummary, Summary


@dataclass(kw_only=True)
class FailuresTaskResult(TaskResult):
    """The ``failures`` task's outcome: the JSON summary, the files, and the :class:`SweepResult` (every
    scenario's record and the intact baseline)."""

    summary_model: ClassVar[type[Summary]] = FailuresSummary

    sweep: SweepResult


def run_failures_task(net: Network, opts: FailureOptions, out_dir: Path | None,
                      progress: ProgressFn) -> FailuresTaskResult:
    """The ``failures`` planning task: sweep, then write ``failures_scenarios.csv`` (worst first) and
    ``failures_links.csv`` (per-link worst scenario) into ``out_dir``."""
    result = sweep(net, opts, progress)
    summary = result.summary()
    summary["options"] = opts.model_dump(exclude={"scenarios"})
    writer = ArtifactWriter(out_dir)
    writer.csv("failures_scenarios.csv", result.table())
    writer.csv("failures_links.csv", result.worst_by_link())
    return FailuresTaskResult("failures", summary, writer.files, sweep=result)
