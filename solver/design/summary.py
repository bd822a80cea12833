"""``design.json``'s summaries as typed models, one per mode of ``backbone design``, and the survivable design's
per-iteration record (:class:`DesignIteration`).

* :class:`SurvivableDesignSummary` (``mode`` ``survivable``): the intact or survivable design over TE's paths,
  built by :meth:`SurvivableDesign.typed_summary
  <backbone.solver.design.survivable.iterate.SurvivableDesign.typed_summary>`.
* :class:`UpgradeDesignSummary` (``mode`` ``upgrade``): the edge-based design, built by :meth:`DesignResult.typed_summary
  <backbone.solver.design.upgrades.edge.DesignResult.typed_summary>`.
* :class:`SndlibDesignSummary` (``mode`` ``sndlib``): an SNDlib model solved, built by the ``design`` task.
* :data:`PlanDesign`: the plan's upgrade stage record, the :class:`SurvivableDesignSummary` it built or an
  :class:`UnbuiltDesign` (status ``skipped`` or ``infeasible``, and why) when it built nothing.

Each is dumped (:meth:`~backbone.solver.core.summary.TypedSummary.document`) only at the file and API edge.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from backbone.solver.checks.records import (
    CheckRecord,
    DesignCheckRecord,
    IntactDesignCheckRecord,
    NoDesignChecked,
)
from backbone.solver.core.summary import TaskSummary, TypedSummary
from backbone.solver.design.survivable.survivability import Survivability

__all__ = ["DesignBound", "DesignIteration", "DesignStart", "DesignSummary", "LinkConfiguration", "ModuleCount", "PlanDesign", "RestrictedOptimum", "SndlibDesignSummary",
           "SurvivableDesignSummary", "UnbuiltDesign", "UpgradeDesignSummary", "built_design", "design_gap"]


def design_gap(cost_usd: float, bound_usd: float | None) -> float | None:
    """A design's gap to a bound, ``(cost - bound) / cost`` (0 for a free design; None without a bound): the design's
    ``gap`` to its true bound and its restricted optimum's to the MIP's own."""
    return None if bound_usd is None else (max(0.0, cost_usd - bound_usd) / cost_usd if cost_usd > 0 else 0.0)


class DesignBound(TaskSummary):
    """How a design's true lower bound was proven (``design.json``'s ``bound``, ``plan.json``'s ``upgrade_bound``),
    built by the bound that proved it: the survivable design's arc-flow LP
    (:meth:`SurviveBound.record <backbone.solver.design.survivable.bound.SurviveBound.record>`) or SLO path LP
    (:meth:`SloBound.record <backbone.solver.design.survivable.slo_bound.SloBound.record>`), the better of the two
    with both beside it (:func:`~backbone.solver.design.survivable.slo_bound.better_bound`), or the intact design's
    column generation (:meth:`PathLPBound.record <backbone.solver.design.colgen.PathLPBound.record>`) with its
    metric-inequality MIP (:func:`~backbone.solver.design.intact.bound_record`). Frozen; the figures only some
    bounds report are in the document only when they were given (:attr:`OMITTED_WHEN_UNSET`)."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)

    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = (
        "method", "rounds", "paths_added", "lp_bound_usd", "integer_bound_usd", "cut_rounds", "cuts", "cut_status",
        "bounds")

    bound_usd: float | None
    """The proven lower bound on the design's cost (None when no LP finished)."""
    status: str
    """``optimal``, ``partial``, ``time_limit``, ``round_limit``, ``infeasible`` or ``skipped``."""
    states: int
    """States of the LP that proved it."""
    seconds: float
    """Seconds it took."""
    note: str
    """What stopped it or how it was proven, in words."""
    covers: str
    """The designs it bounds, in one sentence."""
    model: dict[str, int]
    """The size of its (last) LP."""
    method: str | None = None
    """The relaxation that proved it (the survivable design's two bounds, the intact design's column generation)."""
    rounds: int | None = None
    """Column-generation rounds (path LPs)."""
    paths_added: int | None = None
    """Paths pricing added (path LPs)."""
    lp_bound_usd: float | None = None
    """The intact design's LP bound."""
    integer_bound_usd: float | None = None
    """The intact design's metric-inequality MIP bound (None when it does not apply)."""
    cut_rounds: int | None = None
    """The intact design's cut MIPs."""
    cuts: int | None = None
    """Metric inequalities the intact design's cut MIPs added."""
    cut_status: str | None = None
    """The intact design's metric-inequality loop's status."""
    bounds: dict[str, DesignBound] | None = None
    """The survivable design's two bounds, by ``method`` (the better one is this record)."""

    def given(self) -> dict[str, Any]:
        """The fields given (``model_fields_set``), by name: a copy's starting point."""
        return {name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set}


class RestrictedOptimum(TaskSummary):
    """A design MIP's own optimum and dual bound, named with its restriction (``design.json``'s
    ``restricted_optimum``, ``plan.json``'s ``upgrade_restricted_optimum``): optimal (or bounded) only among the
    designs that open the candidates it opened and route over its paths, in its working set -- never a bound on the
    planning problem."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)

    cost_usd: float
    """The MIP design's cost."""
    bound_usd: float | None
    """The MIP's dual bound (None when it proved none)."""
    gap: float | None
    """``(cost_usd - bound_usd) / cost_usd`` (0 for a free design; None without a bound)."""
    status: str
    """The MIP solver's status."""
    restriction: str
    """The designs it is optimal among, in words."""


class DesignStart(BaseModel):
    """One start of a survivable design iteration's MIP: the candidate routes it opened and what its design gave
    (``designs_tried`` of a :class:`DesignIteration`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    start: str
    """Which candidate routes were open: ``routes needed``, ``no new route`` or ``every candidate``."""
    candidates_open: int
    """Candidate routes open in the MIP."""
    routes: int
    """Candidate routes its design builds."""
    unmet_gbps: float
    """Traffic its design leaves unmet over the intact state and the working set (Gbps)."""
    short_gbps: float
    """Traffic its design is short of capacity in the working states (Gbps)."""
    cost_usd: float
    """Its design's cost."""


class DesignIteration(BaseModel):
    """One iteration of the survivable design (one MIP over the working set, then a sweep of its design), or the
    intact design's one MIP. Frozen: a later figure of the same iteration (its sweep) makes a new record
    (``model_copy(update=...)``). ``paths`` and ``unmet_gbps`` are the intact design's, ``designs_tried`` and
    ``stopped`` the survivable design's: each is in the document only when it is not None."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")  # unknown stays NaN

    OPTIONAL: ClassVar[tuple[str, ...]] = ("paths", "unmet_gbps", "designs_tried", "stopped")
    """Fields left out of the document when None (the other kind of design does not report them)."""

    iteration: int
    """1, 2, ...: the iteration's number."""
    working_states: int
    """Failure states in the MIP's working set."""
    added: int
    """States added to the working set by this iteration."""
    violated: int
    """States the design still violates (after the iteration's sweep)."""
    cost_usd: float
    """The MIP design's cost."""
    restricted_bound_usd: float | None
    """The MIP's dual bound: a bound of its restricted model only (None when it proved none)."""
    mip_status: str
    """The MIP solver's status."""
    mip_seconds: float
    """Seconds the MIP took."""
    path_rounds: int
    """Rounds of path pricing (new candidate paths) in the MIP."""
    paths: int | None = None
    """Paths column generation ended with (the intact design)."""
    unmet_gbps: float | None = None
    """Traffic the intact design leaves unmet (Gbps; the intact design)."""
    designs_tried: list[DesignStart] | None = None
    """The designs the MIP was started from and what each gave (the survivable design)."""
    sweep_seconds: float
    """Seconds the sweep of the design took."""
    model: dict[str, int]
    """The MIP's size: ``rows``, ``cols``, ``nonzeros``, ``integer_cols``."""
    stopped: str | None = None
    """Why the iterations stopped here (the design's time budget), if they did."""

    @model_serializer(mode="wrap")
    def _leave_out_unreported(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dumped fields without the :attr:`OPTIONAL` ones that are None."""
        data: dict[str, Any] = handler(self)
        for name in self.OPTIONAL:
            if data.get(name, 0) is None:
                del data[name]
        return data


class SurvivableDesignSummary(TaskSummary):
    """``design`` over TE's paths (``mode`` ``survivable``): what to buy so the intact network (``survive`` none)
    or every failure of a kind is carried, its cost, true lower bound and the iterations that found it. ``survive``
    and ``verification`` are set by the ``design`` task (left out when None: the plan's design has neither)."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("survive", "verification")

    mode: Literal["survivable"] = "survivable"
    """The design's mode."""
    status: str
    """``optimal``, ``feasible``, ``time_limit``, ..."""
    failure_kind: str
    """The failures it survives (``none``: the intact state only)."""
    cost_usd: float
    """What the upgrades and new routes cost."""
    lower_bound_usd: float | None
    """The true lower bound on that cost (None when no bound LP finished)."""
    gap: float | None
    """``(cost_usd - lower_bound_usd) / cost_usd``."""
    ceiling: float
    """Utilisation ceiling in the intact state."""
    failure_ceiling: float
    """Utilisation ceiling in a failure state."""
    converged: bool
    """Whether the last sweep found no violated state."""
    states_examined: int
    """Failure states swept."""
    states_added: int
    """States in the working set (the MIP's)."""
    states_needed: int
    """States some purchase protects."""
    working_set: list[str]
    """The working set's states."""
    iterations: list[DesignIteration]
    """One record per iteration."""
    survivability: Survivability
    """What the design claims: states examined, survived, excused (with reasons) and violated."""
    links_upgraded: int
    """Links it upgrades."""
    routes_built: int
    """Candidate routes it builds."""
    bound: DesignBound
    """How the lower bound was proven (what it covers, the method, its rounds and cuts)."""
    restricted_optimum: RestrictedOptimum
    """The last MIP's optimum among designs with its restriction, named with it."""
    failure_policy: dict[str, str]
    """Each traffic class's failure policy in the design: what a failure state offers of it."""
    upgrades: list[dict[str, Any]]
    """``design_upgrades.csv``'s rows (``protects`` a list)."""
    model: dict[str, int]
    """The last MIP's size."""
    seconds: float
    """Seconds the design took."""
    map: dict[str, Any]
    """Map values: Gbps added per link."""
    survive: str | None = None
    """The ``survive`` option (set by the ``design`` task)."""
    verification: IntactDesignCheckRecord | CheckRecord | None = None
    """The independent checker's record (with ``verify``): the intact design's check, or the survivability
    check."""


class UpgradeDesignSummary(TaskSummary):
    """``design`` with edge-based routing (``mode`` ``upgrade``): module upgrades so all demand fits within the
    ceiling in the normal state and every failure state of ``survivability``."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)

    mode: Literal["upgrade"] = "upgrade"
    """The design's mode."""
    status: str
    """The MIP's status."""
    cost_usd: float | None
    """What the upgrades cost."""
    lower_bound_usd: float | None
    """The MIP's lower bound on that cost."""
    gap: float | None
    """Its relative gap."""
    survivability: str
    """The failures designed for (``none``, ``link``, ``srlg``, ``srlg,link``)."""
    ceiling: float
    """Utilisation ceiling."""
    states: int
    """States designed for (the normal state included)."""
    upgrades: list[dict[str, Any]]
    """``design_upgrades.csv``'s rows."""
    lp_bound_usd: float | None
    """The LP relaxation's bound."""
    heuristic_cost_usd: float | None
    """The rounding heuristic's cost."""
    solve_seconds: float
    """Seconds the solve took."""
    backend: str
    """The solver backend."""
    notes: list[str]
    """What a planner should know about the solve."""
    map: dict[str, Any]
    """Map values: Gbps added and capacity per link."""
    verification: DesignCheckRecord | NoDesignChecked | None = None
    """The independent checker's record (with ``verify``)."""


class ModuleCount(BaseModel):
    """Modules of one capacity installed on an SNDlib link (pre-installed capacity counts as one module)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    capacity: float
    """The module's capacity (the instance's capacity unit)."""
    count: float
    """How many are installed."""


class LinkConfiguration(BaseModel):
    """An SNDlib link's configuration: the modules installed and the capacity they give
    (:func:`~backbone.solver.design.sndlib.link_configurations`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """The link's id."""
    modules: list[ModuleCount]
    """The modules installed, pre-installed capacity first."""
    capacity: float
    """Their total capacity."""


class SndlibDesignSummary(TaskSummary):
    """``design`` of an SNDlib network (``mode`` ``sndlib``): module counts per link under an SNDlib model code,
    in the SNDlib instance's own units (``cost``, ``capacity`` in modules of ``gbps_per_unit``)."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)

    mode: Literal["sndlib"] = "sndlib"
    """The design's mode."""
    network: str
    """The SNDlib network's name."""
    model: str
    """The SNDlib model code."""
    status: str
    """``optimal``, ``feasible``, ``infeasible``, ..."""
    cost: float | None
    """The design's cost (the instance's cost unit)."""
    lower_bound: float | None
    """The MIP's lower bound."""
    gap: float | None
    """Its relative gap."""
    lp_bound: float | None
    """The LP relaxation's bound."""
    heuristic_cost: float | None
    """The heuristic's cost."""
    mip_status: str
    """The MIP solver's status."""
    solve_seconds: float
    """Seconds the solve took."""
    backend: str
    """The solver backend."""
    size: dict[str, Any]
    """The model's size."""
    links: list[LinkConfiguration]
    """Per link: its configuration (modules installed, capacity)."""
    notes: list[str]
    """What a planner should know about the solve."""
    map: dict[str, Any]
    """Map values: Gbps added and capacity per link."""
    verification: DesignCheckRecord | NoDesignChecked | None = None
    """The independent checker's record (with ``verify``)."""


DesignSummary = SurvivableDesignSummary | UpgradeDesignSummary | SndlibDesignSummary
"""``design``'s summary: one model per mode (``mode`` tells them apart)."""


class UnbuiltDesign(TypedSummary):
    """The plan's upgrade stage when it built nothing: ``skipped`` (``skip_upgrades``: cost 0, the network after the
    plan is the network before it) or ``infeasible`` (no candidate makes the design feasible: cost unknown, the
    reasons). ``design.json`` holds it when the stage ran and found the design infeasible."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("reasons",)

    status: Literal["skipped", "infeasible"]
    """Why nothing was built."""
    cost_usd: float | None
    """0 when skipped; None when infeasible (no design has a cost)."""
    reasons: list[str] | None = None
    """What cannot be met (infeasible)."""
    message: str
    """The same in one message."""


PlanDesign = SurvivableDesignSummary | UnbuiltDesign
"""The plan's upgrade stage record (:attr:`UpgradeStage.summary <backbone.solver.plan.pipeline.UpgradeStage.summary>`):
the survivable design it built, or why it built none."""


def built_design(design: PlanDesign) -> SurvivableDesignSummary | None:
    """``design`` when a design was built, else None (an :class:`UnbuiltDesign`): the figures only a built design
    has (bound, gap, iterations, states) are read through this."""
    return design if isinstance(design, SurvivableDesignSummary) else None
