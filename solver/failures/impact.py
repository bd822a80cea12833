"""One meaning of utilisation, unmet traffic and a failure's impact (``te``, ``failures``, ``plan``, API).

A network *state* (intact, or with a failure applied) is assessed by :func:`assess_state`:

* **utilisation** -- min-MLU routing over the latency-admissible candidate paths (what ``backbone te``
  shows by default). Its maximum, ``mlu``, is the utilisation the traffic *needs*; above 1.0 the
  state is overloaded and the figure says by how much (overload is never hidden);
* **unmet** -- the traffic that cannot be carried at <= 100 % utilisation. When min-MLU fits
  within capacity this is only the demand with no admissible path (its reason says why);
  otherwise the state is re-solved by max-throughput at a ceiling of 1.0 (lexicographic by class
  priority), which gives the shortfall per traffic class; over every path when the min-MLU routing came
  from column generation (``auto`` on a sparse graph), so the shortfall is not measured on fewer paths
  than the routing. Where that is not measured (``shortfall=False``,
  or ``method="srcflow"``: no max-throughput LP at that scale) the unmet traffic of an overloaded state is
  *unknown* (NaN, null in JSON), never 0; so is it when the routing came from the source-flow engine
  with 50,000 demands or more (``backbone te`` at world scale: the max-throughput LP would not fit).

Two engines compute the min-MLU routing (``method``): ``path``, the path LP over the ``k`` candidate paths,
and ``srcflow``, the source-aggregated Frank-Wolfe engine over every path (:func:`backbone.solver.te.solve_source_flows`;
networks with millions of demands, no latency SLOs). Either way ``mlu_lower_bound`` is a proven lower bound
on the utilisation any routing of the state needs and ``gap = (mlu - mlu_lower_bound) / mlu``.

A failure's impact against the intact baseline (:func:`failure_impact`), each part reported apart:

* ``unmet_gbps`` (and ``unmet_by_class``) -- traffic that cannot be carried at <= 100 %
  utilisation beyond what the intact network already leaves unmet (capacity shortfall, and
  demand whose endpoints the failure cuts apart);
* ``slo_violation_gbps`` / ``slo_violations`` -- demand that now has no path within its latency
  SLO (a path exists, but too long);
* ``lost_gbps`` -- demand to or from the failed sites (nothing in the network can carry it);
* ``impact_gbps`` -- their sum, the figure every table and chart ranks by.

Beside them, not in the impact: ``paused_gbps`` -- the demand of the classes whose failure policy is to pause
(:mod:`backbone.failure_policy`; by default ``training-sync``). A failure state does not offer it, so it is neither
unmet nor carried there: unmet keeps its one meaning (offered and not carried). The intact state offers every class.

A state **survives** when ``unmet_gbps + slo_violation_gbps`` (of the offered demand) is within
:func:`survive_tolerance_gbps`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from backbone.model import Network
from backbone.schema import TRAFFIC_CLASSES
from backbone.solver.core.progress import ProgressFn
from backbone.solver.failures.summary import SloViolations
from backbone.solver.te import AUTO_COLGEN_MIN_DEMANDS, TEOptions, TEResult, resolve_te, solve_te
from backbone.solver.te.instance import REASON_CAPACITY, REASON_DISCONNECTED, REASON_SLO
from backbone.solver.te.sections import ImpactFigures, SourceFlowFigures

logger = logging.getLogger(__name__)

__all__ = ["OVERLOAD_TOL", "FailureImpact", "StateAssessment", "apply_impact_unmet", "assess_state", "failure_impact",
           "impact_key", "slo_violation_summary", "survive_tolerance_gbps"]

OVERLOAD_TOL = 1e-6
"""Utilisation above ``1 + OVERLOAD_TOL`` counts as overload (LP round-off below it)."""

SURVIVE_TOL_REL = 1e-6
"""Unmet traffic up to this fraction of the total demand (at least 0.01 Gbps) is LP round-off."""


def survive_tolerance_gbps(net: Network) -> float:
    """Gbps of unmet traffic treated as zero when judging whether a state survives."""
    return max(0.01, SURVIVE_TOL_REL * float(net.demands["demand_gbps"].sum()))


@dataclass
class StateAssessment:
    """How one network state carries its traffic.

    Attributes
    ----------
    routing
        The min-MLU routing (utilisation per link; may exceed 1.0 in an overloaded state).
    unmet_gbps
        Per demand: traffic that cannot be carried at <= 100 % utilisation.
    reason
        Per demand: ``""``, ``capacity``, ``no_path_within_slo`` or ``disconnected``.
    traffic_class
        Per demand: its traffic class.
    mlu
        Utilisation the traffic needs (max over links of the min-MLU routing).
    status
        Worst solver status of the solves made.
    solves
        The TE objectives solved (``min-mlu``, and ``max-throughput`` when overloaded).
    method
        The min-MLU engine: ``path`` or ``srcflow``.
    warm
        ``srcflow`` with ``keep_flows``: the per-source flows and instance (a warm start for failed states).
    stages_skipped
        The max-throughput class stages not solved because the min-MLU routing proves their optimum (0 unmet;
        :func:`~backbone.solver.te.objectives.fitting_classes`); empty when none ran or none was skipped.
    """

    routing: TEResult
    unmet_gbps: pd.Series
    reason: pd.Series
    traffic_class: pd.Series
    mlu: float
    status: str
    solves: tuple[str, ...]
    method: str = "path"
    warm: Any = None
    stages_skipped: tuple[str, ...] = ()

    @property
    def mlu_lower_bound(self) -> float:
        """A proven lower bound on the utilisation any routing of this state needs (NaN when none is proven)."""
        lb = self.routing.summary.lower_bound
        return float("nan") if lb is None else float(lb)

    @property
    def gap(self) -> float:
        """``(mlu - mlu_lower_bound) / mlu``: how far the MLU may be above the optimum (NaN without a bound)."""
        lb = self.mlu_lower_bound
        return (self.mlu - lb) / self.mlu if self.mlu > 0 else 0.0 if not math.isnan(lb) else float("nan")

    @property
    def unmet_known(self) -> bool:
        """Whether the unmet traffic was measured (false: overloaded, shortfall not measured)."""
        return not bool(self.unmet_gbps.isna().any())

    @property
    def unmet_total_gbps(self) -> float:
        """Unmet Gbps over every demand; NaN when unknown."""
        return float(self.unmet_gbps.sum()) if self.unmet_known else float("nan")

    @property
    def overloaded(self) -> bool:
        """Whether the traffic needs more than 100 % of some link."""
        return bool(self.mlu > 1 + OVERLOAD_TOL)

    @property
    def link_utilisation(self) -> pd.Series:
        """Utilisation per link of the min-MLU routing."""
        return self.routing.links["utilisation"].astype(float)

    def unmet_by_class(self) -> dict[str, float]:
        """Unmet Gbps per traffic class (every class present in the demands; NaN when unknown)."""
        g = self.unmet_gbps.groupby(self.traffic_class).sum(min_count=1) if self.unmet_known else pd.Series(dtype=float)
        present = set(self.traffic_class.unique())  # once, not per class (40k demands: 0.1 s each)
        return {c: float(g.get(c, 0.0)) if self.unmet_known else float("nan") for c in TRAFFIC_CLASSES
                if c in present}

    @property
    def slo_unmet_gbps(self) -> float:
        """Gbps of demand with no path within its latency SLO in this state (``unmet_by_reason``'s
        ``no_path_within_slo``; 0 when none)."""
        return float(self.unmet_by_reason().get(REASON_SLO, 0.0))

    def unmet_by_reason(self) -> dict[str, float]:
        """Unmet Gbps per reason."""
        u = self.unmet_gbps[self.unmet_gbps > 0]
        return {str(k): float(v) for k, v in u.groupby(self.reason.reindex(u.index)).sum().items()}

    def summary(self) -> ImpactFigures:
        """The figures, typed: ``mlu`` (with ``mlu_lower_bound`` and ``gap``), ``overloaded``, ``unmet_gbps``
        (NaN when unknown: overloaded, shortfall not measured), by class and reason, ``solves``, ``method``
        (:meth:`~backbone.solver.te.sections.ImpactFigures.document` for the JSON-ready values)."""
        return ImpactFigures(mlu=self.mlu, mlu_lower_bound=self.mlu_lower_bound, gap=self.gap,
                             overloaded=self.overloaded, unmet_gbps=self.unmet_total_gbps,
                             unmet_known=self.unmet_known, unmet_by_class=self.unmet_by_class(),
                             unmet_by_reason=self.unmet_by_reason(), status=self.status, solves=list(self.solves),
                             method=self.method, definition=self.definition)

    @property
    def definition(self) -> str:
        """What ``mlu`` and ``unmet_gbps`` mean for this state: the routing engine and the one meaning of unmet."""
        if self.method != "path" or source_flow_routing(self.routing):
            routing = "min-MLU routing over every path (source-flow engine; within gap of the optimum)"
        elif self.routing.summary.method == "colgen" and self.routing.summary.auto:
            routing = ("min-MLU routing over every path (column generation: the path LP over the candidate paths "
                       "had a proven gap above 1 %)")
        elif self.routing.summary.method == "colgen":
            routing = "min-MLU routing over every path (column generation)"
        else:
            routing = "min-MLU routing over the latency-admissible candidate paths"
        return f"utilisation: {routing}; unmet: traffic that cannot be carried at <= 100 % utilisation"


_STATUS_ORDER = {"optimal": 0, "feasible": 1}


def apply_impact_unmet(result: TEResult, state: StateAssessment) -> TEResult:
    """``result`` with its demand table and record saying unmet in the one meaning (the impact's: traffic that
    cannot be carried at <= 100 % utilisation), from ``state``, the impact of the same network. A new
    :class:`TEResult` (its demand table a copy); ``result`` is left as it is.

    A routing that overloads links (min-MLU above 100 %) routes every demand, so its own shortfall is 0 while the
    network cannot carry the traffic. For such a routing, when the impact measured the shortfall:

    * ``demands.unmet_gbps`` and ``reason`` become the impact's, ``carried_gbps`` becomes ``demand_gbps -
      unmet_gbps`` (carried at <= 100 %), and ``routed_gbps`` is what the routing puts on its paths (the flows
      of ``paths`` and ``links``, above capacity);
    * the record's ``unmet_gbps``, ``carried_gbps``, ``by_class`` and ``unmet_by_reason`` follow the table, and
      ``routed_gbps`` is added.

    When the shortfall is unknown (not measured), the record's ``unmet_gbps`` and ``carried_gbps`` are None (never
    0) and a note says why. A routing within capacity is returned as it is (its unmet already is the impact's).
    """
    if not state.overloaded or result.mlu <= 1 + OVERLOAD_TOL:
        return result
    d, notes = result.demands.copy(), result.summary.notes
    routed = d["carried_gbps"].astype(float)
    d["routed_gbps"] = routed
    routed_gbps = float(routed.sum())
    if not state.unmet_known:
        return replace(result, demands=d, summary=result.summary.updated(
            routed_gbps=routed_gbps, unmet_gbps=None, carried_gbps=None, notes=[*notes, (
                f"the routing overloads links (MLU {100 * result.mlu:.0f} %); the traffic that cannot be carried at "
                "<= 100 % utilisation was not measured: unmet_gbps and carried_gbps are unknown (routed_gbps is what "
                "the routing puts on its paths)")]))
    unmet = state.unmet_gbps.reindex(d.index).fillna(0.0).clip(lower=0.0).to_numpy(float)
    h = d["demand_gbps"].to_numpy(float)
    unmet = np.minimum(unmet, h)
    d["unmet_gbps"] = unmet
    d["carried_gbps"] = h - unmet
    d["reason"] = np.where(unmet > 0, state.reason.reindex(d.index).fillna("").astype(str).to_numpy(), "")
    d.loc[(d["unmet_gbps"] > 0) & (d["reason"] == ""), "reason"] = REASON_CAPACITY
    grouped = d.groupby("traffic_class")[["demand_gbps", "carried_gbps", "unmet_gbps"]].sum()
    by_reason = d[d["unmet_gbps"] > 0].groupby("reason")["unmet_gbps"].agg(["sum", "count"])
    return replace(result, demands=d, summary=result.summary.updated(
        routed_gbps=routed_gbps,
        by_class={str(c): {k: float(v) for k, v in r.items()} for c, r in grouped.iterrows()},
        unmet_by_reason={str(k): {"gbps": float(v["sum"]), "demands": int(v["count"])}
                         for k, v in by_reason.iterrows()},
        unmet_gbps=float(unmet.sum()), carried_gbps=float((h - unmet).sum()),
        notes=[*notes, (
            f"the routing overloads links (MLU {100 * result.mlu:.0f} %): it routes {routed_gbps:,.1f} Gbps "
            "(routed_gbps), but only carried_gbps fits at <= 100 % utilisation; unmet_gbps is the rest (the "
            "impact's)")]))


def assess_state(net: Network, k_paths: int = 4, backend: str = "highs", time_limit_s: float = 60.0,
                 path_provider: Callable[..., Any] | None = None, routing: TEResult | None = None,
                 lp_method: str = "auto", shortfall: bool = True, *, method: str = "path", warm: Any = None,
                 gap_tol: float | None = None, keep_flows: bool = False,
                 progress: ProgressFn | None = None, escalate_above_mlu: float | None = None,
                 overloaded_above_mlu: float | None = None) -> StateAssessment:
    """Utilisation and unmet traffic of one network state (the one definition; see the module doc).

    Parameters
    ----------
    net
        The state (a failure already applied).
    k_paths
        Candidate paths per demand.
    path_provider
        Optional candidate-path function (failure sweeps derive the failed topology's paths from the
        intact network's).
    routing
        A min-MLU path routing of ``net`` with the same ``k_paths`` already solved (``backbone te``'s default):
        reused instead of solving it again.
    shortfall
        Measure an overloaded state's shortfall (max-throughput at 100 %). False leaves the unmet
        traffic of an overloaded state unknown (NaN): enough to tell that it does not survive.
    method
        ``path`` (the path LP over ``k_paths`` candidates) or ``srcflow`` (every path, no latency SLOs; the shortfall
        of an overloaded state is not measured: unknown).
    warm, gap_tol, keep_flows, progress
        ``srcflow`` only: a warm start (the ``warm`` of an assessment of a network this state derives from),
        the gap target, whether to keep this state's flows as a warm start, and progress reports.
    escalate_above_mlu
        ``path`` only: column generation after the path LP only when its MLU is above this (see
        :func:`~backbone.solver.te.solve_te`); failure sweeps pass 100 %, where the verdict changes.
    overloaded_above_mlu
        ``path`` only, with ``shortfall`` false: no column generation after the path LP when its proven bound over
        every admissible routing is above this (see :func:`~backbone.solver.te.solve_te`): the state is overloaded
        whatever it would find, and its unmet traffic is not measured anyway. Ignored with ``shortfall`` (the
        max-throughput LP routes over the min-MLU routing's paths, so it gets column generation's).

    Raises
    ------
    SolverError
        Backend trouble or no solution within the time limit.
    ValidationError
        ``srcflow`` asked for with latency-SLO demands.
    """
    if method == "srcflow":
        from backbone.solver.te import solve_source_flows

        flows, inst = warm if warm is not None else (None, None)
        routing, kept = solve_source_flows(net, time_limit_s, warm=flows, warm_instance=inst, gap_tol=gap_tol,
                                           keep_flows=keep_flows, progress=progress)
        d = routing.demands
        mlu = float(routing.mlu)
        unmet = d["unmet_gbps"].astype(float)
        if mlu > 1 + OVERLOAD_TOL:  # no max-throughput LP at this scale: the shortfall is unknown
            unmet = pd.Series(np.nan, index=unmet.index)
        return StateAssessment(routing, unmet, d["reason"].astype(str), d["traffic_class"].astype(str), mlu,
                               routing.summary.status, ("min-mlu",), "srcflow", kept)
    if method != "path":
        raise ValueError(f"unknown method {method!r}")
    if routing is None or routing.summary.objective != "min-mlu":
        routing = solve_te(net, TEOptions.model_validate(dict(
            objective="min-mlu", formulation="path", k_paths=k_paths, backend=backend, time_limit_s=time_limit_s,
            lp_method=lp_method)), path_provider=path_provider, escalate_above_mlu=escalate_above_mlu,
            overloaded_above_mlu=None if shortfall else overloaded_above_mlu)
    d = routing.demands
    unmet = d["unmet_gbps"].astype(float)
    reason = d["reason"].astype(str)
    statuses = [routing.summary.status]
    solves: tuple[str, ...] = ("min-mlu",)
    skipped: tuple[str, ...] = ()
    mlu = float(routing.mlu)
    if mlu > 1 + OVERLOAD_TOL and (not shortfall or shortfall_unmeasured(routing)):
        unmet = pd.Series(np.nan, index=unmet.index)  # not measured (at the source-flow engine's scale: no LP)
    elif mlu > 1 + OVERLOAD_TOL:
        capped = _shortfall_routing(net, routing, k_paths, backend, time_limit_s, path_provider, lp_method)
        unmet = capped.demands["unmet_gbps"].astype(float)
        reason = capped.demands["reason"].astype(str)
        statuses.append(capped.summary.status)
        solves = ("min-mlu", "max-throughput")
        skipped = tuple(capped.summary.stages_skipped or ())
    status = max(statuses, key=lambda s: _STATUS_ORDER.get(s, 9))
    return StateAssessment(routing, unmet, reason, d["traffic_class"].astype(str), mlu, status, solves,
                           stages_skipped=skipped)


def source_flow_routing(routing: TEResult) -> bool:
    """Whether ``routing`` came from the source-aggregated engine (``colgen`` above its master threshold, or
    ``srcflow``)."""
    s = routing.summary
    return s.method == "srcflow" or isinstance(s.colgen, SourceFlowFigures)


def shortfall_unmeasured(routing: TEResult) -> bool:
    """Whether an overloaded state routed by ``routing`` has its shortfall left unknown: the routing came from the
    source-flow engine with at least :data:`~backbone.solver.te.AUTO_COLGEN_MIN_DEMANDS` demands, where no
    max-throughput LP fits (at 1.55 M demands it took ``backbone te`` to 14.8 GB). Below that the shortfall is
    measured (max-throughput over every path, time-limited)."""
    return source_flow_routing(routing) and len(routing.demands) >= AUTO_COLGEN_MIN_DEMANDS


def _shortfall_routing(net: Network, routing: TEResult, k_paths: int, backend: str, time_limit_s: float,
                       path_provider: Callable[..., Any] | None, lp_method: str) -> TEResult:
    """Max-throughput at 100 % of an overloaded state, over the same paths as its min-MLU ``routing``.

    An exact path routing that keeps its model (:func:`~backbone.solver.te.resolve_te`) lends it: the same
    candidate paths, no path search and no model building again.
    When that routing came from column generation over every path (``solve_te``'s ``auto`` after a path LP with
    a wide gap, or ``colgen``), so does the shortfall: measured over ``k_paths`` candidates it would overstate
    what cannot be carried (on TopoHub's world backbone, 49,090 against 44,090 Gbps). If column generation does
    not finish (three quarters of the time), the path LP runs in the rest and the routing carrying more is kept
    (below :data:`~backbone.solver.te.AUTO_COLGEN_MIN_DEMANDS` demands only: above, the path LP does not fit).
    """
    def capped(method: str, seconds: float) -> TEResult:
        return solve_te(net, TEOptions.model_validate(dict(
            objective="max-throughput", formulation="path", k_paths=k_paths, backend=backend, time_limit_s=seconds,
            utilisation_ceiling=1.0, lp_method=lp_method, method=method)), path_provider=path_provider)

    if routing.summary.method != "colgen":
        same = resolve_te(routing, "max-throughput", backend=backend, time_limit_s=time_limit_s,
                          utilisation_ceiling=1.0, lp_method=lp_method)  # the routing's paths and model reused
        return same if same is not None else capped("auto", time_limit_s)
    t0 = time.perf_counter()
    every = resolve_te(routing, "max-throughput", backend=backend, time_limit_s=0.75 * time_limit_s,
                       utilisation_ceiling=1.0, lp_method=lp_method)  # its pool seeded with the routing's columns
    every = every if every is not None else capped("colgen", 0.75 * time_limit_s)
    if every.summary.status == "optimal" or len(net.demands) >= AUTO_COLGEN_MIN_DEMANDS:
        return every  # at that size the path LP is what does not fit (auto would not run it either)
    plain = capped("exact", max(1.0, time_limit_s - (time.perf_counter() - t0)))
    return plain if (plain.summary.carried_gbps or 0.0) > (every.summary.carried_gbps or 0.0) else every


@dataclass(frozen=True, slots=True)
class FailureImpact:
    """A failure's impact against the intact baseline (the module doc; :func:`failure_impact` builds it).

    Each part is reported apart; NaN where unknown (an overloaded state whose shortfall was not measured), never 0.

    Attributes
    ----------
    impact_gbps
        ``unmet_gbps + slo_violation_gbps + lost_gbps``: the figure every table and chart ranks by.
    unmet_gbps
        Traffic that cannot be carried at <= 100 % utilisation beyond what the intact network leaves unmet.
    unmet_by_class
        ``unmet_gbps`` per traffic class (empty when unknown).
    unmet_disconnected_gbps, unmet_capacity_gbps
        The part of ``unmet_gbps`` whose endpoints the failure cuts apart, and the part short of capacity.
    slo_violation_gbps, slo_violations, slo_violation_demands
        Demand that now has no path within its latency SLO: Gbps, demands, and the first 50 demand ids.
    lost_gbps
        Demand to or from the failed sites.
    paused_gbps
        Demand of the classes that pause in a failure state (not offered: neither unmet nor carried; not in
        ``impact_gbps``).
    unmet_gbps_total
        Everything unmet in the state, the baseline's included (NaN when unknown).
    mlu, mlu_lower_bound, gap
        The utilisation the traffic needs (above 1.0: overload), a proven lower bound on it (NaN when none) and
        ``(mlu - mlu_lower_bound) / mlu``.
    overloaded
        Whether the traffic needs more than 100 % of some link.
    survived
        Whether ``unmet_gbps + slo_violation_gbps`` is within :func:`survive_tolerance_gbps` (False when unknown).
    """

    impact_gbps: float
    unmet_gbps: float
    unmet_by_class: Mapping[str, float]
    unmet_disconnected_gbps: float
    unmet_capacity_gbps: float
    slo_violation_gbps: float
    slo_violations: int
    slo_violation_demands: tuple[str, ...]
    lost_gbps: float
    paused_gbps: float
    unmet_gbps_total: float
    mlu: float
    mlu_lower_bound: float
    gap: float
    overloaded: bool
    survived: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready record (NaN kept: the file and API edge writes it as null)."""
        return {"impact_gbps": self.impact_gbps, "unmet_gbps": self.unmet_gbps,
                "unmet_by_class": dict(self.unmet_by_class),
                "unmet_disconnected_gbps": self.unmet_disconnected_gbps,
                "unmet_capacity_gbps": self.unmet_capacity_gbps, "slo_violation_gbps": self.slo_violation_gbps,
                "slo_violations": self.slo_violations, "slo_violation_demands": list(self.slo_violation_demands),
                "lost_gbps": self.lost_gbps, "paused_gbps": self.paused_gbps,
                "unmet_gbps_total": self.unmet_gbps_total, "mlu": self.mlu,
                "mlu_lower_bound": self.mlu_lower_bound, "gap": self.gap, "overloaded": self.overloaded,
                "survived": self.survived}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> FailureImpact:
        """The impact of a record as :meth:`to_dict` wrote it (null read as NaN, the figure unknown).

        Raises
        ------
        KeyError
            A field is missing.
        """
        def figure(key: str) -> float:
            v = record[key]
            return float("nan") if v is None else float(v)

        return cls(impact_gbps=figure("impact_gbps"), unmet_gbps=figure("unmet_gbps"),
                   unmet_by_class={str(k): float("nan") if v is None else float(v)
                                   for k, v in (record["unmet_by_class"] or {}).items()},
                   unmet_disconnected_gbps=figure("unmet_disconnected_gbps"),
                   unmet_capacity_gbps=figure("unmet_capacity_gbps"),
                   slo_violation_gbps=figure("slo_violation_gbps"), slo_violations=int(record["slo_violations"]),
                   slo_violation_demands=tuple(str(x) for x in record["slo_violation_demands"]),
                   lost_gbps=figure("lost_gbps"),
                   paused_gbps=float(record.get("paused_gbps") or 0.0),  # files written before pausing had none
                   unmet_gbps_total=figure("unmet_gbps_total"), mlu=figure("mlu"),
                   mlu_lower_bound=figure("mlu_lower_bound"), gap=figure("gap"),
                   overloaded=bool(record["overloaded"]), survived=bool(record["survived"]))


def failure_impact(baseline: StateAssessment, state: StateAssessment, lost_gbps: float,
                   tolerance_gbps: float, paused_gbps: float = 0.0) -> FailureImpact:
    """A failure's impact against the intact baseline (see the module doc).

    Parameters
    ----------
    baseline
        The intact network's assessment.
    state
        The failure state's assessment.
    lost_gbps
        Demand to or from the failed sites.
    tolerance_gbps
        Unmet Gbps treated as zero when judging survival (:func:`survive_tolerance_gbps`).
    paused_gbps
        Demand of the pausing classes, which ``state`` does not offer (its demands are not in ``state``).

    Returns
    -------
    FailureImpact
        Unmet (by class, disconnected, short of capacity), SLO violations and lost traffic apart, their sum,
        the utilisation the state needs and whether it survived.
    """
    idx = state.unmet_gbps.index
    base = baseline.unmet_gbps.reindex(idx).fillna(0.0)
    base_reason = baseline.reason.reindex(idx).fillna("")
    state_unmet = state.unmet_gbps
    if not state.unmet_known:  # the SLO part is known all the same: no admissible path, whatever the capacity
        routed = state.routing.demands["unmet_gbps"].reindex(idx).astype(float)
        state_unmet = state_unmet.fillna(routed.where(state.reason == REASON_SLO))
    extra = (state_unmet - base).clip(lower=0.0)
    slo_new = (state.reason == REASON_SLO) & (base_reason != REASON_SLO) & (extra > 0)
    slo_gbps = float(extra[slo_new].sum())
    # capacity and cut-apart demand: per class, the state's unmet minus the baseline's over the same
    # demands (per-class totals are unique at the optimum; per-demand splits are not)
    rest = ~slo_new
    cls = state.traffic_class
    by_class: dict[str, float] = {}
    for c in TRAFFIC_CLASSES:
        m = rest & (cls == c)
        if m.any():
            v = float(state.unmet_gbps[m].sum() - base[m].sum())
            by_class[c] = v if v > tolerance_gbps * 1e-3 else 0.0
    unmet = float(sum(by_class.values()))
    disconnected = float(extra[(state.reason == REASON_DISCONNECTED) & rest].sum())
    capacity = float(extra[(state.reason == REASON_CAPACITY) & rest].sum())
    if not (state.unmet_known and baseline.unmet_known):  # overloaded, shortfall not measured: not survived
        unmet, by_class, disconnected, capacity = float("nan"), {}, float("nan"), float("nan")
    viol = idx[slo_new]
    return FailureImpact(
        impact_gbps=unmet + slo_gbps + float(lost_gbps), unmet_gbps=unmet, unmet_by_class=by_class,
        unmet_disconnected_gbps=disconnected, unmet_capacity_gbps=capacity, slo_violation_gbps=slo_gbps,
        slo_violations=len(viol), slo_violation_demands=tuple(str(x) for x in viol[:50]),
        lost_gbps=float(lost_gbps), paused_gbps=float(paused_gbps), unmet_gbps_total=state.unmet_total_gbps, mlu=state.mlu,
        mlu_lower_bound=state.mlu_lower_bound, gap=state.gap, overloaded=state.overloaded,
        survived=bool(unmet + slo_gbps <= tolerance_gbps))


def impact_key(impact: FailureImpact) -> tuple[float, ...]:
    """Sort key of a failure's impact (larger is worse): unknown impact first (an overloaded state whose shortfall
    was not measured), then impact, then MLU."""
    unknown = math.isnan(impact.impact_gbps)
    return (float(unknown), 0.0 if unknown else impact.impact_gbps,
            0.0 if unknown else impact.unmet_gbps + impact.slo_violation_gbps, impact.mlu)


def slo_violation_summary(impacts: Sequence[FailureImpact], intact_gbps: float | None) -> SloViolations:
    """Latency-SLO violations of a network's failure states (their :func:`failure_impact`) and of its intact
    state: ``states`` (impacts with ``slo_violation_gbps`` > 0), ``worst_gbps`` (the largest; 0 when none),
    ``demands`` (over every state, counted per state), and ``intact_gbps`` (given: the intact state's
    :attr:`StateAssessment.slo_unmet_gbps`, None when unknown). ``plan.json`` holds it before and after the
    upgrades (``slo_violations``, ``slo_violations_after``)."""
    gbps = np.array([i.slo_violation_gbps for i in impacts], dtype=float)
    return SloViolations(states=int((gbps > 0).sum()), worst_gbps=float(gbps.max()) if gbps.size else 0.0,
                         demands=int(sum(i.slo_violations for i in impacts)), intact_gbps=intact_gbps)
