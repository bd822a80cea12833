"""Network design: which capacity modules to install so every demand is carried, at minimum cost.

One formulation serves SNDlib instances (:mod:`backbone.solver.sndlib` builds the instance from a network
file and a model code) and the backbone's own upgrade question
(:func:`backbone.solver.design_task.design_upgrades`; the ``design`` planning task is
:mod:`backbone.solver.tasks.design`).

Formulation (aggregated multicommodity flow, one flow copy per network state)
------------------------------------------------------------------------------
Demands are aggregated by source node ``k``: ``f[s, k, a] >= 0`` is the flow of every demand
from ``k`` on arc ``a`` in network state ``s`` (state 0: nothing fails; state ``s > 0``: the
links of ``states[s]`` fail and their arcs carry nothing). ``y[m]`` counts installed modules
(integer; binary for explicit capacities; continuous for linear capacities), ``z[l]`` opens a
link (fixed-charge models only), ``r[l]`` is the largest flow on link ``l`` over the states
(survivable models with routing cost only). Each family below is a sparse block of rows:

* conservation: ``Inc @ f[s, k] = b[k]`` (``b[k, k]`` = total demand out of ``k``,
  ``b[k, t] = -d(k, t)``);
* capacity: ``sum_k G @ f[s, k] - C @ y <= pre`` where ``G`` sums both arcs of a link
  (undirected links) or picks one arc (bidirected: each direction its own capacity; directed);
* routing (survivable with routing cost): ``sum_k H @ f[s, k] - r <= 0``;
* choice (explicit capacities): ``sum_{m in l} y[m] <= 1``;
* setup (fixed charge): ``y[m] - ub[m] z[l(m)] <= 0``;
* cut-set (MIR): for every single-node cut and every adjacent node pair ``S`` (and, in
  survivable models, every state whose failed link crosses ``S``), capacity across ``S`` must
  cover the demand across it: ``sum_{l in delta(S)} (pre_l + sum_m cap_m y_m) >= D(S)``, divided
  by a module size ``c`` and strengthened by mixed-integer rounding:
  ``sum_m (floor(a_m) + min(f_m, f) / f) y_m >= ceil(beta)`` with ``a_m = cap_m / c``,
  ``beta = (D(S) - pre(delta(S))) / c``, ``f = frac(beta)``, ``f_m = frac(a_m)``.

Objective: ``sum_m cost_m y_m + sum_l setup_l z_l + routing cost + preinstalled cost`` (a
constant), routing cost = ``sum rc_l x flow`` (one state) or ``sum rc_l r_l`` (survivable).

Solving (:func:`solve_design`): the LP relaxation with cuts gives a lower bound and loads; the
loads are rounded up to the cheapest module mix, surplus modules are removed while the design
stays feasible (one fixed-design LP per trial, time-boxed), and the result is passed to the MIP
as a start (HiGHS). The reported lower bound is the better of the MIP dual bound and the LP bound.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.errors import InfeasibleError, SolverError
from backbone.solver.problem import INF, LinearProgram, Solution, Status, solve

logger = logging.getLogger(__name__)

ProgressFn = Callable[[float, str], None]

LP_TIME_SHARE = 0.3
"""Share of the time limit the LP relaxation may use."""
IMPROVE_TIME_SHARE = 0.2
"""Share of the time limit the remove-modules improvement pass may use."""
MAX_CUT_DIVISORS = 3
"""Module sizes used as MIR divisors per cut (smallest, largest, most cost-efficient)."""
FEAS_TOL = 1e-6


def _no_progress(fraction: float, message: str) -> None:
    """Ignore progress."""


# ---------------------------------------------------------------------- the instance
@dataclass(frozen=True)
class DesignInstance:
    """A network design problem in plain arrays.

    Attributes
    ----------
    name
        For logs and results.
    nodes
        Node ids (positions are the integer node numbers used below).
    links
        Index: link id. Columns ``a``, ``b`` (int node positions), ``preinstalled``,
        ``preinstalled_cost``, ``routing_cost`` (per unit of flow), ``setup_cost``.
    modules
        One row per installable module type: ``link`` (int position), ``capacity``, ``cost``
        (per module), ``max_count`` (``inf`` = unlimited).
    demands
        Index: demand id. Columns ``s``, ``t`` (int node positions), ``volume``.
    link_model
        ``U`` undirected (both directions share capacity), ``B`` bidirected (each direction
        has the installed capacity), ``D`` directed (only ``a -> b``).
    capacity_model
        ``M`` modular (integer counts), ``E`` explicit (at most one module per link), ``L``
        linear (continuous counts).
    fixed_charge
        Pay ``setup_cost`` for every link with capacity.
    states
        Failed link positions per network state; ``states[0]`` must be ``()``.
    state_names
        Name per state (``NOS``, then the failed link ids).
    """

    name: str
    nodes: pd.Index
    links: pd.DataFrame
    modules: pd.DataFrame
    demands: pd.DataFrame
    link_model: Literal["U", "B", "D"] = "U"
    capacity_model: Literal["M", "E", "L"] = "M"
    fixed_charge: bool = False
    states: tuple[tuple[int, ...], ...] = ((),)
    state_names: tuple[str, ...] = ("NOS",)

    @property
    def n_links(self) -> int:
        return len(self.links)

    def arcs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tail, head, link) per arc: arcs ``0..L-1`` run ``a -> b``; for U and B links arcs
        ``L..2L-1`` run ``b -> a``."""
        a, b = self.links["a"].to_numpy(int), self.links["b"].to_numpy(int)
        idx = np.arange(self.n_links)
        if self.link_model == "D":
            return a, b, idx
        return np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([idx, idx])

    def sources(self) -> tuple[np.ndarray, np.ndarray]:
        """(source nodes K, supply matrix K x N) of the aggregated flow."""
        s, t = self.demands["s"].to_numpy(int), self.demands["t"].to_numpy(int)
        vol = self.demands["volume"].to_numpy(float)
        keep = vol > 0
        src = np.unique(s[keep])
        k_of = np.searchsorted(src, s[keep])
        n = len(self.nodes)
        out = sp.coo_matrix((vol[keep], (k_of, s[keep])), shape=(len(src), n))
        into = sp.coo_matrix((vol[keep], (k_of, t[keep])), shape=(len(src), n))
        return src, (out - into).toarray()

    def constant_cost(self) -> float:
        """Cost every design pays: pre-installed capacity, and setup of links with pre-installed
        capacity under fixed charge."""
        c = float(self.links["preinstalled_cost"].sum())
        if self.fixed_charge:
            pre = self.links["preinstalled"].to_numpy(float) > 0
            c += float(self.links["setup_cost"].to_numpy(float)[pre].sum())
        return c

    def module_upper(self) -> np.ndarray:
        """A finite upper bound per module: ``max_count``, else enough to carry all demand
        (1 for explicit capacities)."""
        cap = self.modules["capacity"].to_numpy(float)
        total = float(self.demands["volume"].sum()) * (2.0 if self.link_model == "U" else 1.0)
        need = np.ceil(np.maximum(total, 1.0) / cap) + 1.0
        ub = np.minimum(self.modules["max_count"].to_numpy(float), need)
        return np.minimum(ub, 1.0) if self.capacity_model == "E" else ub


# ---------------------------------------------------------------------- constraint families
def incidence(n_nodes: int, tail: np.ndarray, head: np.ndarray) -> sp.csr_matrix:
    """Node-arc incidence: ``+1`` at the tail, ``-1`` at the head (out minus in)."""
    a = len(tail)
    cols = np.arange(a)
    return sp.csr_matrix((np.r_[np.ones(a), -np.ones(a)], (np.r_[tail, head], np.r_[cols, cols])),
                         shape=(n_nodes, a))


def _capacity_pattern(inst: DesignInstance) -> tuple[sp.csr_matrix, np.ndarray]:
    """(G, row_link): capacity rows over arcs -- U: one row per link summing both arcs;
    B: one row per arc; D: one row per (forward) arc."""
    _, _, arc_link = inst.arcs()
    n_arcs = len(arc_link)
    if inst.link_model == "U":
        g = sp.csr_matrix((np.ones(n_arcs), (arc_link, np.arange(n_arcs))), shape=(inst.n_links, n_arcs))
        return g, np.arange(inst.n_links)
    return sp.identity(n_arcs, format="csr"), arc_link


def _link_flow(inst: DesignInstance) -> sp.csr_matrix:
    """H (L x arcs): flow on each link, both directions counted (routing cost basis)."""
    _, _, arc_link = inst.arcs()
    n_arcs = len(arc_link)
    return sp.csr_matrix((np.ones(n_arcs), (arc_link, np.arange(n_arcs))), shape=(inst.n_links, n_arcs))


def _module_capacity(inst: DesignInstance, row_link: np.ndarray) -> sp.csr_matrix:
    """(rows x modules) capacity each module adds to each capacity row's link."""
    mod_link = inst.modules["link"].to_numpy(int)
    lm = sp.csr_matrix((inst.modules["capacity"].to_numpy(float), (mod_link, np.arange(len(mod_link)))),
                       shape=(inst.n_links, len(mod_link)))
    pick = sp.csr_matrix((np.ones(len(row_link)), (np.arange(len(row_link)), row_link)),
                         shape=(len(row_link), inst.n_links))
    return (pick @ lm).tocsr()


def conservation_rows(inst: DesignInstance, n_sources: int, supply: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """``Inc @ f[s, k] = b[k]`` for every state and source: (kron(I_SK, Inc), tiled b)."""
    tail, head, _ = inst.arcs()
    inc = incidence(len(inst.nodes), tail, head)
    n_blocks = len(inst.states) * n_sources
    return sp.kron(sp.identity(n_blocks, format="csr"), inc, format="csr"), np.tile(supply.ravel(), len(inst.states))


def capacity_rows(inst: DesignInstance, n_sources: int) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
    """``sum_k G @ f[s, k] - C @ y <= pre`` per state: (flow part, module part, rhs)."""
    g, row_link = _capacity_pattern(inst)
    per_state = sp.kron(np.ones((1, n_sources)), g, format="csr")
    flow = sp.kron(sp.identity(len(inst.states), format="csr"), per_state, format="csr")
    mods = -sp.vstack([_module_capacity(inst, row_link)] * len(inst.states), format="csr")
    pre = inst.links["preinstalled"].to_numpy(float)[row_link]
    return flow, mods, np.tile(pre, len(inst.states))


def routing_rows(inst: DesignInstance, n_sources: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``sum_k H @ f[s, k] - r <= 0`` per state: (flow part, r part)."""
    per_state = sp.kron(np.ones((1, n_sources)), _link_flow(inst), format="csr")
    flow = sp.kron(sp.identity(len(inst.states), format="csr"), per_state, format="csr")
    r = -sp.vstack([sp.identity(inst.n_links, format="csr")] * len(inst.states), format="csr")
    return flow, r


def choice_rows(inst: DesignInstance) -> sp.csr_matrix:
    """``sum_{m in l} y[m] <= 1`` (explicit capacities): the link-module incidence."""
    mod_link = inst.modules["link"].to_numpy(int)
    return sp.csr_matrix((np.ones(len(mod_link)), (mod_link, np.arange(len(mod_link)))),
                         shape=(inst.n_links, len(mod_link)))


def setup_rows(inst: DesignInstance) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``y[m] - ub[m] z[l(m)] <= 0`` (fixed charge): (y part, z part)."""
    n = len(inst.modules)
    mod_link = inst.modules["link"].to_numpy(int)
    z = sp.csr_matrix((-inst.module_upper(), (np.arange(n), mod_link)), shape=(n, inst.n_links))
    return sp.identity(n, format="csr"), z


def cut_crossings(inst: DesignInstance) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """Cuts ``S`` (every node, every adjacent node pair): (out-crossing C x L, in-crossing C x L,
    membership C x N). A link crosses out of ``S`` when ``a in S, b not in S``."""
    n, n_links = len(inst.nodes), inst.n_links
    a, b = inst.links["a"].to_numpy(int), inst.links["b"].to_numpy(int)
    pairs = np.unique(np.sort(np.c_[a, b], axis=1), axis=0)
    rows = np.r_[np.arange(n), np.repeat(np.arange(len(pairs)) + n, 2)]
    cols = np.r_[np.arange(n), pairs.ravel()]
    member = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n + len(pairs), n))
    ina = member[:, a].toarray() > 0
    inb = member[:, b].toarray() > 0
    out_cross = sp.csr_matrix((ina & ~inb).astype(float))
    in_cross = sp.csr_matrix((~ina & inb).astype(float))
    del n_links
    return out_cross, in_cross, member


def cutset_rows(inst: DesignInstance) -> tuple[sp.csr_matrix, np.ndarray]:
    """MIR-strengthened cut-set inequalities on the module counts: (C x M matrix, lower bound).

    For every cut ``S``, every state whose failed links cross it (and the normal state), and up
    to :data:`MAX_CUT_DIVISORS` module sizes ``c``: ``sum_m g_m y_m >= ceil(beta)`` (module doc).
    Empty for linear capacities (the LP already implies them).
    """
    m_count = len(inst.modules)
    if inst.capacity_model == "L" or m_count == 0 or len(inst.demands) == 0:
        return sp.csr_matrix((0, m_count)), np.zeros(0)
    out_x, in_x, member = cut_crossings(inst)
    s, t = inst.demands["s"].to_numpy(int), inst.demands["t"].to_numpy(int)
    vol = inst.demands["volume"].to_numpy(float)
    mem = member.toarray() > 0
    d_out = (mem[:, s] & ~mem[:, t]).astype(float) @ vol
    d_in = (~mem[:, s] & mem[:, t]).astype(float) @ vol
    pre = inst.links["preinstalled"].to_numpy(float)
    # (crossing matrix, demand) per requirement family
    if inst.link_model == "U":
        reqs = [(out_x + in_x, d_out + d_in)]
    elif inst.link_model == "B":
        reqs = [(out_x + in_x, np.maximum(d_out, d_in))]
    else:
        reqs = [(out_x, d_out), (in_x, d_in)]
    crossings, demand = [], []
    for x, d in reqs:
        xd = x.toarray()
        crossings.append(xd)
        demand.append(d)
        for failed in inst.states[1:]:
            hit = xd[:, list(failed)].sum(axis=1) > 0
            if hit.any():
                xs = xd[hit].copy()
                xs[:, list(failed)] = 0.0
                crossings.append(xs)
                demand.append(d[hit])
    xmat = np.vstack(crossings)
    dem = np.concatenate(demand)
    beta_abs = dem - xmat @ pre
    keep = beta_abs > FEAS_TOL
    xmat, beta_abs = xmat[keep], beta_abs[keep]
    cap = inst.modules["capacity"].to_numpy(float)
    mod_link = inst.modules["link"].to_numpy(int)
    xm = xmat[:, mod_link]  # cuts x modules, 1 where the module's link crosses
    divisors = _divisors(inst)
    mats, rhs = [], []
    for c in divisors:
        beta = beta_abs / c
        frac = beta - np.floor(beta)
        a = cap / c
        fa = a - np.floor(a)
        integral = frac < 1e-9
        f = np.where(integral, 1.0, frac)[:, None]
        coef = np.where(integral[:, None], np.ceil(a - 1e-12)[None, :],
                        np.floor(a)[None, :] + np.minimum(fa[None, :], f) / f)
        mats.append(sp.csr_matrix(xm * coef))
        rhs.append(np.ceil(beta - 1e-9))
    if not mats:
        return sp.csr_matrix((0, m_count)), np.zeros(0)
    return sp.vstack(mats, format="csr"), np.concatenate(rhs)


def _divisors(inst: DesignInstance) -> list[float]:
    cap = inst.modules["capacity"].to_numpy(float)
    per_unit = inst.modules["cost"].to_numpy(float) / cap
    picks = [cap.min(), cap.max(), cap[int(np.argmin(per_unit))]]
    return sorted(set(float(c) for c in picks))[:MAX_CUT_DIVISORS]


# ---------------------------------------------------------------------- assembling the program
@dataclass
class DesignProgram:
    """The assembled program and what is needed to read it back."""

    lp: LinearProgram
    sources: np.ndarray
    n_arcs: int


def build_design_lp(inst: DesignInstance, cuts: bool = True, fixed_counts: np.ndarray | None = None) -> DesignProgram:
    """Assemble the design program (families in the module docstring).

    Parameters
    ----------
    cuts
        Add the MIR cut-set family.
    fixed_counts
        Fix every module count (continuous program: the fixed-design routing LP).
    """
    src, supply = inst.sources()
    n_k = len(src)
    tail, _, arc_link = inst.arcs()
    n_arcs = len(tail)
    n_states = len(inst.states)
    n_mod = len(inst.modules)
    lp = LinearProgram(f"design-{inst.name}")
    lp.objective_offset = inst.constant_cost()
    integer = inst.capacity_model != "L" and fixed_counts is None
    ub = inst.module_upper() if inst.fixed_charge else inst.modules["max_count"].to_numpy(float)
    if inst.capacity_model == "E":
        ub = np.minimum(ub, 1.0)
    lower = 0.0 if fixed_counts is None else fixed_counts
    upper = ub if fixed_counts is None else fixed_counts
    lp.add_variables("modules", inst.modules.index, cost=inst.modules["cost"].to_numpy(float), lower=lower,
                     upper=upper, integer=integer)
    pre = inst.links["preinstalled"].to_numpy(float)
    if inst.fixed_charge:
        z_lower = (pre > 0).astype(float)
        z_upper = np.ones(inst.n_links)
        if fixed_counts is not None:
            used = np.bincount(inst.modules["link"].to_numpy(int), weights=fixed_counts, minlength=inst.n_links) > 0
            z_lower = z_upper = np.maximum(z_lower, used.astype(float))
        setup = np.where(pre > 0, 0.0, inst.links["setup_cost"].to_numpy(float))  # pre-installed: in the offset
        lp.add_variables("setup", inst.links.index, cost=setup, lower=z_lower, upper=z_upper,
                         integer=fixed_counts is None)
    rc = inst.links["routing_cost"].to_numpy(float)
    survivable_rc = n_states > 1 and bool((rc > 0).any())
    flow_cost = np.zeros(n_states * n_k * n_arcs) if survivable_rc else np.tile(rc[arc_link], n_states * n_k)
    flow_upper = np.full((n_states, n_k, n_arcs), INF)
    for s, failed in enumerate(inst.states):
        if failed:
            flow_upper[s, :, np.isin(arc_link, failed)] = 0.0
    flow_index = pd.MultiIndex.from_product([range(n_states), src, range(n_arcs)], names=["state", "source", "arc"])
    lp.add_variables("flow", flow_index, cost=flow_cost, upper=flow_upper.ravel())
    if survivable_rc:
        lp.add_variables("routing", inst.links.index, cost=rc)
    cons, rhs = conservation_rows(inst, n_k, supply)
    lp.add_constraints("conservation", {"flow": cons}, lower=rhs, upper=rhs)
    flow_part, mod_part, cap_rhs = capacity_rows(inst, n_k)
    lp.add_constraints("capacity", {"flow": flow_part, "modules": mod_part}, upper=cap_rhs)
    if survivable_rc:
        f_part, r_part = routing_rows(inst, n_k)
        lp.add_constraints("routing_max", {"flow": f_part, "routing": r_part}, upper=0.0)
    if inst.capacity_model == "E" and n_mod:
        lp.add_constraints("choice", {"modules": choice_rows(inst)}, upper=1.0, index=inst.links.index)
    if inst.fixed_charge and n_mod:
        y_part, z_part = setup_rows(inst)
        lp.add_constraints("setup", {"modules": y_part, "setup": z_part}, upper=0.0)
    if cuts and fixed_counts is None:
        cut_mat, cut_rhs = cutset_rows(inst)
        if cut_mat.shape[0]:
            lp.add_constraints("cutset", {"modules": cut_mat}, lower=cut_rhs)
    return DesignProgram(lp, src, n_arcs)


# ---------------------------------------------------------------------- results
@dataclass
class DesignSolution:
    """A design and how good it is.

    Attributes
    ----------
    status
        ``optimal`` (gap within tolerance), ``feasible`` (a design, not proven optimal) or
        ``time_limit`` (no design found in time).
    cost
        Objective of the design (NaN when none).
    lower_bound
        Best proven lower bound: max(MIP dual bound, LP relaxation with cuts).
    counts
        Modules installed, per module row of the instance.
    flows
        ``(states, sources, arcs)`` flow of the design (None when no design).
    """

    status: str
    cost: float
    lower_bound: float
    counts: np.ndarray | None
    flows: np.ndarray | None
    sources: np.ndarray
    lp_bound: float = float("nan")
    heuristic_cost: float = float("nan")
    mip_status: str = ""
    backend: str = "highs"
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the solver had to do (e.g. an objective it re-solved)

    @property
    def gap(self) -> float | None:
        """Relative gap ``(cost - bound) / cost`` (None without a design or bound)."""
        if self.counts is None or not math.isfinite(self.cost) or not math.isfinite(self.lower_bound):
            return None
        return max(0.0, self.cost - self.lower_bound) / max(abs(self.cost), 1e-9)

    def installed(self, inst: DesignInstance) -> pd.Series:
        """Total capacity per link (pre-installed + modules)."""
        pre = inst.links["preinstalled"].astype(float)
        if self.counts is None:
            return pre
        cap = inst.modules["capacity"].to_numpy(float) * self.counts
        added = np.bincount(inst.modules["link"].to_numpy(int), weights=cap, minlength=inst.n_links)
        return pre + added


def _flows(prog: DesignProgram, inst: DesignInstance, sol: Solution) -> np.ndarray:
    return sol.values("flow").to_numpy().reshape(len(inst.states), len(prog.sources), prog.n_arcs)


def link_loads(inst: DesignInstance, flows: np.ndarray) -> np.ndarray:
    """Capacity needed per link and state (S x L): U both arcs summed, B the larger arc, D the arc."""
    per_arc = flows.sum(axis=1)
    n_links = inst.n_links
    if inst.link_model == "U":
        return per_arc[:, :n_links] + per_arc[:, n_links:]
    if inst.link_model == "B":
        return np.maximum(per_arc[:, :n_links], per_arc[:, n_links:])
    return per_arc


# ---------------------------------------------------------------------- heuristics
def round_up_design(inst: DesignInstance, need: np.ndarray) -> np.ndarray:
    """Cheapest module counts covering ``need`` (capacity beyond pre-installed) on every link.

    Modular: the cheaper of (one module type, ``ceil(need / cap)`` times) and (the most
    cost-efficient module ``floor(need / cap)`` times plus one type for the rest). Explicit: the
    cheapest single option at least ``need`` (else the largest). Linear: exactly ``need`` of the
    most cost-efficient module. This is post-processing of a solution, one pass over links.
    """
    mods = inst.modules
    counts = np.zeros(len(mods))
    cap, cost = mods["capacity"].to_numpy(float), mods["cost"].to_numpy(float)
    upper = mods["max_count"].to_numpy(float)
    groups = mods.groupby("link").indices
    for link, rows in groups.items():
        rows = np.asarray(rows)
        nd = max(0.0, float(need[int(link)]))
        if nd <= FEAS_TOL * max(1.0, cap[rows].max()):
            continue
        if inst.capacity_model == "L":
            best = rows[np.argmin(cost[rows] / cap[rows])]
            counts[best] = nd / cap[best]
            continue
        if inst.capacity_model == "E":
            ok = rows[cap[rows] >= nd - FEAS_TOL]
            pick = ok[np.argmin(cost[ok])] if len(ok) else rows[np.argmax(cap[rows])]
            counts[pick] = 1.0
            continue
        single = np.ceil(nd / cap[rows] - 1e-9)
        single_cost = np.where(single <= upper[rows], single * cost[rows], np.inf)
        best_i = int(np.argmin(single_cost))
        option: dict[int, float] = {int(rows[best_i]): float(single[best_i])}
        best_cost = float(single_cost[best_i])
        eff = rows[np.argmin(cost[rows] / cap[rows])]
        n_big = min(math.floor(nd / cap[eff]), upper[eff])
        rest = nd - n_big * cap[eff]
        if rest > FEAS_TOL:
            rest_n = np.ceil(rest / cap[rows] - 1e-9)
            extra = np.where(rows == eff, n_big + rest_n <= upper[rows], rest_n <= upper[rows])
            rest_cost = np.where(extra, rest_n * cost[rows], np.inf)
            j = int(np.argmin(rest_cost))
            mixed = n_big * cost[eff] + rest_cost[j]
            if mixed < best_cost - 1e-9:
                option = {int(eff): float(n_big)}
                option[int(rows[j])] = option.get(int(rows[j]), 0.0) + float(rest_n[j])
        if math.isfinite(best_cost) or len(option) > 1:
            for r, n in option.items():
                counts[r] = n
        else:  # not coverable within max_count: install everything allowed
            counts[rows] = np.where(np.isfinite(upper[rows]), upper[rows], 0.0)
    return counts


def _design_cost(inst: DesignInstance, counts: np.ndarray) -> float:
    cost = float(inst.modules["cost"].to_numpy(float) @ counts) + inst.constant_cost()
    if inst.fixed_charge:
        pre = inst.links["preinstalled"].to_numpy(float) > 0
        used = np.bincount(inst.modules["link"].to_numpy(int), weights=counts, minlength=inst.n_links) > 0
        cost += float(inst.links["setup_cost"].to_numpy(float)[used & ~pre].sum())
    return cost


@dataclass
class _Evaluated:
    counts: np.ndarray
    cost: float
    x: np.ndarray
    flows: np.ndarray


def evaluate_design(inst: DesignInstance, counts: np.ndarray, time_limit: float, backend: str = "highs",
                    ) -> _Evaluated | None:
    """Route all states on a fixed design at minimum routing cost; None when it cannot carry
    the demand (or the LP does not finish in time)."""
    prog = build_design_lp(inst, cuts=False, fixed_counts=counts)
    sol = solve(prog.lp, backend=backend, time_limit=max(time_limit, 0.1))
    if sol.status != Status.OPTIMAL or sol.x is None:
        return None
    return _Evaluated(counts, sol.objective, sol.x, _flows(prog, inst, sol))


def improve_design(inst: DesignInstance, start: _Evaluated, deadline: float, backend: str = "highs") -> _Evaluated:
    """Remove surplus modules while the design stays feasible (first improvement, time-boxed).

    First drops modules the routing leaves unused (slack at least one module on every state),
    then tries removing (modular) or downsizing (explicit) the most expensive installed module
    per link with one fixed-design LP per trial until a full pass finds nothing or time runs out.
    """
    best = start
    cap, cost = inst.modules["capacity"].to_numpy(float), inst.modules["cost"].to_numpy(float)
    mod_link = inst.modules["link"].to_numpy(int)
    improved = True
    while improved and time.perf_counter() < deadline:
        improved = False
        order = np.argsort(-(cost * (best.counts > 0)))
        for m in order:
            if best.counts[m] <= 0 or time.perf_counter() >= deadline:
                continue
            trials = []
            if inst.capacity_model == "E":
                same = np.flatnonzero((mod_link == mod_link[m]) & (cap < cap[m]))
                trials = [_swap(best.counts, m, j) for j in same[np.argsort(-cap[same])][:2]]
                trials.append(_swap(best.counts, m, None))
            else:
                step = 1.0 if inst.capacity_model == "M" else best.counts[m]
                c = best.counts.copy()
                c[m] = max(0.0, c[m] - step)
                trials.append(c)
            for c in trials:
                if _design_cost(inst, c) >= best.cost - 1e-9:
                    continue
                ev = evaluate_design(inst, c, deadline - time.perf_counter(), backend)
                if ev is not None and ev.cost < best.cost - 1e-9:
                    best, improved = ev, True
                    break
    return best


def _swap(counts: np.ndarray, m: int, j: int | None) -> np.ndarray:
    c = counts.copy()
    c[m] = 0.0
    if j is not None:
        c[j] = 1.0
    return c


# ---------------------------------------------------------------------- the solve
def solve_design(inst: DesignInstance, time_limit: float = 60.0, backend: str = "highs", mip_gap: float = 1e-4,
                 cuts: bool = True, heuristic: bool = True, progress: ProgressFn | None = None) -> DesignSolution:
    """Solve a design instance: LP bound, rounding heuristic + improvement, MIP with start.

    Parameters
    ----------
    time_limit
        Seconds for the whole solve (LP, heuristic and MIP share it).
    backend
        A MIP-capable backend (``backbone.solver.backends.available_backends(mip=True)``).
    cuts, heuristic
        Use the cut-set family / the rounding heuristic and MIP start.

    Raises
    ------
    InfeasibleError
        When no design can carry the demand (disconnected pairs in some state, or module limits).
    SolverError
        When the backend fails.
    """
    progress = progress or _no_progress
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    if len(inst.demands) == 0 or float(inst.demands["volume"].sum()) <= 0:
        zero = np.zeros(len(inst.modules))
        return DesignSolution("optimal", _design_cost(inst, zero), _design_cost(inst, zero), zero, None,
                              np.zeros(0, int), backend=backend)
    _check_connected(inst)
    progress(0.02, "building the design program")
    prog = build_design_lp(inst, cuts=cuts)
    stats = prog.lp.stats()
    logger.info("design %s: %s", inst.name, stats)
    progress(0.05, f"LP relaxation ({stats['rows']:,} rows, {stats['cols']:,} columns)")
    lp_sol = solve(prog.lp.relaxed(), backend=backend, time_limit=max(LP_TIME_SHARE * time_limit, 0.5))
    if lp_sol.status == Status.INFEASIBLE:
        raise InfeasibleError(f"design {inst.name}: no capacity installation can carry the demand",
                              ["the capacity that can be installed (pre-installed-only links, module limits, explicit "
                               "options) cannot carry the demand in some network state"])
    if lp_sol.status in (Status.ERROR, Status.UNBOUNDED):
        raise SolverError(f"design LP relaxation failed: {lp_sol.message}")
    lp_bound = lp_sol.objective if lp_sol.status == Status.OPTIMAL else -math.inf
    best: _Evaluated | None = None
    if lp_sol.status == Status.OPTIMAL and inst.capacity_model == "L":
        counts = lp_sol.values("modules").to_numpy()
        best = _Evaluated(counts, lp_sol.objective, lp_sol.x, _flows(prog, inst, lp_sol))  # type: ignore[arg-type]
    elif heuristic and lp_sol.x is not None:
        progress(0.3, "rounding the LP design up to modules")
        need = link_loads(inst, _flows(prog, inst, lp_sol)).max(axis=0) - inst.links["preinstalled"].to_numpy(float)
        rounded = round_up_design(inst, need)
        best = evaluate_design(inst, rounded, deadline - time.perf_counter(), backend)
        if best is not None:
            progress(0.4, f"improving the rounded design (cost {best.cost:,.0f})")
            improve_deadline = min(deadline, time.perf_counter() + IMPROVE_TIME_SHARE * time_limit)
            best = improve_design(inst, best, improve_deadline, backend)
    heuristic_cost = best.cost if best is not None else math.nan
    mip_status, mip_bound = "", -math.inf
    notes: list[str] = []
    remaining = deadline - time.perf_counter()
    if inst.capacity_model != "L" and remaining > 0.2:
        progress(0.5, f"branch and cut ({remaining:.0f} s left, start {heuristic_cost:,.0f})")
        opts: dict[str, Any] = {}
        if best is not None and backend == "highs":
            opts["start"] = best.x
        mip = solve(prog.lp, backend=backend, time_limit=remaining, mip_gap=mip_gap, **opts)
        mip_status = mip.status.value
        if mip.fallback:
            notes.append(f"branch and cut: {mip.fallback}")
        if mip.status == Status.INFEASIBLE:
            raise InfeasibleError(f"design {inst.name}: no integer design can carry the demand")
        if mip.status == Status.ERROR:
            raise SolverError(f"design MIP failed: {mip.message}")
        if mip.bound is not None and math.isfinite(mip.bound):
            mip_bound = mip.bound
        if mip.status.has_solution and mip.x is not None and (best is None or mip.objective < best.cost - 1e-9):
            counts = np.round(mip.values("modules").to_numpy(), 9)
            best = _Evaluated(counts, mip.objective, mip.x, _flows(prog, inst, mip))
    elif inst.capacity_model == "L":
        mip_status = lp_sol.status.value
    bound = max(lp_bound, mip_bound)
    progress(1.0, "design done")
    if best is None:
        return DesignSolution("time_limit", math.nan, bound, None, None, prog.sources, lp_bound, heuristic_cost,
                              mip_status, backend, time.perf_counter() - t0, stats, notes)
    gap = max(0.0, best.cost - bound) / max(abs(best.cost), 1e-9)
    status = "optimal" if gap <= max(mip_gap, 1e-6) + 1e-9 else "feasible"
    return DesignSolution(status, best.cost, min(bound, best.cost), np.where(np.abs(best.counts) < 1e-9, 0.0,
                          best.counts), best.flows, prog.sources, lp_bound, heuristic_cost, mip_status, backend,
                          time.perf_counter() - t0, stats, notes)


def _check_connected(inst: DesignInstance) -> None:
    """Every demand's endpoints must be connected by links that can have capacity, in every state."""
    from scipy.sparse.csgraph import connected_components

    n = len(inst.nodes)
    a, b = inst.links["a"].to_numpy(int), inst.links["b"].to_numpy(int)
    can = inst.links["preinstalled"].to_numpy(float) > 0
    can[np.unique(inst.modules["link"].to_numpy(int))] = True
    s, t = inst.demands["s"].to_numpy(int), inst.demands["t"].to_numpy(int)
    pos = inst.demands["volume"].to_numpy(float) > 0
    reasons: list[str] = []
    for name, failed in zip(inst.state_names, inst.states, strict=True):
        ok = can.copy()
        ok[list(failed)] = False
        g = sp.csr_matrix((np.ones(int(ok.sum())), (a[ok], b[ok])), shape=(n, n))
        directed = inst.link_model == "D"
        _, label = connected_components(g, directed=directed, connection="strong" if directed else "weak")
        cut = pos & (label[s] != label[t])
        if directed and cut.any():
            cut = pos & ~_reachable(g, s, t)
        for d in inst.demands.index[cut][:5]:
            reasons.append(f"state {name}: demand {d} has no path")
    if reasons:
        raise InfeasibleError(f"design {inst.name}: some demands cannot be connected", reasons[:20])


def _reachable(g: sp.csr_matrix, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    from scipy.sparse.csgraph import breadth_first_order

    out = np.zeros(len(s), bool)
    for src in np.unique(s):
        seen = breadth_first_order(g, int(src), directed=True, return_predecessors=False)
        mask = s == src
        out[mask] = np.isin(t[mask], seen)
    return out
