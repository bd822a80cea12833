"""The TE routing's record (:attr:`TEResult.summary <backbone.solver.te.result.TEResult.summary>`) as a typed model.

:class:`TERecord` is built by the TE solver as the model itself (:func:`backbone.solver.te.result.assemble_result`)
and never written into: a step that adds figures (the edge bound, the impact, the corridors) makes a new record
(:meth:`TERecord.updated`) and a new :class:`~backbone.solver.te.result.TEResult`. It is dumped to plain values only at
the file and API edge (:meth:`TERecord.document`; ``backbone te --json`` prints the task's
:class:`~backbone.solver.tasks.summaries.TESummary`, this record plus the task's figures).

The stable figures are typed fields with units in their names; the sections only one method or step reports
(``colgen``, ``pop``, ``srcflow``, ``fallback``, ``auto``, ``impact``, ``lp``, ``paths_table``, ``corridors``) are
typed too (:mod:`backbone.solver.te.sections`), each leaving out of the document the keys its run did not report.
``map`` stays a plain mapping: its shape (``link_values`` and what the map layers read) is shared with every
task's map and merged by the plan.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from backbone.solver.core.summary import TaskSummary
from backbone.solver.te.sections import (
    AutoFigures,
    ColgenFigures,
    CorridorRow,
    FallbackFigures,
    ImpactFigures,
    LPSize,
    PathsTable,
    POPFigures,
    SourceFlowFigures,
)

__all__ = ["ClassTraffic", "LPStage", "ReasonUnmet", "TERecord"]


class ClassTraffic(BaseModel):
    """One traffic class's totals in a TE record's ``by_class`` (Gbps)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    demand_gbps: float
    """Traffic offered."""
    carried_gbps: float
    """Traffic carried."""
    unmet_gbps: float
    """Traffic unmet."""


class ReasonUnmet(BaseModel):
    """One reason's unmet traffic in a TE record's ``unmet_by_reason``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gbps: float
    """Unmet Gbps with this reason."""
    demands: int
    """Demands with unmet traffic for this reason."""


class LPStage(BaseModel):
    """One LP solved for an objective, as the record lists it (:class:`backbone.solver.te.objectives.Stage`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The stage (``min-mlu``, ``max-throughput-inference``, ``part1-...``, ``master-3``, ...)."""
    status: str
    """The solver's status of this LP."""
    objective: float
    """Its objective value."""
    solve_seconds: float
    """Seconds in the solver."""
    build_seconds: float
    """Seconds building it."""
    rows: int
    """Constraint rows."""
    cols: int
    """Variables."""
    nonzeros: int
    """Nonzero coefficients."""
    note: str = ""
    """What the backend had to do to get this answer (empty when nothing)."""


class TERecord(TaskSummary):
    """How a routing flows (utilisation, carried and unmet traffic, latency) and how it was solved.

    Frozen: build a changed record with :meth:`updated`. The fields in :attr:`OMITTED_WHEN_UNSET` are reported by
    some methods only (a method's own section, ECMP's figures, the bound, the impact); the document holds them
    only when they were given. NaN stays NaN in :meth:`document` (the artifact writer writes it as null).
    """

    model_config = ConfigDict(frozen=True, validate_assignment=False)

    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = (
        "paths_complete", "paths_table", "objective_value", "method", "ecmp_metric", "ecmp_tolerance_ms", "disjoint",
        "slo_enforced", "slo_violations", "model_reused", "lp_method", "path_variables", "stages_skipped", "colgen",
        "pop", "srcflow", "fallback", "bound_seconds", "lower_bound", "gap", "slo_violating_demands", "auto",
        "routed_gbps", "edge_seconds", "edge_bound", "gap_to_edge_bound", "impact", "impact_seconds", "corridors")

    mlu: float | None
    """Maximum link utilisation of the routing (above 1.0: overload, never hidden)."""
    overloaded: bool
    """Whether the routing puts more than a link's capacity on it."""
    demand_gbps: float
    """Traffic offered (Gbps)."""
    carried_gbps: float | None
    """Traffic carried (Gbps; None when the routing overloads and the impact was not measured)."""
    unmet_gbps: float | None
    """Traffic unmet, in the one meaning (the impact's when the routing overloads; None when unknown)."""
    by_class: dict[str, ClassTraffic]
    """Per traffic class: ``demand_gbps``, ``carried_gbps``, ``unmet_gbps``."""
    unmet_by_reason: dict[str, ReasonUnmet]
    """Per reason: unmet ``gbps`` and ``demands``."""
    weighted_latency_ms: float | None
    """Carried-traffic-weighted one-way latency (ms)."""
    worst_latency_ms: float | None
    """The longest one-way latency of a path carrying traffic (ms)."""
    weighted_rtt_ms: float | None
    """Carried-traffic-weighted round trip (ms)."""
    links_over_80pct: int
    """Links above 80 % utilisation."""
    map: dict[str, Any]
    """Map values: utilisation per link."""
    paths_complete: bool | None = None
    """Whether the paths table lists every path split (the scalable methods, ECMP)."""
    paths_table: PathsTable | None = None
    """How much of the paths the table lists (the scalable methods)."""
    status: str
    """``optimal``, ``time_limit``, ... (the solver's, mapped onto one enum)."""
    objective: str
    """The TE objective (or ``ecmp``)."""
    objective_value: float | None = None
    """Its value."""
    formulation: str
    """``path``, ``edge`` or ``ecmp``."""
    method: str | None = None
    """The method that ran (``exact``, ``colgen``, ``pop``, ``srcflow``)."""
    backend: str
    """The solver backend (``none`` for ECMP and the source-flow engine)."""
    ecmp_metric: str | None = None
    """ECMP's path cost (``latency`` or ``hops``)."""
    ecmp_tolerance_ms: float | None = None
    """ECMP's equal-cost tolerance (ms; latency metric only)."""
    paths_k: int | None
    """Candidate paths per demand (None where no candidate paths were used)."""
    disjoint: bool | None = None
    """Whether the candidate paths were link-disjoint."""
    utilisation_ceiling: float | None
    """The utilisation ceiling of the objectives that have one."""
    slo_enforced: bool | None = None
    """Whether latency SLOs constrained the routing (ECMP: no)."""
    slo_violations: int | None = None
    """Demands whose path breaks their SLO (ECMP)."""
    paths_seconds: float
    """Seconds spent finding candidate paths."""
    build_seconds: float
    """Seconds spent building the LPs."""
    model_reused: bool | None = None
    """Whether an earlier built model was reused (exact method)."""
    solve_seconds: float
    """Seconds in the solver."""
    extract_seconds: float
    """Seconds spent reading the solution into tables."""
    lp: LPSize
    """The main LP's size (``rows``, ``cols``, ``nonzeros``; empty when no LP was solved)."""
    lp_method: str | None = None
    """The LP algorithm asked for."""
    path_variables: int | None = None
    """Path variables in the main LP."""
    stages: list[LPStage]
    """Each LP stage: name, status, objective, times, size, note."""
    stages_skipped: list[str] | None = None
    """LP stages skipped (exact method)."""
    colgen: ColgenFigures | SourceFlowFigures | None = None
    """Column generation's figures (method ``colgen``; the source-flow engine's above the restricted-master
    threshold)."""
    pop: POPFigures | None = None
    """POP's figures (method ``pop``)."""
    srcflow: SourceFlowFigures | None = None
    """The source-flow engine's figures (method ``srcflow``)."""
    fallback: FallbackFigures | None = None
    """The lowest-latency fallback's figures (when the time limit stopped the solve before any LP solution)."""
    notes: list[str] = Field(default_factory=list)
    """What a planner should know about the routing, in words."""
    bound_seconds: float | None = None
    """Seconds spent on the MLU lower bound."""
    lower_bound: float | None = None
    """A proven lower bound on the objective (None when none was proven)."""
    gap: float | None = None
    """Relative gap of the objective to ``lower_bound``."""
    slo_violating_demands: list[str] | None = None
    """The first demands whose ECMP path breaks their SLO."""
    total_seconds: float
    """Seconds the routing took (the ``te`` task's summary: the whole run)."""
    auto: AutoFigures | None = None
    """What method ``auto`` did: the path LP's MLU, bound and gap, and column generation's."""
    routed_gbps: float | None = None
    """Traffic the overloaded routing puts on its paths (Gbps)."""
    edge_seconds: float | None = None
    """Seconds the edge bound took (with ``bound``)."""
    edge_bound: float | None = None
    """The edge formulation's optimum: a bound on the path result (with ``bound``, when proven)."""
    gap_to_edge_bound: float | None = None
    """Relative gap of the path result to the edge bound."""
    impact: ImpactFigures | None = None
    """The impact figures (with ``impact``): what ``failures`` and ``plan`` report for the intact state."""
    impact_seconds: float | None = None
    """Seconds the impact took."""
    corridors: list[CorridorRow] | None = None
    """The routed Gbps per corridor and traffic class (``corridors.csv``'s rows,
    :func:`backbone.solver.tasks.te.add_corridors`)."""

    def given(self) -> dict[str, Any]:
        """The fields that were given (``model_fields_set``), as they are (typed values, not dumped): what a
        record built from this one starts from."""
        return {name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set}

    def updated(self, **changes: Any) -> TERecord:
        """A new record: this one's given fields with ``changes`` (validated, so a misspelt field raises)."""
        return type(self).model_validate({**self.given(), **changes})

    def with_notes(self, *notes: str) -> TERecord:
        """A new record with ``notes`` appended to :attr:`notes`."""
        return self.updated(notes=[*self.notes, *notes])
