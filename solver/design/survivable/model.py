"""The survivable-design MIP (:mod:`backbone.solver.design.survivable.iterate` iterates it over failure states).

One routing block per state over the candidate paths of the network with a set of candidate routes
open; demands with the same source, destination and SLO are one commodity. See the model in
:mod:`backbone.solver.design.survivable.iterate`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.errors import SolverError
from backbone.model import Network
from backbone.solver.core.problem import LinearProgram, solve
from backbone.solver.core.sparse import selector
from backbone.solver.design.summary import DesignStart
from backbone.solver.design.upgrades.families import (
    UNMET_PENALTY_USD_PER_GBPS,
    state_capacity_rows,
    state_demand_rows,
    state_paths,
)

__all__ = ["Commodities", "MipDesign", "StateBlock", "apply_design", "build_mip", "full_network", "read_mip",
           "routes_needed", "solve_mip", "state_block", "upgrade_table"]


def full_network(net: Network) -> Network:
    """``net`` with every candidate built at its maximum module count (the topology the design
    chooses from; candidate links keep their ids)."""
    cands = net.candidates
    if not len(cands):
        return net
    return net.with_candidates_built({str(c): int(m) for c, m in cands["max_modules"].items()})


@dataclass
class StateBlock:
    """Candidate paths of one state on the full network (intact link index), per commodity.

    Demands with the same source, destination and SLO have the same admissible paths, so they are
    routed as one *commodity* (exact for what can be carried: flows split freely between them)."""

    scenario: str
    failed: tuple[str, ...]
    var_demand: np.ndarray  # commodity of each flow variable
    incidence: sp.csr_matrix  # variables x arcs
    has_path: np.ndarray  # per demand
    ceiling: float
    offered: np.ndarray | None = None  # per demand: offered in the state (None: every demand; see state_block)

    def offered_demands(self) -> np.ndarray:
        """Per demand: whether the state offers it (a failure state does not offer the pausing classes)."""
        return np.ones(len(self.has_path), bool) if self.offered is None else self.offered


@dataclass
class Commodities:
    """Demands grouped by (src, dst, SLO, carries traffic, carried in a failure state): ``of`` maps demand ->
    commodity, ``first`` is a representative demand per commodity and ``gbps`` the commodity's demand.

    A commodity's demands all survive or all pause in a failure state (``carried``, per demand, from
    :func:`backbone.failure_policy.carried_in_failure`; default: every demand survives), so a state offers a
    commodity whole or not at all (:meth:`offered_gbps`)."""

    of: np.ndarray
    first: np.ndarray
    gbps: np.ndarray

    @classmethod
    def of_network(cls, net: Network, carried: np.ndarray | None = None) -> Commodities:
        d = net.demands
        gbps = d["demand_gbps"].to_numpy(float)
        survives = np.ones(len(d), bool) if carried is None else np.asarray(carried, bool)
        key = pd.DataFrame({"src": d["src"].to_numpy(), "dst": d["dst"].to_numpy(),
                            "slo": d["slo_rtt_ms"].to_numpy(float), "pos": gbps > 0, "survives": survives})
        of = key.groupby(["src", "dst", "slo", "pos", "survives"], sort=False, dropna=False).ngroup().to_numpy()
        n = int(of.max()) + 1 if len(of) else 0
        first = np.full(n, -1, np.int64)
        first[of[::-1]] = np.arange(len(of))[::-1]
        return cls(of, first, np.bincount(of, weights=gbps, minlength=n))

    def has_path(self, has_path_demand: np.ndarray) -> np.ndarray:
        """Per commodity: whether its demands have an admissible path."""
        return has_path_demand[self.first]

    def offered_gbps(self, block: StateBlock) -> np.ndarray:
        """Per commodity: the Gbps the state ``block`` offers (``h_{s,d}``: 0 for a pausing commodity in a failure
        state)."""
        return np.where(block.offered_demands()[self.first], self.gbps, 0.0)


def state_block(current: Network, full: Network, scenario: str, failed: Sequence[str], k_paths: int,
                 utilisation_ceiling: float, comm: Commodities | None = None,
                 offered: np.ndarray | None = None) -> StateBlock:
    """The state's ``k_paths`` candidate paths on ``full`` (TE's paths on any built design that uses only built
    links: removing links only removes paths), plus those on ``current`` when it differs (the routes
    TE uses there), one set of flow variables per commodity. ``offered`` (per demand; None: every demand) is
    what the state offers: a failure state leaves out the classes that pause (their demand ``h_{s,d}`` is 0)."""
    comm = comm or Commodities.of_network(full)
    vd, _, inc = state_paths(full, [x for x in failed if x in full.links.index], k_paths)
    if not current.links.index.equals(full.links.index):
        present = [x for x in failed if x in current.links.index]
        vd0, _, inc0 = state_paths(current, present, k_paths)
        L = len(full.links)
        col_link = full.links.index.get_indexer(current.links.index)
        col = np.concatenate([col_link, col_link + L])  # current arcs onto the full arc index
        coo = inc0.tocoo()
        inc0 = sp.csr_matrix((coo.data, (coo.row, col[coo.col])), shape=(inc0.shape[0], 2 * L))
        vd = np.concatenate([vd, vd0])
        inc = sp.vstack([inc, inc0], format="csr")
    has = np.zeros(len(full.demands), bool)
    has[vd] = True
    keep = comm.first[comm.of[vd]] == vd  # the representative demand's paths stand for its commodity
    return StateBlock(scenario, tuple(failed), comm.of[vd[keep]], inc[np.flatnonzero(keep)], has, utilisation_ceiling,
                      None if offered is None else np.asarray(offered, bool))


@dataclass
class MipDesign:
    """One solve of the design MIP (:func:`solve_mip`) over the links of ``full`` (the network with the candidates
    it may open built): what it buys, what each state is left short, its cost, bound and status.

    The design loop keeps the best of its solves and records on it the rounds it took (``path_rounds``), the
    starts it tried (``tried``) and their seconds together (``seconds``)."""

    full: Network
    """The model's network: the existing links then the candidates it may open."""
    modules: np.ndarray
    """Modules bought per link of ``full``."""
    is_candidate: np.ndarray
    """Whether each link of ``full`` is a candidate route (not an existing link)."""
    module_gbps: np.ndarray
    """Gbps of one module per link."""
    module_cost_usd: np.ndarray
    """Cost of one module per link."""
    fixed_cost_usd: np.ndarray
    """Fixed cost of opening each link (candidates; zero for existing links)."""
    cost_usd: float
    """What the design costs."""
    bound_usd: float | None
    """The MIP's dual bound on its restricted model (None when the solver reported none)."""
    unmet_gbps: np.ndarray
    """Unmet Gbps per state and commodity (states x commodities; zero where no path exists)."""
    no_path: np.ndarray
    """Commodities without an admissible path per state (states x commodities)."""
    needs: np.ndarray
    """Which states need each bought link (states x links)."""
    short_by_state_gbps: np.ndarray
    """Routable Gbps no design can carry per state (``U_s``; the capacity probe's)."""
    seconds: float
    """Seconds the MIP (and its probe) took."""
    stats: dict[str, int]
    """The MIP's size (rows, columns, nonzeros, integer columns)."""
    solver_status: str
    """The MIP's status (``optimal``, ``time_limit`` ...)."""
    unmet_all_gbps: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Every unmet variable's value (commodity per state), routable or not."""
    path_rounds: int = 0
    """MIP solves the design loop made this iteration (starts tried)."""
    tried: list[DesignStart] = field(default_factory=list)
    """Per start: ``start``, ``candidates_open``, ``routes``, ``unmet_gbps``, ``short_gbps``, ``cost_usd``."""


def solve_mip(net: Network, full: Network, blocks: list[StateBlock], time_limit_s: float, backend: str,
               mip_gap: float, tol: float, comm: Commodities) -> MipDesign:
    """The design MIP over ``blocks`` (see the module doc).

    Routable demand left unmet is penalised (far above any cost per Gbps), so the MIP always has
    a solution. When its best design still leaves routable demand unmet, an LP with every module
    bought finds the least unmet traffic per state ``U_s`` (no design does better: every bound is
    integral there); the proven lower bound on the cost of a design that carries all it can is
    the MIP's bound minus the penalty of ``sum_s U_s``.
    """
    t0 = time.perf_counter()
    lp, y_max = build_mip(net, full, blocks, comm, integer=True)
    sol = solve(lp, backend=backend, time_limit_s=max(1.0, time_limit_s), mip_gap=mip_gap)
    if not sol.status.has_solution:
        raise SolverError(f"survivable design: {sol.status.value} after {sol.solve_seconds:.1f} s ({sol.message})")
    S, D = len(blocks), len(comm.gbps)
    no_path = ~np.concatenate([comm.has_path(b.has_path) for b in blocks])
    unmet = np.where(no_path, 0.0, np.maximum(sol.values("unmet").to_numpy(), 0.0)).reshape(S, D)
    short_by_state = np.zeros(S)
    if unmet.sum() > tol:
        probe, _ = build_mip(net, full, blocks, comm, integer=False, fix_max=True)
        psol = solve(probe, backend=backend, time_limit_s=max(1.0, time_limit_s))
        if not psol.status.has_solution:
            raise SolverError(f"survivable design: capacity probe {psol.status.value} ({psol.message})")
        pu = np.where(no_path, 0.0, np.maximum(psol.values("unmet").to_numpy(), 0.0)).reshape(S, D)
        short_by_state = pu.sum(axis=1)
    out = read_mip(lp, sol, len(net.links), full, blocks, comm, y_max, short_by_state, unmet,
                    time.perf_counter() - t0)
    out.unmet_all_gbps = np.maximum(sol.values("unmet").to_numpy(), 0.0)
    return out


def link_modules(links: pd.DataFrame, n_old: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                          np.ndarray]:
    """Per link of ``links`` (existing links first, then ``n_old``-onwards candidate routes): ``(is_candidate,
    installed capacity_gbps (0 for a candidate), module_gbps, module_cost_usd, modules that can be added at
    most)``; a candidate's maximum is ``max_capacity_gbps / module_gbps``, an existing link's what fits under
    its ``max_capacity_gbps``."""
    is_cand = np.arange(len(links)) >= n_old
    cap = np.where(is_cand, 0.0, links["capacity_gbps"].to_numpy(float))
    mod = links["module_gbps"].to_numpy(float)
    cost = links["module_cost_usd"].to_numpy(float)
    y_max = np.where(is_cand, np.round(links["max_capacity_gbps"].to_numpy(float) / mod),
                     np.floor((links["max_capacity_gbps"].to_numpy(float) - cap) / mod + 1e-9)).clip(min=0)
    return is_cand, cap, mod, cost, np.nan_to_num(y_max, nan=0.0)


def build_mip(net: Network, full: Network, blocks: list[StateBlock], comm: Commodities, integer: bool,
               fix_max: bool = False) -> tuple[LinearProgram, np.ndarray]:
    """The program (module doc); ``fix_max``: every module bought, minimise unmet routable demand."""
    links = full.links
    n_old = len(net.links)
    L = len(links)
    is_cand, cap, mod, cost, y_max = link_modules(links, n_old)
    cands = net.candidates
    fixed = cands["fixed_cost_usd"].reindex(links.index[is_cand]).fillna(0.0).to_numpy(float)
    S = len(blocks)
    lp = LinearProgram(f"survivable-{net.name}")
    lp.add_variables("modules", links.index, cost=0.0 if fix_max else cost, lower=y_max if fix_max else 0.0,
                     upper=y_max, integer=integer)
    with_fixed = np.flatnonzero(fixed > 0)
    lp.add_variables("build", links.index[is_cand][with_fixed], cost=0.0 if fix_max else fixed[with_fixed],
                     lower=1.0 if fix_max else 0.0, upper=1.0, integer=integer)
    n_vars = np.array([len(b.var_demand) for b in blocks])
    offsets = np.concatenate([[0], np.cumsum(n_vars)])
    lp.add_variables("flow", int(offsets[-1]))
    index = pd.MultiIndex.from_product([range(S), full.demands.index[comm.first]], names=["state", "demand"])
    no_path = ~np.concatenate([comm.has_path(b.has_path) for b in blocks])
    h_all = np.concatenate([comm.offered_gbps(b) for b in blocks]) if S else np.zeros(0)  # h_{s,d}
    lp.add_variables("unmet", index, cost=np.where(no_path, 0.0, 1.0 if fix_max else UNMET_PENALTY_USD_PER_GBPS),
                     lower=np.where(no_path, h_all, 0.0), upper=h_all)
    state_demand_rows(lp, [b.var_demand for b in blocks], h_all, index)
    state_capacity_rows(lp, [b.incidence for b in blocks], np.array([b.ceiling for b in blocks]), mod, cap)
    # build: y_c - Y_c b_c <= 0 for candidates with a fixed cost
    if len(with_fixed):
        cpos = np.flatnonzero(is_cand)[with_fixed]
        n = len(with_fixed)
        lp.add_constraints("build", {"modules": selector(np.arange(n), n, L, cols=cpos),
                                     "build": sp.csr_matrix(sp.diags(-y_max[cpos]))},
                           upper=0.0, index=links.index[cpos])
    return lp, y_max


def read_mip(lp: LinearProgram, sol: Any, n_old: int, full: Network, blocks: list[StateBlock], comm: Commodities,
              y_max: np.ndarray, short_by_state: np.ndarray, unmet: np.ndarray, seconds: float) -> MipDesign:
    links = full.links
    L = len(links)
    is_cand = np.arange(L) >= n_old
    cap = np.where(is_cand, 0.0, links["capacity_gbps"].to_numpy(float))
    mod = links["module_gbps"].to_numpy(float)
    cost = links["module_cost_usd"].to_numpy(float)
    fixed = np.zeros(L)
    if "build" in lp.variables and lp.variables["build"].size:
        fixed[links.index.get_indexer(lp.variables["build"].index)] = lp.c[lp.variables["build"].slice]
    S, D = len(blocks), len(comm.gbps)
    n_vars = np.array([len(b.var_demand) for b in blocks])
    offsets = np.concatenate([[0], np.cumsum(n_vars)])
    no_path = ~np.concatenate([comm.has_path(b.has_path) for b in blocks])
    y = np.round(sol.values("modules").to_numpy()).clip(0, y_max)
    design_cost = float(cost @ y + fixed[y > 0.5].sum())
    bound = None if sol.bound is None or not np.isfinite(sol.bound) else max(0.0, min(
        design_cost, float(sol.bound) - UNMET_PENALTY_USD_PER_GBPS * float(short_by_state.sum())))
    # which states need each bought link: an upgrade where the state's load exceeds the pre-plan
    # capacity at its ceiling; a new route where the state sends more over it than the intact state
    flows = sol.values("flow").to_numpy()
    loads = np.stack([b.incidence.T @ flows[offsets[i]:offsets[i + 1]] for i, b in enumerate(blocks)]) \
        if S else np.zeros((0, 2 * L))
    link_load = np.maximum(loads[:, :L], loads[:, L:])
    ceil = np.array([b.ceiling for b in blocks])[:, None]
    needs = np.where(is_cand[None, :], link_load > link_load[:1] + 1e-6, link_load > ceil * cap[None, :] + 1e-6)
    return MipDesign(full=full, modules=y, is_candidate=is_cand, module_gbps=mod, module_cost_usd=cost,
                     fixed_cost_usd=fixed, cost_usd=design_cost, bound_usd=bound, unmet_gbps=unmet,
                     no_path=no_path.reshape(S, D), needs=needs, short_by_state_gbps=short_by_state, seconds=seconds,
                     stats=lp.stats(), solver_status=sol.status.value)


def routes_needed(base: Network, full: Network, full_blocks: list[StateBlock], k_paths: int,
                   comm: Commodities) -> list[str]:
    """The few new routes the states need: every demand that has no admissible path on the existing
    network in a state (cut apart, or none within its SLO) but has one with every candidate built
    gets the candidates of its cheapest such path (fixed plus one module's cost; the shortest among
    equals). Building more than needed only crowds TE's ``k_paths`` shortest paths onto new routes."""
    L = len(full.links)
    is_cand = ~full.links.index.isin(base.links.index)
    if not is_cand.any():
        return []
    cands = base.candidates
    price = np.zeros(L)
    price[is_cand] = (cands["fixed_cost_usd"].reindex(full.links.index[is_cand]).fillna(0.0).to_numpy(float)
                      + full.links["module_cost_usd"].to_numpy(float)[is_cand])
    arc_price = np.concatenate([price, price])
    wanted: set[int] = set()
    for b in full_blocks:
        present = [x for x in b.failed if x in base.links.index]
        vd0, _, _ = state_paths(base, present, k_paths)
        has0 = np.zeros(len(full.demands), bool)
        has0[vd0] = True
        offered = b.offered_demands()[comm.first]  # a pausing commodity needs no route in a failure state
        rows = np.flatnonzero(~comm.has_path(has0)[b.var_demand] & offered[b.var_demand])
        if not len(rows):
            continue
        cost = b.incidence[rows] @ arc_price
        order = np.lexsort((np.arange(len(rows)), cost, b.var_demand[rows]))  # per commodity: cheapest, then first
        _, first = np.unique(b.var_demand[rows][order], return_index=True)
        cols = np.unique(b.incidence[rows[order[first]]].tocoo().col % L)
        wanted |= set(cols[is_cand[cols]].tolist())
    ids = {str(full.links.index[i]) for i in wanted}
    return [str(c) for c in base.candidates.index if str(c) in ids]


LEAD_FROM_CANDIDATE = "candidate route"
"""``lead_time_from`` of a new route: the candidate's own ``lead_time_quarters``."""
LEAD_FROM_PARAMETER = "scenario upgrade_lead_quarters"
"""``lead_time_from`` of a link upgrade: the scenario parameter ``upgrade_lead_quarters``
(:data:`backbone.model.DEFAULT_PARAMETERS`; the links table has no lead time of its own)."""


def upgrade_table(net: Network, full: Network, mip: MipDesign, states: list[str]) -> pd.DataFrame:
    """One row per upgraded link or built candidate of the MIP solution ``mip`` (columns of
    :class:`backbone.solver.design.survivable.iterate.SurvivableDesign`'s ``upgrades``), ``protects`` naming the ``states`` that
    need it, costliest first."""
    y, is_cand, mod, unit = mip.modules, mip.is_candidate, mip.module_gbps, mip.module_cost_usd
    chosen = np.flatnonzero(y > 0.5)
    ids = full.links.index
    cands = net.candidates
    fixed = pd.Series(0.0, index=ids)
    if len(cands):
        fixed.loc[ids[is_cand]] = cands["fixed_cost_usd"].reindex(ids[is_cand]).fillna(0.0).to_numpy(float)
    needs = mip.needs
    upgrade_lead = round(float(net.parameters["upgrade_lead_quarters"]))
    rows = []
    for i in chosen:
        lid = str(ids[i])
        cand = bool(is_cand[i])
        protects = [states[s] for s in np.flatnonzero(needs[:, i])]
        rows.append({
            "link": lid, "action": "new route" if cand else "upgrade",
            "kind": str(cands.at[lid, "kind"]) if cand else str(full.links.at[lid, "kind"]),
            "site_a": str(full.links.at[lid, "site_a"]), "site_b": str(full.links.at[lid, "site_b"]),
            "cable_system": str(full.links.at[lid, "cable_system"] or ""),
            "modules": int(y[i]), "module_gbps": float(mod[i]), "added_gbps": float(y[i] * mod[i]),
            "fixed_cost_usd": float(fixed.iloc[i]) if cand else 0.0,
            "cost_usd": float(y[i] * unit[i] + (fixed.iloc[i] if cand else 0.0)),
            "lead_time_quarters": int(cands.at[lid, "lead_time_quarters"]) if cand else upgrade_lead,
            "lead_time_from": LEAD_FROM_CANDIDATE if cand else LEAD_FROM_PARAMETER,
            "protects": protects,
        })
    cols = ["link", "action", "kind", "site_a", "site_b", "cable_system", "modules", "module_gbps", "added_gbps",
            "fixed_cost_usd", "cost_usd", "lead_time_quarters", "lead_time_from", "protects"]
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values("cost_usd", ascending=False, kind="stable").reset_index(drop=True)


def apply_design(net: Network, full: Network, mip: MipDesign) -> tuple[Network, dict[str, float], dict[str, int]]:
    """``net`` with the MIP's upgrades and built candidates (links of ``full``), and those as
    ``{link: added_gbps}`` and ``{candidate: modules}``."""
    y, is_cand, mod = mip.modules, mip.is_candidate, mip.module_gbps
    ids = full.links.index
    added = {str(ids[i]): float(y[i] * mod[i]) for i in np.flatnonzero(~is_cand & (y > 0.5))}
    built = {str(ids[i]): int(y[i]) for i in np.flatnonzero(is_cand & (y > 0.5))}
    after = net.upgrade_links(added) if added else net
    return (after.with_candidates_built(built) if built else after), added, built
