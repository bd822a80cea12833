"""The sections of the TE routing's record (:class:`~backbone.solver.te.summary.TERecord`) that one method reports,
as typed models built where their figures are made and dumped only at the file and API edge.

* :class:`ColgenFigures` -- column generation's run (``colgen``; :mod:`backbone.solver.te.colgen`);
* :class:`SourceFlowFigures` -- the source-flow engine's run (``srcflow``, or ``colgen`` when column generation
  handed a demand set above the restricted-master threshold to it; :mod:`backbone.solver.te.srcflow`);
* :class:`POPFigures` -- POP's split (``pop``); :class:`FallbackFigures` -- the lowest-latency fallback
  (``fallback``; :mod:`backbone.solver.te.fallback`);
* :class:`AutoFigures` -- what method ``auto`` did after the path LP (``auto``; :func:`backbone.solver.te.solve_te`);
* :class:`LPSize` and :class:`PathsTable` -- the main LP's size (``lp``) and how much of the paths the paths
  table lists (``paths_table``).

Each is frozen, declares every key (``extra`` forbidden) and leaves out of its document the keys a run did not
report (``OMITTED_WHEN_UNSET``), so the JSON holds the same keys as when the sections were plain dicts.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import ConfigDict

from backbone.solver.core.summary import TaskSummary

__all__ = ["AutoFigures", "ColgenFigures", "FallbackFigures", "FlowDeviationFigures", "LPSize", "POPFigures",
           "PathsTable", "ReducedBoundFigures", "ScalableFigures", "SourceFlowFigures", "SourceFlowRun"]


class Section(TaskSummary):
    """A record section: frozen, every key declared; NaN stays NaN in the document (as in the record)."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)

    def updated(self, **changes: Any) -> Self:
        """A new section: this one's given fields (``model_fields_set``) with ``changes``, validated."""
        given = {name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set}
        return self.model_validate({**given, **changes})


class FlowDeviationFigures(Section):
    """Flow deviation's first routing and bound, before column generation's masters (min-MLU without SLOs)."""

    iterations: int
    """Flow-deviation iterations."""
    mlu: float
    """The MLU of its routing."""
    lower_bound: float
    """Its proven lower bound on the MLU."""
    seconds: float
    """Seconds it took."""
    columns: int
    """Columns (paths carrying flow) it found."""


class ReducedBoundFigures(Section):
    """The min-MLU bound refined on the reduced graph (:func:`backbone.solver.te.reduce.reduced_mlu_bound`)."""

    nodes: int
    """Nodes of the reduced graph."""
    links: int
    """Links of the reduced graph."""
    pendant_mlu: float
    """The utilisation the pendant links fix."""
    lagrangian: float
    """The Lagrangian bound of the reduced instance."""
    steps: int
    """Polyak steps taken."""
    seconds: float
    """Seconds it took."""


class ColgenFigures(Section):
    """Column generation's figures (method ``colgen``, and ``auto``'s escalation)."""

    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = ("flow_deviation", "reduced_bound")

    iterations: int
    """Restricted masters solved."""
    columns: int
    """Columns in the pool (or in the flow-deviation routing when it is the answer)."""
    master_builds: int
    """Times the master was built from scratch (later masters extend it)."""
    masters_warm_started: int
    """Masters started from the last master's basis."""
    latency_limited_searches: int
    """Exact latency-limited pricing searches (demands with SLOs)."""
    latency_limited_seconds: float
    """Seconds in those searches."""
    flow_deviation: FlowDeviationFigures | None = None
    """The flow-deviation start (min-MLU without SLOs, when it ran)."""
    reduced_bound: ReducedBoundFigures | None = None
    """The bound refined on the reduced graph, when it ran."""


class SourceFlowRun(Section):
    """The source-aggregated Frank-Wolfe run inside :class:`SourceFlowFigures`."""

    sources: int
    """Sources with traffic."""
    pairs: int
    """Routed (source, destination) pairs."""
    iterations: int
    """Frank-Wolfe iterations."""
    seconds: float
    """Seconds iterating."""
    flow_mlu: float
    """The MLU of the flows (before path decomposition)."""
    lower_bound: float
    """The proven lower bound on the MLU."""
    gap_tol: float
    """The gap at which it stops."""
    warm_start: bool
    """Whether it started from an earlier state's flows."""


class SourceFlowFigures(Section):
    """The source-flow engine's figures (method ``srcflow``; ``colgen`` above the restricted-master threshold)."""

    engine: str
    """``source_flows``."""
    masters_skipped: str
    """Why no restricted master was solved."""
    source_flows: SourceFlowRun
    """The Frank-Wolfe run."""
    columns: int
    """Paths carrying flow after decomposition."""
    paths: int
    """The same count (the paths the routing uses)."""
    paths_in_table: int
    """Of them, the rows the paths table lists."""
    result_seconds: float
    """Seconds building the answer's tables."""


class POPFigures(Section):
    """POP's split (method ``pop``)."""

    parts: int
    """Sub-problems the demands were split into."""
    workers: int
    """Processes that solved them."""


class FallbackFigures(Section):
    """The lowest-latency fallback's figures (the time limit stopped the solve before any LP solution)."""

    fallback: str
    """What the answer is (``lowest-latency paths``)."""
    stopped_during: str
    """The step the time limit stopped."""
    scale: float
    """The factor every demand was scaled by to stay under the utilisation ceiling (1 for min-MLU)."""


ScalableFigures = ColgenFigures | SourceFlowFigures | POPFigures | FallbackFigures
"""The section a scalable run hands back (:attr:`backbone.solver.te.colgen.ScaleOutcome.extra`)."""


class AutoFigures(Section):
    """What method ``auto`` did after the path LP: its MLU, bound and gap; column generation's run, or why it was
    skipped (the threshold that kept the path LP)."""

    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = (
        "path_lp_seconds", "column_generation_skipped", "escalate_above_mlu", "overloaded_above_mlu", "colgen_mlu",
        "colgen_status", "colgen_seconds", "colgen_time_limit_s")

    path_lp_mlu: float | None
    """The path LP's MLU."""
    path_lp_lower_bound: float | None
    """Its proven bound over every admissible path."""
    path_lp_gap: float | None
    """Its proven gap ``(MLU - bound) / MLU``."""
    path_lp_seconds: float | None = None
    """Seconds the path LP took (when column generation followed)."""
    column_generation_skipped: bool | None = None
    """True when the path LP was kept without column generation."""
    escalate_above_mlu: float | None = None
    """The MLU within which the path LP is kept (when that kept it)."""
    overloaded_above_mlu: float | None = None
    """The bound above which no routing gets within capacity (when that kept the path LP)."""
    colgen_mlu: float | None = None
    """Column generation's MLU."""
    colgen_status: str | None = None
    """Column generation's status."""
    colgen_seconds: float | None = None
    """Seconds column generation took."""
    colgen_time_limit_s: float | None = None
    """The time column generation was given."""


class LPSize(Section):
    """The main LP's size (every field left out when no LP was solved: the document is ``{}``)."""

    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = ("rows", "cols", "nonzeros")

    rows: int | None = None
    """Constraint rows."""
    cols: int | None = None
    """Variables."""
    nonzeros: int | None = None
    """Nonzero coefficients."""


class PathsTable(Section):
    """How much of the paths the paths table lists (the scalable methods)."""

    rows: int
    """Rows the table lists."""
    paths: int
    """Path splits of the routing."""
    demands_listed: int
    """Demands whose every path is listed (the largest first)."""
    demands: int
    """Demands routed."""
    traffic_share: float
    """Share of the traffic the listed demands carry."""


class ImpactFigures(Section):
    """The intact state's impact figures (``impact``; :meth:`StateAssessment.summary
    <backbone.solver.failures.impact.StateAssessment.summary>`): what ``failures`` and ``plan`` report for it."""

    mlu: float
    """Utilisation the traffic needs (min-MLU)."""
    mlu_lower_bound: float
    """A proven lower bound on it (NaN when none is proven)."""
    gap: float
    """``(mlu - mlu_lower_bound) / mlu`` (NaN without a bound)."""
    overloaded: bool
    """Whether the traffic needs more than 100 % of some link."""
    unmet_gbps: float
    """Traffic that cannot be carried at <= 100 % utilisation (NaN when not measured)."""
    unmet_known: bool
    """Whether the unmet traffic was measured."""
    unmet_by_class: dict[str, float]
    """Unmet Gbps per traffic class present (NaN when unknown)."""
    unmet_by_reason: dict[str, float]
    """Unmet Gbps per reason."""
    status: str
    """The solves' status."""
    solves: list[str]
    """The TE objectives solved."""
    method: str
    """The min-MLU engine: ``path`` or ``srcflow``."""
    definition: str
    """What ``mlu`` and ``unmet_gbps`` mean for this state."""
    stages_skipped: list[str] | None = None
    """The max-throughput class stages the min-MLU routing proved (no solve; ``te`` only)."""


class CorridorRow(Section):
    """One row of the routed Gbps per corridor and traffic class (``corridors.csv``'s rows,
    :func:`backbone.corridors.corridor_table`)."""

    view: str
    """``region`` (a region pair) or ``srlg`` (a corridor SRLG): the view."""
    corridor: str
    """The corridor's name."""
    traffic_class: str
    """The traffic class (``all`` for every class, ``unlisted`` for load the paths table does not list)."""
    eastbound_gbps: float
    """Gbps eastbound."""
    westbound_gbps: float
    """Gbps westbound."""
    gbps: float
    """Both directions."""
    capacity_gbps: float
    """The corridor's link capacity."""
    utilisation: float
    """``gbps`` over ``capacity_gbps``."""
    links: int
    """Links in the corridor."""
    max_link_utilisation: float
    """The highest utilisation of its links."""
