"""A proven lower bound on the roadmap's discounted backbone capex: one LP over every period.

The rolling horizon (:mod:`backbone.solver.roadmap.rolling`) decides one period at a time; the sum of its
per-period design bounds only covers roadmaps that take the same earlier steps. This module bounds every
roadmap at once: the LP relaxation of one multi-period design model, in which capacity persists once
built, comes online only after its lead time and ready-for-service date, and is charged (discounted) in
the period it is committed.

The model (its rows and commodities) and its LP builder are in :mod:`backbone.solver.roadmap.bound_model`.

**Site cuts.** The LP charges a link that needs a tenth of a module a tenth of its cost (and a candidate
route a fraction of its fixed cost). Per block and site, the traffic that must leave (enter) the site crosses its
surviving links: their modules, rounded to whole ones (mixed-integer rounding), give the rows ``site_cut``
(:func:`backbone.solver.roadmap.cuts.site_cut_rows`, its docstring proves them).

**Period floors.** Before the LP (``PERIOD_MIP_SHARE`` of the time), each period ``t`` gets one MIP over its own
blocks, online modules ``Y_t`` integer and routes ``B_t`` binary, minimising the undiscounted cost online in ``t``;
any roadmap in the covered set has such a ``Y_t`` (capacity online then, built whole), so the MIP's dual bound
``F_t`` (at any gap or time limit) is valid, and so is its running maximum (capacity persists:
:func:`backbone.solver.roadmap.cuts.monotone_floors`). The last period's MIP goes first, the earliest with failure
states second. The LP then gets the rows::

    floor:     sum_l module_cost_l Y_{t,l} + sum_c fixed_c B_{t,c} >= F_t

and the bound is the best of the LP without them, the LP over the intact states with them and the LP re-solved
with them (from the first solve's basis); each is valid for every roadmap the bound covers.

**Added states.** A period's working set holds only the states its design found binding, given what earlier
periods bought; a cheaper design (the period MIP's) leaves other states short. With a :class:`StateSeparation`,
once the LP has a bound (and the period MIPs without added states their floors), the period MIPs run again, the
latest first: the incumbent of its first MIP (phase A's, over its own states) is swept, the states it leaves short
that this roadmap carries in that period are added, with those added to the later periods, and the MIP is solved
again (a row generation): one sweep and one MIP per period. The bound is then re-solved with the raised floors. Only states this roadmap carries are added, held to utilisation 100 % (the sweep's
"carried"), so every floor still covers it (``added_states`` lists them).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field

from backbone.model import Network
from backbone.solver.core.problem import LinearProgram, solve
from backbone.solver.core.summary import TypedSummary
from backbone.solver.design.survivable.model import link_modules
from backbone.solver.roadmap.bound_model import (
    StateBlocks,
    build_bound_lp,
    commodities,
    floor_costs,
    routable_mask,
    state_blocks,
)
from backbone.solver.roadmap.cuts import floor_rows, monotone_floors
from backbone.solver.roadmap.options import RoadmapOptions

logger = logging.getLogger(__name__)

__all__ = ["RoadmapBound", "StateSeparation", "roadmap_exact_mip", "roadmap_lower_bound"]

MIN_SOLVE_S = 1.0
"""Least time limit given to each of the two LPs."""

PERIOD_MIP_SHARE = 0.4
"""Share of the LPs' time the period MIPs use before the bound LP (phase A; phase B gets what the LP leaves)."""

RESOLVE_SHARE = 0.3
"""Time kept for re-solving with the floors found after the bound LP, as a share of its solve's seconds."""

LAST_PERIOD_SHARE = 0.5
"""Share of the MIPs' time for the last period's (the floor on everything built), then the earliest period's."""

MIN_PERIOD_MIP_S = 8.0
"""Least time worth giving a period MIP (its root LP must finish for a dual bound); less is left to the LP."""

PERIOD_MIP_GAP = 1e-3
"""Relative gap at which a period MIP stops (its dual bound is what counts, proven at any gap)."""

FLOOR_REL_TOL, FLOOR_ABS_TOL_USD = 1e-6, 1.0
"""How far below a period MIP's dual bound its floor is set (solver tolerances)."""

SEPARATION_ROUNDS = 1
"""Most sweeps per period in phase B (:class:`StateSeparation`; each a sweep and a MIP). One: a period's MIP also
starts from the states added to the later periods', so most of what a sweep would find is there already."""

SWEEP_GUESS_S = 15.0
"""Seconds a sweep is taken to need before one is timed (a sweep runs only when it and a MIP fit in the time left)."""

SEPARATION_LAST_SHARE = 0.7
"""``LAST_PERIOD_SHARE`` when the MIPs add states (the others, latest first, share what the last period leaves)."""

FULL_SHARE = 0.75
"""Share of the bound's time for the LPs with the failure states; else the intact states alone get the rest."""


class RoadmapBound(TypedSummary):
    """The global lower bound and what it covers (the roadmap summary's ``bound`` section is
    :class:`~backbone.solver.roadmap.summary.GlobalBound`, these fields and what the bound bounds)."""

    lower_bound_usd: float | None
    """Proven lower bound on the discounted backbone capex of every roadmap in the covered set (None when an LP did
    not finish, no roadmap within the budgets carries the states, or it was not computed)."""
    status: str
    """``optimal``, ``time_limit``, ``infeasible`` (within the budgets), ``error`` or ``skipped``."""
    covers: str
    """One plain sentence on what the bound covers."""
    periods: int = 0
    """Periods in the LP."""
    failure_states: int = 0
    """Failure-state blocks modelled (summed over periods)."""
    unmet_floor_gbps: float = 0.0
    """Traffic of the modelled states no roadmap can carry (left out of the bound's requirement)."""
    seconds: float = 0.0
    """Wall-clock seconds of the LP."""
    model: dict[str, int] = Field(default_factory=dict)
    """The LP's size."""
    note: str = ""
    """Why no gap is claimed, or the solver's error."""
    period_floors_usd: list[float] = Field(default_factory=list)
    """Per period, the proven lower bound on the undiscounted cost of what is online then (the period MIP's dual
    bound; 0 where none was found in time), a row of the LP."""
    added_states: list[list[str]] = Field(default_factory=list)
    """Per period, the failure states added to its MIP (:class:`StateSeparation`): states a period MIP's design left
    short that this roadmap carries then (empty lists when none were added; an empty list when none was asked for)."""


@dataclass
class StateSeparation:
    """More failure states for the period MIPs, found the way the survivable design finds its working set: sweep
    the MIP's incumbent design (its online modules and routes), and add the states it leaves short that the roadmap
    being bounded carries in that period (at up to :attr:`ceiling`); then solve the MIP again.

    Each added state is one more requirement, so a period's floor only rises. It stays a bound for every roadmap in
    the set ``covers`` names (this GPU placement, TE's k shortest admissible paths, the modelled states) that carries
    the added states too -- the bounded roadmap among them, since only states it carries are added (its excused and
    violated states never are). States the bounded roadmap does not carry would put it
    outside the set the bound covers, and the gap would then compare it with roadmaps that do more."""

    kind: str
    """The failure kind swept (``srlg``, ``link``, ``srlg,link``)."""
    options: Any
    """The sweep's :class:`~backbone.solver.failures.FailureOptions` (the quick sweep's verdicts: survived or not)."""
    not_carried: Sequence[frozenset[str]]
    """Per period, the states the bounded roadmap excuses or leaves violated then (never added)."""
    rounds: int = SEPARATION_ROUNDS
    """Most sweeps per period MIP."""
    ceiling: float = 1.0
    """Utilisation ceiling of an added state's block: the sweep's "carried" (every Gbps within capacity), not the
    design's failure ceiling, which only the states a design worked on are held to."""

    def short_states(self, t: int, net: Network, have: Collection[str] = ()) -> list[str]:
        """The states ``net`` leaves short that the bounded roadmap carries in period ``t`` (``have`` is not swept)."""
        from backbone.solver.design.survivable.sweeps import sweep_states

        return [r.scenario for r in sweep_states(net, self.kind, self.options, {*have, *self.not_carried[t]})
                if not r.impact.survived]


@dataclass
class _Rows:
    """What the period MIPs need to add states: the separation, the period networks, the blocks of given states
    (period ``t``, no intact block) and, per period, the states added so far."""

    sep: StateSeparation
    networks: Sequence[Network]
    blocks_of: Callable[[int, list[str]], StateBlocks]
    added: dict[int, list[str]] = field(default_factory=dict)
    sweep_s: float = SWEEP_GUESS_S
    """Seconds the last sweep took (a guess before the first)."""
    kept: dict[int, tuple[Network, float]] = field(default_factory=dict)
    """Per period, phase A's incumbent design and its MIP's seconds (phase B sweeps it: no MIP of its own first)."""


def roadmap_lower_bound(net: Network, opts: RoadmapOptions, period_networks: Sequence[Network],
                        working_sets: Sequence[Sequence[str]], gpu_committed: Sequence[float], kind: str, k: int,
                        ceiling: float, failure_ceiling: float, use_candidates: bool = True, backend: str = "highs",
                        time_limit_s: float = 120.0, separation: StateSeparation | None = None) -> RoadmapBound:
    """The LP bound of the module doc on the discounted backbone capex of every roadmap in its set.

    Parameters
    ----------
    net
        The scenario today (its links and candidates are what any roadmap builds from).
    period_networks
        Each period's backbone scenario (its demands: grown demand plus the GPU placement's traffic).
    working_sets
        Per period, the failure states found binding (ids of ``kind``); any subset gives a valid bound.
    gpu_committed
        The placement's capex (GPU blocks, replica storage) per period: held fixed, off each budget first.
    time_limit_s
        Seconds for the paths and the LPs together (each LP gets at least 1 s). When the LPs with the failure
        states do not finish in ``FULL_SHARE`` of it, the intact states alone are bounded in the rest.
    separation
        When given, each period MIP's incumbent design is swept and the states it leaves short that the bounded
        roadmap carries are added to that MIP (:class:`StateSeparation`; ``added_states`` lists them).

    Returns
    -------
    RoadmapBound
        ``lower_bound_usd`` None (with the reason in ``status`` and ``note``) when an LP did not finish or
        no roadmap within the budgets carries the modelled states.

    Example
    -------
    >>> b = roadmap_lower_bound(net, opts, networks, [["srlg:s1"]] * 3, [0.0] * 3, "srlg", 4, 0.8, 1.0)  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    deadline = t0 + time_limit_s
    base, full, blocks, tol = _setup(net, period_networks, working_sets, kind, k, ceiling, failure_ceiling,
                                     use_candidates)
    rows = None
    if separation is not None and kind in ("link", "srlg", "srlg,link"):
        _, h = commodities([n.demands for n in period_networks])
        T = len(period_networks)

        def blocks_of(t: int, ids: list[str]) -> StateBlocks:
            return state_blocks(base, full, period_networks[-1], [ids if i == t else [] for i in range(T)], kind, k,
                                ceiling, separation.ceiling, h, intact=False)

        rows = _Rows(separation, period_networks, blocks_of)
    first = deadline - (1.0 - FULL_SHARE) * (deadline - time.perf_counter())
    out = _solve_bound(base, full, opts, blocks, gpu_committed, k, tol, backend, first, t0, final=deadline, rows=rows)
    if out.status == "time_limit" and out.failure_states:
        # every subset of states gives a valid bound: the intact states alone, in the time left
        intact = np.array([b.scenario == "intact" for b in blocks.states])
        fewer = StateBlocks(blocks.period[intact], [b for b, i in zip(blocks.states, intact, strict=True) if i],
                        blocks.demand[intact])
        # the period floors found with the failure states stay valid for the roadmaps that carry them
        floors = np.asarray(out.period_floors_usd, float) if any(out.period_floors_usd) else None
        again = _solve_bound(base, full, opts, fewer, gpu_committed, k, tol, backend, deadline, t0, floors,
                             rows=rows if floors is not None else None)
        again.note = "; ".join(x for x in (f"with the failure states: {out.note}", again.note) if x)
        out = again
    return out


def _setup(net: Network, period_networks: Sequence[Network], working_sets: Sequence[Sequence[str]], kind: str, k: int,
           ceiling: float, failure_ceiling: float, use_candidates: bool) -> tuple[Network, Network, StateBlocks, float]:
    """The scenario the roadmaps build from, its network with every candidate built (the union of the periods'
    commodities as demands), the state blocks and the survivability tolerance (Gbps)."""
    from backbone.solver.design.survivable.model import full_network
    from backbone.solver.failures.impact import survive_tolerance_gbps

    base = net if use_candidates else net.drop_candidates(net.candidates.index)
    union, h = commodities([n.demands for n in period_networks])
    full = replace(full_network(base), demands=union)
    blocks = state_blocks(base, full, period_networks[-1], working_sets, kind, k, ceiling, failure_ceiling, h)
    return base, full, blocks, survive_tolerance_gbps(period_networks[-1])


def roadmap_exact_mip(net: Network, opts: RoadmapOptions, period_networks: Sequence[Network],
                      working_sets: Sequence[Sequence[str]], gpu_committed: Sequence[float], kind: str, k: int,
                      ceiling: float, failure_ceiling: float, use_candidates: bool = True, backend: str = "highs",
                      time_limit_s: float = 60.0) -> tuple[float, np.ndarray] | None:
    """The least discounted backbone capex over the set :func:`roadmap_lower_bound` covers, by one MIP: the
    module doc's model with the online modules integer and the routes built or not in every period.

    Small instances only (tests check the bound against it: ``lower_bound_usd <= optimum``). Same arguments as
    :func:`roadmap_lower_bound`.

    Returns
    -------
    tuple or None
        ``(optimum_usd, online_cost_usd)`` -- the optimum and, per period, the undiscounted cost of what the
        optimal roadmap has online (each period's floor is at most this) --, or None when the MIP is not
        solved to optimality in time (or no roadmap within the budgets carries the states).
    """
    deadline = time.perf_counter() + time_limit_s
    base, full, blocks, tol = _setup(net, period_networks, working_sets, kind, k, ceiling, failure_ceiling,
                                     use_candidates)
    probe = build_bound_lp(base, full, opts, blocks, gpu_committed, fix_max=True)
    sol = solve(probe, backend=backend, time_limit_s=max(MIN_SOLVE_S, deadline - time.perf_counter()))
    if sol.status.value != "optimal":
        return None
    J, K = blocks.demand.shape
    carried = (np.maximum(sol.values("unmet").to_numpy(), 0.0).reshape(J, K) * routable_mask(blocks)).sum(axis=1)
    mip = build_bound_lp(base, full, opts, blocks, gpu_committed, fix_max=False, carried=carried, tol=tol,
                         integer=True)
    sol = solve(mip, backend=backend, time_limit_s=max(MIN_SOLVE_S, deadline - time.perf_counter()), mip_gap=1e-9)
    if sol.status.value != "optimal":
        return None
    T, L = len(gpu_committed), len(full.links)
    _, _, _, unit, _ = link_modules(full.links, len(base.links))
    online = sol.values("online").to_numpy().reshape(T, L) @ unit
    if "built" in mip.variables:
        is_cand = np.arange(L) >= len(base.links)
        fixed = base.candidates["fixed_cost_usd"].reindex(full.links.index[is_cand]).fillna(0.0).to_numpy(float)
        built = pd.Series(sol.values("built").to_numpy(), index=mip.variables["built"].index).unstack("link")
        online = online + built.to_numpy() @ pd.Series(fixed, full.links.index[is_cand]).reindex(built.columns).to_numpy()
    return float(sol.objective), online


def _solve_bound(base: Network, full: Network, opts: RoadmapOptions, blocks: StateBlocks, gpu_committed: Sequence[float],
                 k: int, tol: float, backend: str, deadline: float, t0: float,
                 floors_given: np.ndarray | None = None, final: float | None = None,
                 rows: _Rows | None = None) -> RoadmapBound:
    """The two LPs of the module doc over ``blocks`` and the period MIPs' floors (``floors_given``: found already,
    with more states), within ``deadline`` (perf_counter seconds) for the LPs and ``final`` (default
    ``deadline``) for the MIPs once the bound LP is solved.

    Order: the least-unmet LP, the period MIPs over their own states in a share of the time (phase A), the bound
    LP with their floors, then (phase B) the period MIPs without a floor yet -- or, with ``rows``, every period's
    with added states -- in the time left but a reserve, then the same LP again with the raised floor rows, from
    the first solve's basis (the new rows start basic: a few dual simplex iterations). When the bound LP does not finish, the MIPs still run in a share of the time
    left: their floors are reported and carried into the fallback. ``rows``: the period MIPs add failure states
    (:class:`StateSeparation`)."""
    T = len(gpu_committed)
    final = deadline if final is None else final
    n_fail = int(sum(1 for b in blocks.states if b.scenario != "intact"))
    n_states = len({b.scenario for b in blocks.states} - {"intact"})
    budget = " and ready-for-service dates" if all(not np.isfinite(b) for b in opts.budgets()) else (
        ", ready-for-service dates and budgets (less the placement's capex (GPU blocks, replica storage); cumulative" + (
            ": a relaxation of the carry-over rule)" if opts.carry_over < 1 else ")"))
    states = (f"the intact state and the {n_states} failure state(s) the periods' designs found binding "
              f"({n_fail} period-state blocks)" if n_fail else "the intact state of each period")
    covers = (f"LP relaxation over all {T} periods with {states}: the discounted backbone capex of any "
              f"roadmap that carries, in those states, all the traffic any roadmap can, with this roadmap's GPU "
              f"placement (so the same demands), the same lead times{budget}, routed over "
              f"TE's {k} shortest latency-admissible paths of the last period's backbone and of the network with "
              "every candidate route built; whole modules at each site cut (integer rounding)")

    floors = np.zeros(T)

    def added() -> list[list[str]]:
        return [list(rows.added.get(t, [])) for t in range(T)] if rows is not None else []

    def stop(status: str, note: str, lp: LinearProgram | None = None, floor: float = 0.0) -> RoadmapBound:
        return RoadmapBound(lower_bound_usd=None, status=status, covers=covers, periods=T, failure_states=n_fail,
                            unmet_floor_gbps=floor, seconds=time.perf_counter() - t0,
                            model=lp.stats() if lp is not None else {}, note=note,
                            period_floors_usd=[float(x) for x in floors], added_states=added())

    carried, probe, sol = _least_unmet(base, full, opts, blocks, gpu_committed, backend, deadline)
    if carried is None:
        return stop(sol.status.value, f"least-unmet LP: {sol.status.value} ({sol.message})", probe)
    J = blocks.demand.shape[0]
    given, floor_note, raw = floors_given is not None, "", np.zeros(T)
    if given:
        floors = monotone_floors(np.asarray(floors_given, float))
    else:  # phase A: a share of the time before the LP (the LP must still finish); no states added yet
        raw, floor_note = _period_floors(base, full, opts, blocks, gpu_committed, carried, tol, backend,
                                         time.perf_counter() + PERIOD_MIP_SHARE * (deadline - time.perf_counter()),
                                         keep=rows)
        floors = monotone_floors(raw)
    lp = build_bound_lp(base, full, opts, blocks, gpu_committed, fix_max=False, carried=carried, tol=tol,
                        floors=floors)
    t_lp = time.perf_counter()
    sol = solve(lp, backend=backend, time_limit_s=max(MIN_SOLVE_S, deadline - t_lp))
    lp_seconds = time.perf_counter() - t_lp
    if sol.status.value == "infeasible":
        return stop("infeasible", "no roadmap within the budgets carries the modelled states", lp, float(carried.sum()))
    if sol.status.value != "optimal":
        return stop(sol.status.value, f"bound LP: {sol.status.value} ({sol.message})", lp, float(carried.sum()))
    if not given and final - time.perf_counter() > MIN_PERIOD_MIP_S + RESOLVE_SHARE * lp_seconds:
        # phase B: the periods without a floor yet -- every period, the latest first, when the MIPs add states (a
        # bound at least phase A's is in hand) --, in the time the LP left but a reserve for the re-solves
        more, note_b = _period_floors(base, full, opts, blocks, gpu_committed, carried, tol, backend,
                                      final - max(MIN_SOLVE_S, RESOLVE_SHARE * lp_seconds),
                                      skip=raw > 0 if rows is None else None, rows=rows)
        floor_note = "; ".join(x for x in (floor_note, note_b and f"after the LP: {note_b}") if x)
        if (monotone_floors(np.maximum(raw, more)) > floors * (1 + FLOOR_REL_TOL) + FLOOR_ABS_TOL_USD).any():
            raw = np.maximum(raw, more)
            better, worse = _with_floors(base, full, opts, blocks, gpu_committed, carried, tol, backend, final,
                                         monotone_floors(raw), lp, sol)
            if worse == "infeasible":  # the floors prove no roadmap within the budgets carries the states
                return stop("infeasible", "no roadmap within the budgets carries the modelled states", lp,
                            float(carried.sum()))
            if better is not sol:
                floors = monotone_floors(raw)
            sol = better
            floor_note = "; ".join(x for x in (floor_note, worse) if x)
    found = int((floors > 0).sum()) if given else int((np.minimum(raw, floors) > 0).sum())
    if floors.any():
        covers += _floors_covers(floors, found, given, added(), opts.labels())
    bound = max(0.0, float(sol.objective))
    logger.info("roadmap bound: %.0f USD over %d blocks, %.1f s", bound, J, time.perf_counter() - t0)
    return RoadmapBound(lower_bound_usd=bound, status="optimal", covers=covers, periods=T, failure_states=n_fail,
                        unmet_floor_gbps=float(carried.sum()), seconds=time.perf_counter() - t0, model=lp.stats(),
                        note=floor_note, period_floors_usd=[float(x) for x in floors], added_states=added())


def _floors_covers(floors: np.ndarray, found: int, given: bool, added: list[list[str]], labels: Sequence[str]) -> str:
    """What the floors add to the ``covers`` sentence: the period MIPs' states, the periods with a floor of their
    own (``found``) and the states the period MIPs added (``added``, per period)."""
    over = ("the same states" if not given else
            "that period's intact state and the failure states its design found binding")
    text = (f"; the cost online in each period at least the proven bound of a MIP (integer modules and routes) "
            f"over {over} ({found} period(s))" + (
                f", or an earlier period's (capacity persists: {int((floors > 0).sum())} period(s) in all)"
                if (floors > 0).sum() > found else ""))
    more = {t: ids for t, ids in enumerate(added) if ids}
    if more:
        text += (f", and in {', '.join(labels[t] for t in more)} also the {sum(len(x) for x in more.values())} "
                 "failure state(s) the period MIPs' designs left short that this roadmap carries then, each held to "
                 "utilisation 100 % (added_states)")
    return text


def _least_unmet(base: Network, full: Network, opts: RoadmapOptions, blocks: StateBlocks, gpu_committed: Sequence[float],
                 backend: str, deadline: float) -> tuple[np.ndarray | None, LinearProgram, Any]:
    """Per block, the least routable traffic left unmet with every build online at its maximum as early as allowed
    (``U_j`` of :mod:`backbone.solver.roadmap.bound_model`; the blocks are independent), the LP and its solution;
    None instead of the figures when the LP is not solved to optimality by ``deadline``."""
    probe = build_bound_lp(base, full, opts, blocks, gpu_committed, fix_max=True)
    sol = solve(probe, backend=backend, time_limit_s=max(MIN_SOLVE_S, deadline - time.perf_counter()))
    if sol.status.value != "optimal":
        return None, probe, sol
    J, K = blocks.demand.shape
    return (np.maximum(sol.values("unmet").to_numpy(), 0.0).reshape(J, K) * routable_mask(blocks)).sum(axis=1), probe, sol


def _with_floors(base: Network, full: Network, opts: RoadmapOptions, blocks: StateBlocks, gpu_committed: Sequence[float],
                 carried: np.ndarray, tol: float, backend: str, final: float, floors: np.ndarray, lp: LinearProgram,
                 first: Any) -> tuple[Any, str]:
    """The bound with the floor rows found after the bound LP: the largest of that LP (``first``, with the floors
    found before it), the LP over the intact states with them (small: seconds) and the bound LP with them too
    (re-solved from ``first``'s basis in the time left to ``final``). Each is valid for every roadmap the bound covers (those carry the intact states and meet the
    floors). Returns the best solution and a note ("infeasible" when the floors prove no roadmap within the
    budgets carries the states)."""
    intact = np.array([b.scenario == "intact" for b in blocks.states])
    small = StateBlocks(blocks.period[intact], [b for b, i in zip(blocks.states, intact, strict=True) if i],
                    blocks.demand[intact])
    lp2 = build_bound_lp(base, full, opts, small, gpu_committed, fix_max=False, carried=carried[intact], tol=tol,
                         floors=floors)
    lp2.name = f"roadmap-bound-intact-{base.name}"
    tries = [("the intact states with the floors", solve(lp2, backend=backend,
                                                         time_limit_s=max(MIN_SOLVE_S, final - time.perf_counter())))]
    if tries[0][1].status.value == "infeasible":
        return first, "infeasible"
    if final - time.perf_counter() >= MIN_PERIOD_MIP_S:  # a solver may overrun a very short limit
        floor_rows(lp, floors, *floor_costs(base, full), name="floor_after")
        tries.append(("the failure states with the floors", solve(
            lp, backend=backend, time_limit_s=max(MIN_SOLVE_S, final - time.perf_counter()), warm_start=first)))
        if tries[1][1].status.value == "infeasible":
            return first, "infeasible"
    done = [(name, sol) for name, sol in tries if sol.status.value == "optimal"]
    if not done or max(float(sol.objective) for _, sol in done) <= float(first.objective):
        return first, ("; ".join(f"bound LP over {n}: {sol.status.value}" for n, sol in tries) +
                       "; the bound is the LP's with the floors found before it")
    name, best = max(done, key=lambda x: float(x[1].objective))
    other = [f"bound LP over {n}: {sol.status.value}" for n, sol in tries if n != name]
    return best, f"the bound is the LP's over {name}" + (f" ({'; '.join(other)})" if other else "")


def _period_floors(base: Network, full: Network, opts: RoadmapOptions, blocks: StateBlocks, gpu_committed: Sequence[float],
                   carried: np.ndarray, tol: float, backend: str, deadline: float,
                   skip: np.ndarray | None = None, rows: _Rows | None = None,
                   keep: _Rows | None = None) -> tuple[np.ndarray, str]:
    """Per period ``t``: the dual bound of the period MIP (:func:`build_bound_lp` with ``floor_period``), a proven
    lower bound on the undiscounted cost of what any roadmap in the covered set has online in ``t`` (its online
    modules are integer, its routes built or not, and it carries ``t``'s blocks), within ``deadline``; 0 where a
    MIP finds no bound in time. The LP relaxation charges a link needing a tenth of a module a tenth of its
    cost; these rows charge whole modules, the main looseness of the LP alone.

    With ``rows``, while the period's time lasts, the MIP's incumbent design is swept and the states it leaves
    short that the bounded roadmap carries are added (``rows.added[t]``), and the MIP is solved again: the floor is
    the largest dual bound found. With ``keep`` (phase A, before the states are added), each MIP's incumbent design
    is kept in ``keep.kept`` for phase B to sweep."""
    T = len(gpu_committed)
    floors = np.zeros(T)
    notes = []
    failing = {int(t) for t, b in zip(blocks.period, blocks.states, strict=True) if b.scenario != "intact"}
    periods = [t for t in range(T) if (blocks.period == t).any() and (skip is None or not skip[t])]
    # with added states the latest periods' floors weigh most (the earliest's MIP starts from the later ones' states)
    order = _mip_order(periods, failing) if rows is None else periods[::-1]
    first_share = LAST_PERIOD_SHARE if rows is None else SEPARATION_LAST_SHARE
    for i, t in enumerate(order):
        left = deadline - time.perf_counter()
        if left < MIN_PERIOD_MIP_S:
            notes.append(f"no time left for the period MIPs of {len(order) - i} period(s)")
            break
        # the first two MIPs (the last period's and the earliest period's) get LAST_PERIOD_SHARE of the time left
        # each -- with added states, the last period's alone, SEPARATION_LAST_SHARE --, the others share what they
        # leave (a MIP that finishes early leaves its time to the next)
        if i < (2 if rows is None else 1) and len(order) - i > 1:
            limit = left * (first_share if i == 0 else LAST_PERIOD_SHARE)
        else:  # but never less than a MIP needs to find a bound: the periods after it may get none
            limit = max(left / (len(order) - i), min(left, MIN_PERIOD_MIP_S))
        floors[t], note = _period_floor(base, full, opts, blocks, gpu_committed, carried, tol, backend, t,
                                        time.perf_counter() + limit, rows, deadline, keep)
        if note:
            notes.append(note)
    return floors, "; ".join(notes)


def _period_floor(base: Network, full: Network, opts: RoadmapOptions, blocks: StateBlocks, gpu_committed: Sequence[float],
                  carried: np.ndarray, tol: float, backend: str, t: int, end: float,
                  rows: _Rows | None, deadline: float, keep: _Rows | None = None) -> tuple[float, str]:
    """Period ``t``'s floor (:func:`_period_floors`) by ``end``, and a note when its MIP found no bound. After a sweep
    (the first of phase A's incumbent: :func:`_first_states`; 0 when it adds nothing, phase A's floor stands), the
    MIP is solved even past ``end``, up to ``deadline``: at most twice the swept MIP's seconds and
    :data:`MIN_PERIOD_MIP_S`."""
    T = len(gpu_committed)
    floor = 0.0
    mask = blocks.period == t
    sub = StateBlocks(blocks.period[mask], [b for b, m in zip(blocks.states, mask, strict=True) if m],
                      blocks.demand[mask])
    sub_carried, mip_s, sweeps = carried[mask], 0.0, 0
    if rows is not None:  # the states added to other periods that this roadmap carries in t: likely binding too
        pre, swept_s = _first_states(rows, t, {x.scenario for x in sub.states}, deadline)
        if pre is None:  # the same states as phase A's MIP: its floor is in hand already
            return floor, ""
        if swept_s is not None:  # phase A's incumbent was swept
            sweeps, mip_s = 1, swept_s
            end = max(end, min(deadline, time.perf_counter() + 2.0 * mip_s + MIN_PERIOD_MIP_S))
        sub, sub_carried = _with_states(rows, t, pre, sub, sub_carried, base, full, opts, gpu_committed, backend, end)
    for round_ in range(1 + (rows.sep.rounds - sweeps if rows is not None else 0)):
        lp = build_bound_lp(base, full, opts, sub, gpu_committed, fix_max=False, carried=sub_carried, tol=tol,
                            floor_period=t)
        lp.name = f"roadmap-period-mip-{t}-{base.name}"
        t_mip = time.perf_counter()
        sol = solve(lp, backend=backend, time_limit_s=max(MIN_SOLVE_S, end - t_mip), mip_gap=PERIOD_MIP_GAP)
        mip_s = time.perf_counter() - t_mip if round_ == 0 and not sweeps else mip_s
        b = sol.bound if sol.bound is not None and np.isfinite(sol.bound) else None
        if b is None or sol.status.value not in ("optimal", "feasible", "time_limit"):
            return floor, f"period {t} MIP: {sol.status.value}, no bound" if round_ == 0 else ""
        # a hair below the solver's figure: its tolerances must not lift the floor above a real roadmap's cost
        floor = max(floor, float(b) * (1.0 - FLOOR_REL_TOL) - FLOOR_ABS_TOL_USD)
        if keep is not None and sol.x is not None:  # phase A: its design, for phase B's sweep
            keep.kept[t] = (_incumbent_network(base, full, keep.networks[t], sol, t, T), time.perf_counter() - t_mip)
        if rows is None or sol.x is None or round_ == rows.sep.rounds - sweeps or \
                deadline - time.perf_counter() < MIN_PERIOD_MIP_S + rows.sweep_s + 2.0 * mip_s:
            break  # no incumbent to sweep, or no time for a sweep and another (larger) MIP
        have = {x.scenario for x in sub.states}
        new = _short_states(rows, t, _incumbent_network(base, full, rows.networks[t], sol, t, T), have)
        n_before = len(sub.states)
        end = max(end, min(deadline, time.perf_counter() + 2.0 * mip_s + MIN_PERIOD_MIP_S))
        sub, sub_carried = _with_states(rows, t, new, sub, sub_carried, base, full, opts, gpu_committed, backend, end)
        if len(sub.states) == n_before or end - time.perf_counter() < MIN_PERIOD_MIP_S:
            break
        logger.info("roadmap bound: period %d MIP %.0f USD, %d state(s) added", t, floor, len(sub.states) - n_before)
    return floor, ""


def _first_states(rows: _Rows, t: int, have: set[str], deadline: float) -> tuple[list[str] | None, float | None]:
    """Phase B's states for period ``t``'s first MIP: the later periods' that this roadmap carries in ``t`` and those
    phase A's incumbent (``rows.kept``, swept if time allows) leaves short; phase A's MIP seconds when swept (else None).
    None when there are none after a sweep (the MIP would be phase A's again)."""
    pre = list(dict.fromkeys(x for ids in rows.added.values() for x in ids
                             if x not in have and x not in rows.sep.not_carried[t]))
    kept = rows.kept.pop(t, None)
    if kept is None or rows.sep.rounds <= 0 or \
            deadline - time.perf_counter() < MIN_PERIOD_MIP_S + rows.sweep_s + 2.0 * kept[1]:
        return pre, None
    pre += _short_states(rows, t, kept[0], have | set(pre))
    return (pre, kept[1]) if pre else (None, None)


def _short_states(rows: _Rows, t: int, design: Network, have: set[str]) -> list[str]:
    """The states ``design`` leaves short that the roadmap carries in ``t``, not in ``have`` (timed: ``rows.sweep_s``)."""
    t_sweep = time.perf_counter()
    new = rows.sep.short_states(t, design, have)
    rows.sweep_s = time.perf_counter() - t_sweep
    return new


def _with_states(rows: _Rows, t: int, ids: list[str], sub: StateBlocks, sub_carried: np.ndarray, base: Network,
                 full: Network, opts: RoadmapOptions, gpu_committed: Sequence[float], backend: str,
                 end: float) -> tuple[StateBlocks, np.ndarray]:
    """Period ``t``'s blocks ``sub`` (and their least unmet) with the states ``ids`` added (``rows.added[t]`` records
    them); unchanged when there are none or their least-unmet LP does not finish by ``end``."""
    if not ids:
        return sub, sub_carried
    extra = rows.blocks_of(t, ids)
    more, _, _ = _least_unmet(base, full, opts, extra, gpu_committed, backend, end)
    if more is None or not extra.states:
        return sub, sub_carried
    rows.added.setdefault(t, []).extend(x.scenario for x in extra.states)
    return (StateBlocks(np.concatenate([sub.period, extra.period]), [*sub.states, *extra.states],
                        np.vstack([sub.demand, extra.demand])), np.concatenate([sub_carried, more]))


def _incumbent_network(base: Network, full: Network, period_net: Network, sol: Any, t: int, T: int) -> Network:
    """The period MIP's incumbent design as a network to sweep: today's links with the modules it has online in
    ``t``, the candidate routes it has modules on built, and period ``t``'s demands and sites."""
    L, n_old = len(full.links), len(base.links)
    y = np.round(sol.values("online").to_numpy().reshape(T, L)[t])
    _, cap, mod, _, _ = link_modules(full.links, n_old)
    links = base.links.copy()
    links["capacity_gbps"] = cap[:n_old] + mod[:n_old] * y[:n_old]
    net = replace(base, links=links)
    built = {str(full.links.index[i]): int(y[i]) for i in range(n_old, L) if y[i] > 0}
    if built:
        net = net.with_candidates_built(built)
    return replace(net, demands=period_net.demands, sites=period_net.sites)


def _mip_order(periods: list[int], failing: set[int]) -> list[int]:
    """The order of the period MIPs: the last period first (what is online then is every build), then the earliest
    with failure states (its floor is charged at the highest discount factors: the LP alone builds as late as it
    can), then the others from the latest down."""
    early = [t for t in periods[:-1] if t in failing][:1]
    return [*periods[-1:], *early, *[t for t in periods[-2::-1] if t not in early]]
