"""``failures.json``'s summary as a typed model (:class:`FailuresSummary`), built by
:meth:`backbone.solver.failures.result.SweepResult.typed_summary` and dumped only at the file and API edge.

The baseline is a :class:`BaselineFigures` (the impact's one type, :class:`~backbone.solver.te.sections.ImpactFigures`,
with the traffic carried). The scenario records and the tables (``worst``, ``scenarios``, ``worst_by_link``) stay
plain records here: they are the rows ``failures_scenarios.csv`` and ``failures_links.csv`` hold, written from the
typed :class:`~backbone.solver.failures.records.ScenarioRecord`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from backbone.solver.core.summary import TaskSummary
from backbone.solver.te.sections import ImpactFigures

__all__ = ["BaselineFigures", "FailuresSummary", "SloViolations", "SweepEngineInfo", "ran_on_text"]


class SweepEngineInfo(BaseModel):
    """Where a sweep's failure states were evaluated (the engine that ran, not the one asked for: a local pool
    asked for in a process that cannot start one runs serially)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: Literal["serial", "local", "dask"]
    """``serial`` (this process), ``local`` (a pool of processes on this machine) or ``dask`` (a Dask cluster)."""
    workers: int
    """Processes that evaluated states: 1 serially, the pool's processes, or the Dask workers connected when the
    sweep started."""
    threads: int
    """Worker threads over those processes (one per pool process; a Dask worker may have several)."""
    scheduler: str | None = None
    """The Dask scheduler's address (a configured one), ``local cluster`` for one started for the sweep, None off
    Dask."""


class BaselineFigures(ImpactFigures):
    """``failures.json``'s ``baseline``: the intact state's impact figures (the one
    :class:`~backbone.solver.te.sections.ImpactFigures`, declared once) and the traffic carried."""

    carried_gbps: float
    """Traffic carried at <= 100 % utilisation."""


class SloViolations(TaskSummary):
    """Latency-SLO violations of a network's failure states and of its intact state
    (:func:`~backbone.solver.failures.impact.slo_violation_summary` builds it; ``plan.json``'s ``slo_violations``
    and ``slo_violations_after``)."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)

    states: int
    """Failure states with ``slo_violation_gbps`` > 0."""
    worst_gbps: float
    """The largest ``slo_violation_gbps`` of a state (0 when none)."""
    demands: int
    """Demands violating their SLO, over every state (counted per state)."""
    intact_gbps: float | None
    """The intact state's SLO-unmet Gbps (None when unknown)."""


def ran_on_text(where: SweepEngineInfo) -> str:
    """Where a sweep ran, in words: ``this process``, ``4 local processes``, ``dask tcp://h:8786 (2 workers, 4
    threads)``."""
    if where.engine == "serial":
        return "this process"
    if where.engine == "local":
        return f"{where.workers} local processes"
    return f"dask {where.scheduler} ({where.workers} workers, {where.threads} threads)"


class FailuresSummary(TaskSummary):
    """``failures``: every scenario's impact, the worst ones and the per-link worst utilisation.

    The fields are in ``failures.json``'s order; ``options`` is set by the ``failures`` task and left out of the
    document when it is None (a sweep summarised outside the task).
    """

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("options",)

    status: str
    """``ok``: the sweep ran (each state's own status is in its record)."""
    method: str
    """How the baseline and the states were routed (``path``, ``srcflow``, ...)."""
    scenarios_run: int
    """Failure states swept."""
    survived: int
    """States carried (the one definition: :attr:`FailureImpact.survived
    <backbone.solver.failures.impact.FailureImpact.survived>`)."""
    not_survived: int
    """States not carried."""
    overloaded: int
    """States whose traffic needs more than 100 % utilisation on some link."""
    unmet_unknown: int
    """States whose unmet traffic was not measured (NaN in their record)."""
    max_gap: float | None
    """The largest relative gap of a state's MLU to its lower bound (None when no state has one)."""
    overload_not_proven: int
    """Overloaded states whose MLU lower bound does not prove the overload."""
    path_lp_states: int
    """States whose MLU is the path LP's (restricted to the candidate paths)."""
    notes: list[str]
    """What the headline numbers do not cover, in words."""
    failure_policy: dict[str, str]
    """Each traffic class's failure policy in the sweep (:func:`backbone.failure_policy.class_failure_policy`)."""
    paused_states: int
    """States in which a pausing class was not offered (``paused_gbps`` > 0)."""
    untouched_states: int = 0
    """States no offered flow crosses, settled by keeping the intact routing without a solve (a quick sweep:
    :attr:`ScenarioRecord.untouched <backbone.solver.failures.records.ScenarioRecord.untouched>`)."""
    links_swept_as_own_group: list[str]
    """Links in no SRLG, swept as their own group."""
    seconds: float
    """Wall-clock seconds of the sweep, the baseline's solve included."""
    scenarios_per_second: float | None
    """States swept per second (None when no time passed)."""
    baseline: BaselineFigures
    """The intact network's figures (:meth:`SweepBaseline.figures
    <backbone.solver.failures.records.SweepBaseline.figures>`: its impact and the traffic carried)."""
    worst: list[dict[str, Any]]
    """The worst states: the first rows of ``failures_scenarios.csv``."""
    scenarios: list[dict[str, Any]]
    """Every state's record, worst first (without ``link_utilisation``)."""
    worst_by_link: list[dict[str, Any]]
    """The first rows of ``failures_links.csv``: per link its worst utilisation and the state that drives it."""
    map: dict[str, Any]
    """Map values: each link's worst utilisation (``link_values``), the worst state's failed links and a title."""
    ran_on: SweepEngineInfo | None = None
    """Where the states were evaluated (engine, Dask scheduler, worker processes and threads); None when no state
    was swept."""
    options: dict[str, Any] | None = None
    """The sweep's options (set by the ``failures`` task, without ``scenarios``)."""
