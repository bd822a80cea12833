"""Survivable design: the cheapest upgrades and new routes that carry every failure state of a kind.

The full problem -- one routing block per failure state, ~100 states of ~1,400 demands over ~4 paths each -- is
large, and most states never bind. So the design is iterated (constraint generation over states, as in Benders-style
row generation):

1. solve the MIP on the intact state plus a *working set* of failure states;
2. build the design and sweep **every** state of the kind with the failure sweep
   (:mod:`backbone.solver.failures`, the same impact definition as ``failures`` and ``plan``);
3. add the states that are violated to the working set and repeat, until none is violated.

The MIP is *restricted* (the candidates it opens, ``k`` paths per demand), so its optimum and dual bound are
reported as the **restricted optimum** with that restriction beside them, never as a bound on the planning problem.
The **lower bound** (``lower_bound_usd``, and ``gap = (cost - bound) / cost``) is the better of two LP relaxations
over every candidate and every path (intact state and working set), within ``bound_time_limit_s``:
:mod:`backbone.solver.design.survivable.slo_bound`'s path LP with the latency SLOs kept and
:mod:`backbone.solver.design.survivable.bound`'s arc-flow LP with them dropped (``bound.method`` names the winner).

Model (one block per state ``s``; loops run over states, never over links, demands or paths)::

    modules:   y_l in {0, .., Y_l}  integer (existing links: upgrade modules; candidates: built modules)
    build:     b_c in {0, 1}        candidates with fixed_cost_usd > 0:  y_c <= Y_c b_c
    cost:      sum_l module_cost_l y_l + sum_c fixed_cost_c b_c
    demand:    sum_{p in P_s(d)} f_{s,p} + u_{s,d} = h_{s,d}               (every demand d, state s)
    capacity:  sum_p A_s[p,a] f_{s,p} - t_s m_l(a) y_l(a) <= t_s cap_l(a)  (t_s: ceiling of state s)
    unmet:     0 <= u_{s,d} <= h_{s,d}, penalised; fixed at h_{s,d} where P_s(d) is empty

``h_{s,d}`` is the demand the state offers: all of it intact; in a failure state only the classes that survive
(:func:`backbone.failure_policy.carried_in_failure`; a pausing class, by default ``training-sync``, is not offered
there), the policy the sweeps judge the states by too.

Demands with the same source, destination and SLO have the same admissible paths and are one commodity ``d`` (exact
for what can be carried). Paths ``P_s`` are the latency-admissible candidate paths (TE's rule) on the network with a
set ``K`` of candidates open and state ``s`` applied. A path over an unbuilt candidate has no capacity; every path
the design uses survives in the k shortest paths of the built network (removing links only removes paths), so TE on
the built network carries what the MIP carried, whatever it builds. ``K`` is the routes needed
(:func:`routes_needed`): opening every candidate would crowd TE's k paths onto new routes.

A state is *excused* only when no design can help it: some demand has no admissible path in it
even with every candidate built (the reason names the demand and why), or every upgrade and
candidate at its maximum is still short.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backbone.failure_policy import carried_in_failure, class_failure_policy
from backbone.model import Network
from backbone.serialize import count_text
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.core.sparse import selector
from backbone.solver.design.summary import (
    DesignBound,
    DesignIteration,
    DesignStart,
    RestrictedOptimum,
    SurvivableDesignSummary,
    design_gap,
)
from backbone.solver.design.survivable.bound import bound_states
from backbone.solver.design.survivable.model import (
    Commodities,
    MipDesign,
    StateBlock,
    apply_design,
    full_network,
    routes_needed,
    solve_mip,
    state_block,
    upgrade_table,
)
from backbone.solver.design.survivable.options import SurviveOptions
from backbone.solver.design.survivable.slo_bound import best_lower_bound
from backbone.solver.design.survivable.survivability import ExcusedState, Survivability
from backbone.solver.design.survivable.sweeps import measure_overloaded, sweep_key, sweep_states
from backbone.solver.failures import (
    FailureOptions,
    FailureScenario,
    ScenarioRecord,
    enumerate_scenarios,
)
from backbone.solver.failures.impact import survive_tolerance_gbps

logger = logging.getLogger(__name__)

DESIGN_BUDGET_FACTOR = 3.0
"""Wall-clock budget of a whole survivable design, in multiples of its per-solve ``time_limit_s``."""

__all__ = ["SURVIVE_KINDS", "SurvivableDesign", "SurviveOptions", "design_survivable", "full_network"]

SURVIVE_KINDS = ("link", "srlg", "site", "srlg,link")
"""Failure kinds a design can survive (every single element of the kind)."""


@dataclass
class SurvivableDesign:
    """What to build so every state of a failure kind is carried, and how sure we are.

    Attributes
    ----------
    upgrades
        One row per upgraded link or built candidate: ``link``, ``action`` (``upgrade`` or
        ``new route``), ``kind`` (link kind, or the candidate's kind), ``modules``, ``module_gbps``,
        ``added_gbps``, ``fixed_cost_usd``, ``cost_usd``, ``lead_time_quarters`` (a new route's own, a link
        upgrade's the scenario parameter ``upgrade_lead_quarters``), ``lead_time_from`` (which of the two),
        ``protects`` (the failure states in the working set that need it).
    network_after
        The network with the upgrades and built candidates (a canonical scenario).
    iterations
        Per iteration, a :class:`DesignIteration`: its working set, the MIP's cost and dual bound (of its
        restricted model only), the designs tried (:class:`DesignStart`), the seconds.
    records_after
        The last sweep's scenario records (on ``network_after``).
    not_survivable
        The states excused because no candidate can help (:class:`ExcusedState`: ``scenario``, ``reason``,
        ``gbps``).
    violated
        States still violated after the last iteration (empty when the design converged).
    lower_bound_usd, gap
        The true lower bound (:mod:`backbone.solver.design.survivable.bound`; None when no LP finished) and
        ``(cost_usd - lower_bound_usd) / cost_usd``; ``bound`` (:class:`DesignBound`) says how it was proven.
    restricted_optimum
        The last MIP's :class:`RestrictedOptimum`: optimal (or bounded) only among designs that open the candidates
        it opened and route over its ``k`` paths, in its working set.
    failure_policy
        Each traffic class's failure policy in the design (:mod:`backbone.failure_policy`): failure states offer
        only the classes that survive.
    """

    status: str
    failure_kind: str
    cost_usd: float
    lower_bound_usd: float | None
    gap: float | None
    upgrades: pd.DataFrame
    network_after: Network
    iterations: list[DesignIteration]
    states_examined: int
    working_set: list[str]
    records_after: list[ScenarioRecord]
    not_survivable: list[ExcusedState]
    violated: list[str]
    ceiling: float
    failure_ceiling: float
    converged: bool
    seconds: float
    bound: DesignBound
    restricted_optimum: RestrictedOptimum
    model: dict[str, int] = field(default_factory=dict)
    failure_policy: dict[str, str] = field(default_factory=dict)

    @property
    def survived(self) -> int:
        """States of the kind the design carries (every one not excused and not violated)."""
        return sum(1 for r in self.records_after if r.impact.survived)

    def survivability(self) -> Survivability:
        """What the design claims (:class:`Survivability`): states examined, survived, excused and violated."""
        return Survivability(failure_kind=self.failure_kind, states=self.states_examined, survived=self.survived,
                             not_survivable=self.not_survivable, violated=self.violated)

    def summary(self) -> dict[str, Any]:
        """The summary's JSON document (:meth:`typed_summary` dumped)."""
        return self.typed_summary().document()

    def typed_summary(self) -> SurvivableDesignSummary:
        """The :class:`~backbone.solver.design.summary.SurvivableDesignSummary`: cost, bound, survivability, the
        iterations, what to buy and the map values."""
        up = self.upgrades
        return SurvivableDesignSummary(
            status=self.status, failure_kind=self.failure_kind, cost_usd=self.cost_usd,
            lower_bound_usd=self.lower_bound_usd, gap=self.gap, ceiling=self.ceiling,
            failure_ceiling=self.failure_ceiling, converged=self.converged,
            states_examined=self.states_examined, states_added=len(self.working_set),
            states_needed=len({s for p in up["protects"] for s in p} - {"intact"}) if len(up) else 0,
            working_set=self.working_set, iterations=self.iterations, survivability=self.survivability(),
            links_upgraded=int((up["action"] == "upgrade").sum()) if len(up) else 0,
            routes_built=int((up["action"] == "new route").sum()) if len(up) else 0,
            bound=self.bound, restricted_optimum=self.restricted_optimum, failure_policy=self.failure_policy,
            upgrades=up.to_dict("records"), model=self.model, seconds=round(self.seconds, 3), map={
                "link_values": {"added_gbps": {str(r.link): float(r.added_gbps) for r in up.itertuples()}},
                "failed_links": []})


def _excuse(full: Network, block: StateBlock, base_has: np.ndarray, lost: np.ndarray) -> tuple[float, str]:
    """Gbps of demand no design can carry in this state (no admissible path even with every candidate,
    where the intact full network had one) and the reason."""
    from scipy.sparse.csgraph import connected_components

    d = full.demands
    stuck = base_has & ~block.has_path & ~lost & block.offered_demands()  # a paused demand is not offered
    if not stuck.any():
        return 0.0, ""
    keep = ~full.links.index.isin(block.failed)
    site_pos = pd.Series(np.arange(len(full.sites)), index=full.sites.index)
    a = site_pos.loc[full.links["site_a"]].to_numpy()[keep]
    b = site_pos.loc[full.links["site_b"]].to_numpy()[keep]
    n = len(site_pos)
    _, label = connected_components(selector(a, n, n, cols=b), directed=False)
    src = site_pos.loc[d["src"]].to_numpy()
    dst = site_pos.loc[d["dst"]].to_numpy()
    cut = stuck & (label[src] != label[dst])
    slo = stuck & ~cut
    # a site every link of which (candidates included) is in the failure is off the network: nothing can reach it
    isolated = np.bincount(np.concatenate([a, b]), minlength=n) == 0
    alone = cut & (isolated[src] | isolated[dst])
    apart = cut & ~alone
    parts = []
    if alone.any():
        gone = sorted({str(full.sites.index[i]) for i in np.concatenate([src[alone], dst[alone]]) if isolated[i]})
        parts.append(f"{count_text(int(alone.sum()), 'demand')} ({d['demand_gbps'][alone].sum():,.0f} Gbps) to or from "
                     f"{', '.join(gone)}, which the failure takes off the network (every link and candidate route "
                     "of the site is in it)")
    if apart.any():
        sites = sorted({s for s, t in zip(d["src"][apart], d["dst"][apart], strict=True) for s in (s, t)})
        parts.append(f"{count_text(int(apart.sum()), 'demand')} ({d['demand_gbps'][apart].sum():,.0f} Gbps) cut apart even with "
                     f"every candidate built (sites {', '.join(sites[:6])}{'…' if len(sites) > 6 else ''})")
    if slo.any():
        ex = d[slo].iloc[0]
        parts.append(f"{count_text(int(slo.sum()), 'demand')} ({d['demand_gbps'][slo].sum():,.0f} Gbps) "
                     f"{'has' if int(slo.sum()) == 1 else 'have'} no path within their "
                     f"latency SLO even with every candidate built (e.g. {ex['src']}→{ex['dst']}, SLO "
                     f"{ex['slo_rtt_ms']:.0f} ms RTT)")
    return float(d["demand_gbps"].to_numpy(float)[stuck].sum()), "; ".join(parts)


def design_survivable(net: Network, options: SurviveOptions | None = None, *,
                      sweep_options: FailureOptions | None = None,
                      initial_records: Sequence[ScenarioRecord] | None = None,
                      initial_states: Sequence[str] = (), budget_factor: float = DESIGN_BUDGET_FACTOR,
                      progress: ProgressFn | None = None,
                      sweeps: dict[str, list[ScenarioRecord]] | None = None) -> SurvivableDesign:
    """Cheapest upgrades and new routes so the intact network fits within ``utilisation_ceiling`` and every
    single failure of kind ``survive`` is carried within ``failure_utilisation_ceiling`` (see the module doc).

    Parameters
    ----------
    net
        The network (its ``candidates`` table lists the routes that may be built).
    options
        What to survive, the ceilings, paths, backend and limits (:class:`SurviveOptions`; default: its
        defaults). ``time_limit_s`` is per MIP solve (each iteration solves one MIP, and an LP when capacity
        runs out); ``max_iterations`` MIP solves at most; ``candidates`` false builds no new route.
    sweep_options
        Options of the sweeps (workers, engine); ``kind`` is set to ``survive`` and ``k_paths`` to the
        design's ``k_paths``.
    initial_records
        A sweep of ``net`` over ``survive`` already made (its records); saves the first sweep.
    initial_states
        Failure states to put in the working set from the first MIP on, whether or not the first sweep finds
        them violated (a warm start: e.g. the states an earlier design of a smaller demand found binding).
        Ids not of ``survive`` are ignored. Any working set gives a valid bound (a relaxation of all
        states), so this changes how fast the design converges, never what it proves.
    budget_factor
        Wall-clock budget of the whole design (sweeps and MIPs) in multiples of ``time_limit_s``: past it the
        loop stops after its next sweep and reports the design as not converged.
    progress
        ``callable(fraction, message)`` following the iterations.
    sweeps
        Quick sweeps made, by :func:`~backbone.solver.design.survivable.sweeps.sweep_key`: a network swept before is
        not swept again (the sweep is deterministic), and each sweep made is added (a retry passes the same mapping).

    Raises
    ------
    SolverError
        When the MIP finds no solution within its time limit.

    Example
    -------
    >>> design = design_survivable(net, SurviveOptions(survive="link", utilisation_ceiling=0.7))  # doctest: +SKIP
    """
    progress = progress or no_progress
    t_start = time.perf_counter()
    opts = options if options is not None else SurviveOptions.model_validate({})
    survive, time_limit_s, max_iterations = opts.survive, opts.time_limit_s, opts.max_iterations
    run = _start_run(net, opts, sweep_options, initial_records, progress, initial_states)
    run.sweeps = sweeps if sweeps is not None else {}
    # the whole design (sweeps and MIPs of every iteration) gets budget_factor x time_limit_s of wall
    # time: past it, the loop stops after its next sweep and reports the design as not converged
    design_deadline = time.perf_counter() + budget_factor * time_limit_s
    for it in range(1, max_iterations + 1):
        t_sweep = time.perf_counter()
        if survive != "none" and run.records is None:
            progress(min(0.95, 0.1 + 0.8 * (it - 1) / max_iterations), f"iteration {it}: sweeping every state")
            run.records = run.sweep(run.records_net)
        sweep_seconds = time.perf_counter() - t_sweep if survive != "none" else 0.0
        new = _violated_states(run, opts.max_states)
        if it > 1 and not new:
            run.converged = not run.violated
            run.iterations[-1] = run.iterations[-1].model_copy(
                update={"sweep_seconds": round(sweep_seconds, 3), "violated": len(run.violated)})
            break
        if it > 1 and time.perf_counter() >= design_deadline:
            run.iterations[-1] = run.iterations[-1].model_copy(update={
                "sweep_seconds": round(sweep_seconds, 3), "violated": len(run.violated),
                "stopped": f"time budget of {budget_factor:g} x time_limit_s ({budget_factor * time_limit_s:g} s) used"})
            break
        run.working += new
        progress(min(0.95, 0.1 + 0.8 * (it - 0.5) / max_iterations),
                 f"iteration {it}: MIP over the intact state and {len(run.working)} failure states")
        _design_working_set(run, it, max_iterations, design_deadline)
        mip = run.mip
        assert mip is not None
        run.iterations.append(DesignIteration(
            iteration=it, working_states=len(run.working), added=len(new), violated=len(run.violated),
            cost_usd=mip.cost_usd, restricted_bound_usd=mip.bound_usd, mip_status=mip.solver_status,
            mip_seconds=round(mip.seconds, 3), path_rounds=mip.path_rounds, designs_tried=mip.tried,
            sweep_seconds=round(sweep_seconds, 3), model=mip.stats))
        logger.info("survivable design iteration %d: %d states, cost %.0f, bound %s", it, len(run.working),
                    mip.cost_usd, mip.bound_usd)
        design_key = tuple(sorted(apply_design(run.base, mip.full, mip)[1].items())) + tuple(
            sorted(apply_design(run.base, mip.full, mip)[2].items()))
        if run.prev_y is not None and design_key == run.prev_y:
            _violated_states(run, 0)  # the same design as the one just swept: its states, with this MIP's excuses
            run.converged = not run.violated  # nothing more to learn
            break
        run.prev_y = design_key
        run.records_net, run.records = run.after, None  # the design changed the network: sweep it again
        if survive == "none":
            run.converged = True
            break
    else:
        # iterations exhausted: sweep the last design so what is reported is what it does
        if survive != "none":
            run.records_net, run.records = run.after, run.sweep(run.after)
            _violated_states(run, 0)
    return _finish_run(run, t_start)


@dataclass
class _SurviveRun:
    """What the iterations of :func:`design_survivable` share: fixed inputs, then the state they carry on."""

    base: Network  # the network the design changes (without candidates when they may not be built)
    full: Network  # ``base`` with every candidate built (paths and excuses)
    survive: str
    utilisation_ceiling: float
    failure_utilisation_ceiling: float
    k_paths: int
    backend: str
    time_limit_s: float
    mip_gap: float
    bound_time_limit_s: float
    tol: float
    sopts: FailureOptions
    scen_full: dict[str, FailureScenario]
    comm: Commodities
    intact: StateBlock
    progress: ProgressFn
    records_net: Network  # the network the current records were swept on
    after: Network  # the network after the current design
    records: list[ScenarioRecord] | None
    prev_y: tuple[Any, ...] | None
    blocks: dict[str, StateBlock] = field(default_factory=dict)
    failed_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ceiling_of: dict[str, float] = field(default_factory=dict)
    working: list[str] = field(default_factory=list)
    excused: dict[str, tuple[float, str]] = field(default_factory=dict)
    path_excuse: dict[str, tuple[float, str]] = field(default_factory=dict)
    short_excuse: dict[str, tuple[float, str]] = field(default_factory=dict)
    initial: list[str] = field(default_factory=list)
    iterations: list[DesignIteration] = field(default_factory=list)
    mip: MipDesign | None = None
    violated: list[str] = field(default_factory=list)
    converged: bool = False
    best_bound: float | None = None
    restriction: str = ""

    carried: np.ndarray | None = None  # per demand of ``full``: offered in a failure state (its class survives)
    sweeps: dict[str, list[ScenarioRecord]] = field(default_factory=dict)  # quick sweeps made, by sweep_key

    def sweep(self, net: Network) -> list[ScenarioRecord]:
        """The quick sweep of every state of ``net`` (:func:`sweep_states`), made once per network."""
        key = sweep_key(net, self.survive, self.sopts)
        return list(self.sweeps[key] if key in self.sweeps else self.sweeps.setdefault(
            key, sweep_states(net, self.survive, self.sopts)))

    def lost_mask(self, sc: FailureScenario) -> np.ndarray:
        """Demands lost with the sites ``sc`` fails."""
        d = self.full.demands
        return (d["src"].isin(sc.sites) | d["dst"].isin(sc.sites)).to_numpy()

    def add_block(self, sid: str) -> None:
        """The state's block (paths on the full network) and what no design can carry in it for want of a path."""
        if sid in self.blocks:
            return
        sc = self.scen_full[sid]
        self.blocks[sid] = state_block(self.full, self.full, sid, sc.links, self.k_paths,
                                       self.failure_utilisation_ceiling, self.comm, self.carried)
        self.failed_of[sid], self.ceiling_of[sid] = tuple(sc.links), self.failure_utilisation_ceiling
        self.path_excuse[sid] = _excuse(self.full, self.blocks[sid], self.intact.has_path, self.lost_mask(sc))
        self.set_excuse(sid)

    def set_excuse(self, sid: str) -> None:
        """``excused[sid]``: the traffic no path carries plus what capacity at its maximum cannot (the last MIP)."""
        parts = [x for x in (self.path_excuse.get(sid, (0.0, "")), self.short_excuse.get(sid, (0.0, ""))) if x[1]]
        if parts:
            self.excused[sid] = (float(sum(g for g, _ in parts)), "; ".join(r for _, r in parts))
        else:
            self.excused.pop(sid, None)


def _start_run(net: Network, opts: SurviveOptions, sweep_options: FailureOptions | None,
               initial_records: Sequence[ScenarioRecord] | None, progress: ProgressFn,
               initial_states: Sequence[str] = ()) -> _SurviveRun:
    """Set up the run: the full network, the sweep options, the intact state's block."""
    survive, ceiling, failure_ceiling, k = (opts.survive, opts.utilisation_ceiling,
                                                 opts.failure_utilisation_ceiling, opts.k_paths)
    backend, time_limit_s, mip_gap, use_candidates = opts.backend, opts.time_limit_s, opts.mip_gap, opts.candidates
    base = net if use_candidates else net.drop_candidates(net.candidates.index)
    full = full_network(base)
    tol = survive_tolerance_gbps(net)
    sweep_options = sweep_options or FailureOptions.model_validate({})
    # the run's failure policy: the design's own, else its sweeps' (one policy for the MIP and the sweeps)
    policy = opts.failure_policy if opts.failure_policy is not None else sweep_options.failure_policy
    sopts = sweep_options.model_copy(update={"kind": survive if survive != "none" else "srlg", "k_paths": k,
                                             "derate": None, "scenarios": None, "verify": False,
                                             "method": "path", "failure_policy": policy})  # the design's k paths
    scen_full: dict[str, FailureScenario] = {}
    if survive != "none":
        scen_full = {s.id: s for s in enumerate_scenarios(full, survive)}  # type: ignore[arg-type]
    carried = carried_in_failure(full, policy).to_numpy()
    comm = Commodities.of_network(full, carried)
    intact = state_block(full, full, "intact", (), k, ceiling, comm)  # every candidate built: for the excuses
    return _SurviveRun(
        base=base, full=full, survive=survive, utilisation_ceiling=ceiling, failure_utilisation_ceiling=failure_ceiling,
        k_paths=k,
        backend=backend, time_limit_s=time_limit_s, mip_gap=mip_gap, bound_time_limit_s=opts.bound_time_limit_s, tol=tol,
        sopts=sopts, scen_full=scen_full,
        comm=comm, intact=intact, progress=progress, records_net=net, after=net,
        records=list(initial_records) if initial_records is not None else None,
        prev_y=(),  # the first records are of the network with nothing built: a design that builds nothing is it
        blocks={"intact": intact}, failed_of={"intact": ()}, ceiling_of={"intact": ceiling}, carried=carried,
        initial=list(dict.fromkeys(str(x) for x in initial_states if str(x) in scen_full)))


def _violated_states(run: _SurviveRun, max_states: int | None) -> list[str]:
    """Set ``run.violated`` to the swept states a design can still help, and return those not yet in the
    working set (at most ``max_states`` in all), the warm-start states first time round; records the excuses
    of what no design can help. A state left overloaded and unmeasured by the quick sweep that has an excuse
    is measured first: whether it carries all but what is excused is a number, not a flag."""
    for r in run.records or []:
        if not r.impact.survived and r.scenario in run.scen_full:
            run.add_block(r.scenario)
    _measure_excused(run)
    new: list[str] = []
    run.violated = []
    for r in run.records or []:
        sid = r.scenario
        if r.impact.survived or sid not in run.scen_full or not _beyond_excuse(run, r):
            continue  # carried, or only what no design can help is unmet
        run.violated.append(sid)
        if sid not in run.working:
            new.append(sid)
    for sid in run.initial:  # warm start: binding for a smaller demand, so likely binding again
        if sid not in run.working and sid not in new:
            run.add_block(sid)
            new.append(sid)
    run.initial = []
    if max_states is not None:
        new = new[:max(0, max_states - len(run.working))]
    return new


def _beyond_excuse(run: _SurviveRun, r: ScenarioRecord) -> bool:
    """Whether the state's unmet traffic (NaN: overloaded, not measured) exceeds what is excused."""
    lost = r.impact.unmet_gbps + r.impact.slo_violation_gbps
    return not lost <= run.excused.get(r.scenario, (0.0, ""))[0] + run.tol


def _measure_excused(run: _SurviveRun) -> None:
    """Measure (max-throughput) the records the quick sweep left overloaded and unmeasured whose state has an
    excuse, in place in ``run.records``."""
    todo = [r for r in run.records or [] if math.isnan(r.impact.unmet_gbps)
            and run.excused.get(r.scenario, (0.0, ""))[0] > 0]
    if not todo or run.records is None:
        return
    measured = {r.scenario: r for r in measure_overloaded(run.records_net, run.survive, run.sopts, todo)}
    run.records = [measured.get(r.scenario, r) for r in run.records]


def _design_working_set(run: _SurviveRun, it: int, max_iterations: int, design_deadline: float) -> None:
    """One iteration's MIP(s) over the intact state and the working set; sets ``run.mip`` (the best
    :class:`MipDesign`, with its ``tried``, ``seconds`` and ``path_rounds``), ``run.after``, the bound and its
    scope, and the excuses of capacity that runs out.

    TE routes a built network over its own k shortest paths. The MIP routes over the paths of the
    network with a set K of candidates built: TE's paths on any design that builds a subset of K
    include every path the MIP can use (removing links only removes paths, and a path over an unbuilt
    candidate carries nothing), so every MIP solution is TE-consistent. K is first the routes needed
    (each demand that has no admissible path without candidates gets its shortest one): building more
    only crowds TE's k paths onto new routes. Only when that leaves a working state short, and time
    remains, every candidate is tried too; the design leaving less unmet, then the cheaper, is kept.
    """
    base, k, comm, tol, working = run.base, run.k_paths, run.comm, run.tol, run.working
    mip_seconds, rounds = 0.0, 0
    options: list[tuple[float, float, MipDesign, Network]] = []
    all_cands = [str(c) for c in base.candidates.index]
    needed = routes_needed(base, run.full, [run.blocks[x] for x in ["intact", *working]], k, comm)
    starts: list[tuple[str, list[str]]] = [("routes needed" if needed else "no new route", needed)]
    tried: list[DesignStart] = []
    while starts:
        label, keep = starts.pop(0)
        rounds += 1
        run.progress(min(0.95, 0.1 + 0.8 * (it - 0.5) / max_iterations),
                     f"iteration {it}: MIP over the intact state and {len(working)} failure states, "
                     f"{len(keep)} candidate routes open ({label})")
        model_full = base.with_candidates_built(
            {c: int(base.candidates.at[c, "max_modules"]) for c in keep}) if keep else base
        model_blocks = [state_block(model_full, model_full, sid, run.failed_of[sid], k, run.ceiling_of[sid], comm,
                                    run.blocks[sid].offered) for sid in ["intact", *working]]
        cand = solve_mip(base, model_full, model_blocks, run.time_limit_s, run.backend, run.mip_gap, tol, comm)
        mip_seconds += cand.seconds
        ids = model_full.links.index
        built = [str(ids[i]) for i in np.flatnonzero(cand.is_candidate & (cand.modules > 0.5))]
        total_unmet = float(np.round(cand.unmet_all_gbps.sum(), 3))
        short = float(cand.short_by_state_gbps.sum())
        options.append((total_unmet, float(cand.cost_usd), cand, model_full))
        tried.append(DesignStart(start=label, candidates_open=len(keep), routes=len(built), unmet_gbps=total_unmet,
                                 short_gbps=round(short, 3), cost_usd=float(cand.cost_usd)))
        if (short > tol and label != "every candidate" and set(all_cands) - set(keep)
                and time.perf_counter() + cand.seconds < design_deadline):
            starts.append(("every candidate", all_cands))
    _, _, cur, model_full = min(options, key=lambda o: (o[0], o[1]))
    run.after, _, _ = apply_design(base, model_full, cur)
    cur.tried = tried
    run.mip = cur
    run.best_bound = cur.bound_usd
    n_open = int((~model_full.links.index.isin(base.links.index)).sum())
    run.restriction = (f"designs that open these {n_open} candidate routes (of {len(all_cands)}), routing over {k} "
                       f"shortest admissible paths per demand, over {len(working)} failure states")
    cur.seconds = mip_seconds
    cur.path_rounds = rounds
    for i, sid in enumerate(working, start=1):  # replaced, not added up: each MIP measures every working state
        gbps = float(cur.short_by_state_gbps[i])
        if gbps > tol:
            run.short_excuse[sid] = (gbps, (
                f"{gbps:,.0f} Gbps more than every link at its max_capacity_gbps and every candidate at its "
                f"max_modules can carry over TE's {k} shortest latency-admissible paths per demand (with more "
                "paths, --k-paths, TE may spread it further)"))
        else:
            run.short_excuse.pop(sid, None)
        run.set_excuse(sid)


def _finish_run(run: _SurviveRun, t_start: float) -> SurvivableDesign:
    """Measure the final design's states and assemble the :class:`SurvivableDesign`."""
    survive, records = run.survive, run.records
    if records is None and survive != "none":
        records = run.sweep(run.after)
    if records and any(r.impact.overloaded and math.isnan(r.impact.unmet_gbps) for r in records):
        records = measure_overloaded(run.after, survive, run.sopts, records)  # the reported figures, in full
    mip, best_bound, converged, excused = run.mip, run.best_bound, run.converged, run.excused
    assert mip is not None
    cost = float(mip.cost_usd)
    restricted = RestrictedOptimum(cost_usd=cost, bound_usd=best_bound, gap=design_gap(cost, best_bound),
                                   status=mip.solver_status, restriction=run.restriction)
    run.progress(0.97, f"lower bound: LP over every candidate and path, intact state and {len(run.working)} states")
    true = _lower_bound(run, mip)
    bound_usd = true.bound_usd  # above the cost (beyond LP tolerance) only for a design short in a bound state
    if bound_usd is not None and cost < bound_usd <= cost * (1 + 1e-7) + 1e-6:
        bound_usd = cost
    gap = design_gap(cost, bound_usd)
    status = ("optimal" if converged and gap is not None and gap <= max(run.mip_gap, 1e-6) else
              "feasible" if converged else "not_converged")
    upgrades = upgrade_table(run.base, mip.full, mip, ["intact", *run.working])
    still = set(run.violated) if not converged else set()
    # excused: not carried, but only by what no design can help (a state also short beyond that is violated)
    not_survivable = [ExcusedState(scenario=s, reason=excused[s][1], gbps=excused[s][0])
                      for s in sorted(excused) if s not in still and any(
                          r.scenario == s and not r.impact.survived for r in records or [])]
    run.progress(1.0, "design done")
    return SurvivableDesign(
        status=status, failure_kind=survive, cost_usd=cost, lower_bound_usd=bound_usd, gap=gap,
        upgrades=upgrades, network_after=run.after, iterations=run.iterations, states_examined=len(records or []),
        working_set=run.working, records_after=list(records or []), not_survivable=not_survivable,
        violated=sorted(still),
        ceiling=run.utilisation_ceiling, failure_ceiling=run.failure_utilisation_ceiling, converged=converged,
        seconds=time.perf_counter() - t_start, model=mip.stats,
        bound=true, restricted_optimum=restricted,
        failure_policy=class_failure_policy(run.full.meta, run.sopts.failure_policy))


def _lower_bound(run: _SurviveRun, mip: MipDesign) -> DesignBound:
    """The better of the two true lower bounds (:func:`best_lower_bound`) over the intact state and the working set,
    with the excuse allowance ``A_s`` of :func:`bound_states`."""
    short = {sid: g for sid, (g, _) in run.short_excuse.items()} | {"intact": float(mip.short_by_state_gbps[0])}
    sids = ["intact", *run.working]
    states = bound_states(run.blocks, sids, run.failed_of, run.ceiling_of, {s: g + run.tol for s, g in short.items()})
    return best_lower_bound(run.base, run.full, [run.blocks[s] for s in sids], run.comm, states,
                            run.bound_time_limit_s, run.backend)
