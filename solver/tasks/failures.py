"""The ``failures`` planning task: sweep failure scenarios, write ``failures_scenarios.csv`` (worst first) and
``failures_links.csv`` (per-link worst scenario); options :class:`~backbone.solver.failures.FailureOptions`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backbone.artifacts import ArtifactWriter
from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.failures import FailureOptions, SweepResult, sweep
from backbone.solver.failures.summary import FailuresSummary
from backbone.solver.tasks.base import TaskResult


@dataclass(kw_only=True)
class FailuresTaskResult(TaskResult[FailuresSummary]):
    """The ``failures`` task's outcome: the JSON summary, the files, and the :class:`SweepResult` (every
    scenario's record and the intact baseline)."""

    sweep: SweepResult


def run_failures_task(net: Network, opts: FailureOptions, out_dir: Path | None,
                      progress: ProgressFn) -> FailuresTaskResult:
    """The ``failures`` planning task: sweep, then write ``failures_scenarios.csv`` (worst first),
    ``failures_links.csv`` (per-link worst scenario) and ``failures_state_links.csv`` (every state's per-link
    utilisation, what the workspace colours a failure state by) into ``out_dir``."""
    result = sweep(net, opts, progress)
    summary = result.typed_summary()
    summary.options = opts.model_dump(exclude={"scenarios"})
    writer = ArtifactWriter(out_dir)
    writer.csv("failures_scenarios.csv", result.table())
    writer.csv("failures_links.csv", result.worst_by_link())
    writer.csv("failures_state_links.csv", result.state_utilisation())
    return FailuresTaskResult("failures", summary, writer.files, sweep=result)
