"""The roadmap bound's multi-period model: its state blocks, commodities and LP (:func:`build_bound_lp`).

:mod:`backbone.solver.roadmap.bound` solves it (the LPs, the period MIPs and the fallback to the intact states).

Model (periods ``t``, links ``l`` -- today's links and every candidate route --, state blocks ``j``: for
each period its intact state and the failure states its design found binding (its working set); any
subset of states relaxes the full roadmap problem, so the bound stays valid)::

    modules:   z_{t,l} >= 0, modules online from period t;  z_{t,l} = 0 unless l can be online in t
    online:    Y_{t,l} = sum_{tau <= t} z_{tau,l} <= Ymax_l                         (capacity persists)
    built:     B_{t,c} = sum_{tau <= t} b_{tau,c} <= 1;  Y_{t,c} <= Ymax_c B_{t,c}   (fixed-cost candidates)
    cost:      sum_{t,l} d(commit) module_cost_l z_{t,l} + sum_{t,c} d(t - lead_c) fixed_c b_{t,c}
    demand:    sum_{p in P_j(k)} f_{j,p} + u_{j,k} = h_{t(j),k}                      (commodity k, block j)
    capacity:  sum_p A_j[p,a] f_{j,p} - c_j m_l(a) Y_{t(j),l(a)} <= c_j cap_l(a)    (c_j: the state's ceiling)
    carried:   sum_k u_{j,k} <= U_j + tol     (U_j: least unmet with every build online as early as allowed)
    budget:    sum_{commit <= tau} capex <= sum_{c <= tau} (budget_c - placement capex committed in c)

``d(c) = (1 + rate) ** (-c * years per period)``; a module of a candidate online in ``t`` is charged at
the latest period it could be committed (``t - min(lead_c, upgrade lead)``: an upgrade of a route built
earlier), which only lowers the bound. The budget rows are cumulative: exact with full carry-over, a
relaxation with less. ``U_j`` comes from a first LP with every build at its maximum as early as allowed
(the blocks are then independent); demands with no admissible path in a state are left out of both.

Commodities are the demands of every period keyed by source, destination and SLO (their volume per
period from that period's backbone scenario: grown demand plus the GPU placement's traffic, as the
roadmap chose it). Paths are TE's ``k`` shortest latency-admissible paths per commodity on the network
with every candidate built and on the last period's backbone (the paths the roadmap's TE uses there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.model import Network
from backbone.quarters import quarter_number
from backbone.solver.core.problem import Block, LinearProgram
from backbone.solver.core.sparse import selector
from backbone.solver.design.survivable.model import link_modules
from backbone.solver.design.upgrades.families import state_capacity_rows, state_demand_rows
from backbone.solver.roadmap.cuts import floor_rows, site_cut_rows
from backbone.solver.roadmap.options import RoadmapOptions

__all__ = ["StateBlocks", "build_bound_lp", "commodities", "floor_costs", "routable_mask", "state_blocks"]


@dataclass
class StateBlocks:
    """State blocks of the LP: per block its period, paths (``StateBlock``) and the commodities' demand."""

    period: np.ndarray
    states: list[Any]
    demand: np.ndarray  # blocks x commodities


def commodities(demands_by_period: Sequence[pd.DataFrame]) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per (src, dst, SLO) over every period (demand: its largest) and the T x K demand matrix."""
    frames = [d.assign(_period=t) for t, d in enumerate(demands_by_period)]
    both = pd.concat(frames, ignore_index=False)
    key = both.groupby(["src", "dst", "slo_rtt_ms"], sort=False, dropna=False).ngroup().to_numpy()
    K, T = int(key.max()) + 1 if len(key) else 0, len(frames)
    h = np.zeros((T, K))
    np.add.at(h, (both["_period"].to_numpy(), key), both["demand_gbps"].to_numpy(float))
    first = np.full(K, -1, np.int64)
    first[key[::-1]] = np.arange(len(key))[::-1]
    table = both.iloc[first].drop(columns="_period").copy()
    table.index = pd.Index([f"k{i}" for i in range(K)], name=both.index.name)
    table["demand_gbps"] = h.max(axis=0) if T else 0.0
    keep = table["demand_gbps"].to_numpy(float) > 0
    return table[keep], h[:, keep]


def _allowed(full: Network, cands: pd.DataFrame, n_old: int, opts: RoadmapOptions,
             T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (period, link): may it be online (lead time, ready-for-service date), the latest commit period of
    a module online then, and of a candidate's fixed cost."""
    links = full.links
    L = len(links)
    up = opts.lead_periods(opts.upgrade_lead_quarters)
    lead = np.full(L, up, np.int64)
    rfs = np.full(L, -1, np.int64)
    if n_old < L:
        src = cands.reindex(full.links.index[n_old:])
        lead[n_old:] = src["lead_time_quarters"].map(opts.lead_periods).to_numpy(np.int64)
        rfs[n_old:] = [quarter_number(str(q)) if str(q).strip() else -1 for q in src["available_from"]]
    t = np.arange(T)[:, None]
    first_q = np.array([opts.first_quarter(i) for i in range(T)])[:, None]
    allowed = (t >= lead[None, :]) & (first_q >= rfs[None, :])
    module_commit = t - np.minimum(lead, up)[None, :]
    fixed_commit = t - lead[None, :]
    return allowed, module_commit, fixed_commit


def build_bound_lp(base: Network, full: Network, opts: RoadmapOptions, blocks: StateBlocks, gpu_committed: Sequence[float],
                   fix_max: bool, carried: np.ndarray | None = None, tol: float = 0.0, floor_period: int | None = None,
                   floors: np.ndarray | None = None, integer: bool = False) -> LinearProgram:
    """The multi-period LP (module doc); ``fix_max``: every build online at its maximum as early as allowed,
    minimise the routable traffic left unmet (the blocks are then independent).

    ``floor_period`` ``t``: the period MIP instead -- online modules and built routes integer, minimise the
    undiscounted cost of what is online in ``t`` (``blocks`` then holds period ``t``'s blocks), no budget rows.
    ``floors``: per period, a proven lower bound on that cost (the period MIPs' dual bounds), added as rows
    ``sum_l module_cost_l Y_{t,l} + sum_c fixed_c B_{t,c} >= floor_t``.
    ``integer``: online modules and built routes integer in every period -- the exact model of the covered set
    (:func:`roadmap_exact_mip`; small instances only)."""
    links = full.links
    n_old, L = len(base.links), len(links)
    T = len(gpu_committed)
    is_cand, cap, mod, unit, y_max = link_modules(links, n_old)
    fixed = np.zeros(L)
    fixed[is_cand] = base.candidates["fixed_cost_usd"].reindex(links.index[is_cand]).fillna(0.0).to_numpy(float)
    allowed, module_commit, fixed_commit = _allowed(full, base.candidates, n_old, opts, T)
    disc = (1.0 + opts.discount_rate_per_year) ** (-np.clip(module_commit, 0, None) * opts.years_per_period)
    tl = pd.MultiIndex.from_product([range(T), links.index], names=["period", "link"])
    tril = sp.csr_matrix(np.tril(np.ones((T, T))))
    lp = LinearProgram(f"roadmap-bound-{base.name}")
    y_cap = (y_max[None, :] * allowed).ravel()
    per_t = floor_period is not None
    at_t = (np.arange(T) == floor_period).repeat(L) if per_t else np.zeros(T * L, bool)
    lp.add_variables("modules", tl, cost=0.0 if fix_max or per_t else (disc * unit[None, :]).ravel(), upper=y_cap)
    online_max = (y_max[None, :] * allowed).ravel()
    lp.add_variables("online", tl, cost=np.where(at_t, np.tile(unit, T), 0.0), lower=online_max if fix_max else 0.0,
                     upper=np.tile(y_max, T), integer=per_t or integer)
    # online: Y_t = sum_{tau <= t} z_tau (capacity persists)
    lp.add_constraints("online", {"online": sp.identity(T * L, format="csr"),
                                  "modules": -sp.kron(tril, sp.identity(L), format="csr")},
                       lower=0.0, upper=0.0, index=tl)
    with_fixed = np.flatnonzero(is_cand & (fixed > 0))
    if len(with_fixed):
        F = len(with_fixed)
        tc = pd.MultiIndex.from_product([range(T), links.index[with_fixed]], names=["period", "link"])
        fdisc = (1.0 + opts.discount_rate_per_year) ** (-np.clip(fixed_commit[:, with_fixed], 0, None)
                                                        * opts.years_per_period)
        lp.add_variables("build", tc, cost=0.0 if fix_max or per_t else (fdisc * fixed[with_fixed][None, :]).ravel(),
                         upper=allowed[:, with_fixed].ravel().astype(float))
        f_at_t = (np.arange(T) == floor_period).repeat(F) if per_t else np.zeros(T * F, bool)
        lp.add_variables("built", tc, cost=np.where(f_at_t, np.tile(fixed[with_fixed], T), 0.0), upper=1.0,
                         integer=per_t or integer)
        lp.add_constraints("built", {"built": sp.identity(T * F, format="csr"),
                                     "build": -sp.kron(tril, sp.identity(F), format="csr")},
                           lower=0.0, upper=0.0, index=tc)
        pick = selector(np.arange(T * F), T * F, T * L, cols=(np.arange(T)[:, None] * L + with_fixed).ravel())
        lp.add_constraints("open", {"online": pick, "built": sp.diags(-np.tile(y_max[with_fixed], T), format="csr")},
                           upper=0.0, index=tc)
    _routing_variables(lp, blocks, fix_max)
    state_demand_rows(lp, [b.var_demand for b in blocks.states], blocks.demand.ravel(), lp.variables["unmet"].index)
    # the capacity of block j's link l is online in period t(j): column t(j) * L + l of ``online``
    arc_link = np.tile(np.r_[np.arange(L), np.arange(L)], len(blocks.states))
    state_capacity_rows(lp, [b.incidence for b in blocks.states], np.array([b.ceiling for b in blocks.states]), mod,
                        cap, block="online", cols=np.repeat(blocks.period, 2 * L) * L + arc_link, level="block")
    if not fix_max and carried is not None:
        J, K = blocks.demand.shape
        routable = routable_mask(blocks)
        rows = np.repeat(np.arange(J), K)
        lp.add_constraints("carried", {"unmet": selector(rows, J, J * K, values=routable.ravel().astype(float))},
                           upper=carried + tol, index=pd.RangeIndex(J, name="block"))
    if not fix_max and carried is not None:
        site_cut_rows(lp, full, blocks.period, [b.failed for b in blocks.states],
                      np.array([b.ceiling for b in blocks.states]), blocks.demand * routable_mask(blocks), allowed, cap, mod,
                      y_max, carried + tol)
    if not fix_max and not per_t:
        _budget_rows(lp, opts, gpu_committed, unit, fixed, module_commit, fixed_commit, with_fixed, L)
    if floors is not None:
        floor_rows(lp, floors, unit, fixed, with_fixed, L)
    return lp


def routable_mask(blocks: StateBlocks) -> np.ndarray:
    """Per block and commodity: has an admissible path (each commodity is one row of the union table)."""
    return np.stack([b.has_path for b in blocks.states]) if blocks.states else np.zeros(blocks.demand.shape, bool)


def _routing_variables(lp: LinearProgram, blocks: StateBlocks, fix_max: bool) -> None:
    """Flow variables of every state block and unmet demand per (block, commodity) (fixed at the demand
    where a commodity has no admissible path)."""
    J, K = blocks.demand.shape
    lp.add_variables("flow", int(sum(len(b.var_demand) for b in blocks.states)))
    routable = routable_mask(blocks)
    h = blocks.demand.ravel()
    index = pd.MultiIndex.from_product([range(J), range(K)], names=["block", "commodity"])
    lp.add_variables("unmet", index, cost=np.where(routable.ravel(), 1.0 if fix_max else 0.0, 0.0),
                     lower=np.where(routable.ravel(), 0.0, h), upper=h)


def _budget_rows(lp: LinearProgram, opts: RoadmapOptions, gpu_committed: Sequence[float], unit: np.ndarray,
                 fixed: np.ndarray, module_commit: np.ndarray, fixed_commit: np.ndarray, with_fixed: np.ndarray,
                 L: int) -> Block | None:
    """Cumulative budgets: capex committed up to period tau <= the budgets up to tau less the placement's capex
    (GPU blocks, replica storage) (None when no period has a finite budget)."""
    T = len(gpu_committed)
    room = np.cumsum(np.asarray(opts.budgets(), float) - np.asarray(gpu_committed, float))
    rows = np.flatnonzero(np.isfinite(room))
    if not len(rows):
        return None
    # row tau holds every build whose (latest) commit period is <= tau
    m = (module_commit.ravel()[None, :] <= rows[:, None]) * np.tile(unit, T)[None, :]
    coef: dict[str, sp.spmatrix] = {"modules": sp.csr_matrix(m)}
    if len(with_fixed):
        f = (fixed_commit[:, with_fixed].ravel()[None, :] <= rows[:, None]) * np.tile(fixed[with_fixed], T)[None, :]
        coef["build"] = sp.csr_matrix(f)
    return lp.add_constraints("budget", coef, upper=room[rows], index=pd.Index(rows, name="period"))


def state_blocks(base: Network, full: Network, last: Network, working_sets: Sequence[Sequence[str]], kind: str,
                  k: int, ceiling: float, failure_ceiling: float, h: np.ndarray, intact: bool = True) -> StateBlocks:
    """One block per period and modelled state (each period's intact state first, unless ``intact`` is False); the
    paths of a state are computed once for every period."""
    from backbone.solver.design.survivable.model import Commodities, state_block
    from backbone.solver.failures import enumerate_scenarios

    comm = Commodities.of_network(full)
    current = replace(last, demands=full.demands)
    scen = {s.id: s for s in enumerate_scenarios(full, kind)} if kind in ("link", "srlg", "site", "srlg,link") else {}  # type: ignore[arg-type]
    cache: dict[str, Any] = {}
    period, states = [], []
    for t, ws in enumerate(working_sets):
        for sid in [*(["intact"] if intact else []), *[str(x) for x in ws if str(x) in scen]]:
            if sid not in cache:
                failed = tuple(scen[sid].links) if sid != "intact" else ()
                cache[sid] = state_block(current, full, sid, failed, k,
                                         ceiling if sid == "intact" else failure_ceiling, comm)
            period.append(t)
            states.append(cache[sid])
    p = np.asarray(period, np.int64)
    return StateBlocks(p, states, h[p] if len(p) else np.zeros((0, h.shape[1])))


def floor_costs(base: Network, full: Network) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Module cost per link, fixed cost per link, the links with a fixed cost and the link count (``floor_rows``'
    arguments after the floors)."""
    links = full.links
    n_old, L = len(base.links), len(links)
    is_cand, _, _, unit, _ = link_modules(links, n_old)
    fixed = np.zeros(L)
    fixed[is_cand] = base.candidates["fixed_cost_usd"].reindex(links.index[is_cand]).fillna(0.0).to_numpy(float)
    return unit, fixed, np.flatnonzero(is_cand & (fixed > 0)), L
