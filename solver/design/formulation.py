"""The design program: one sparse block of rows per constraint family, and its assembly.

Each family is a function ``family_rows(lp, inst, ...) -> Block`` that adds its rows to the program with one
:meth:`~backbone.solver.core.problem.LinearProgram.add_constraints` call (a sparse matrix per variable block).

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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.solver.core.problem import INF, Block, LinearProgram, Solution
from backbone.solver.core.sparse import incidence, selector
from backbone.solver.design.instance import FEAS_TOL, DesignInstance

MAX_CUT_DIVISORS = 3
"""Module sizes used as MIR divisors per cut (smallest, largest, most cost-efficient)."""


def _capacity_pattern(inst: DesignInstance) -> tuple[sp.csr_matrix, np.ndarray]:
    """(G, row_link): capacity rows over arcs -- U: one row per link summing both arcs;
    B: one row per arc; D: one row per (forward) arc."""
    _, _, arc_link = inst.arcs()
    n_arcs = len(arc_link)
    if inst.link_model == "U":
        g = selector(arc_link, inst.n_links, n_arcs)
        return g, np.arange(inst.n_links)
    return sp.identity(n_arcs, format="csr"), arc_link


def _link_flow(inst: DesignInstance) -> sp.csr_matrix:
    """H (L x arcs): flow on each link, both directions counted (routing cost basis)."""
    _, _, arc_link = inst.arcs()
    n_arcs = len(arc_link)
    return selector(arc_link, inst.n_links, n_arcs)


def _module_capacity(inst: DesignInstance, row_link: np.ndarray) -> sp.csr_matrix:
    """(rows x modules) capacity each module adds to each capacity row's link."""
    mod_link = inst.modules["link"].to_numpy(int)
    lm = selector(mod_link, inst.n_links, len(mod_link), values=inst.modules["capacity"].to_numpy(float))
    pick = selector(np.arange(len(row_link)), len(row_link), inst.n_links, cols=row_link)
    return (pick @ lm).tocsr()


def conservation_rows(lp: LinearProgram, inst: DesignInstance, n_sources: int, supply: np.ndarray) -> Block:
    """``Inc @ f[s, k] = b[k]`` for every state and source: ``kron(I_SK, Inc)`` over ``flow``, tiled ``b``."""
    tail, head, _ = inst.arcs()
    inc = incidence(len(inst.nodes), tail, head)
    n_blocks = len(inst.states) * n_sources
    rhs = np.tile(supply.ravel(), len(inst.states))
    return lp.add_constraints("conservation", {"flow": sp.kron(sp.identity(n_blocks, format="csr"), inc, format="csr")},
                              lower=rhs, upper=rhs)


def capacity_rows(lp: LinearProgram, inst: DesignInstance, n_sources: int) -> Block:
    """``sum_k G @ f[s, k] - C @ y <= pre`` per state, over ``flow`` and ``modules``."""
    g, row_link = _capacity_pattern(inst)
    per_state = sp.kron(np.ones((1, n_sources)), g, format="csr")
    flow = sp.kron(sp.identity(len(inst.states), format="csr"), per_state, format="csr")
    mods = -sp.vstack([_module_capacity(inst, row_link)] * len(inst.states), format="csr")
    pre = inst.links["preinstalled"].to_numpy(float)[row_link]
    return lp.add_constraints("capacity", {"flow": flow, "modules": mods}, upper=np.tile(pre, len(inst.states)))


def routing_rows(lp: LinearProgram, inst: DesignInstance, n_sources: int) -> Block:
    """``sum_k H @ f[s, k] - r <= 0`` per state, over ``flow`` and ``routing`` (survivable, routing cost)."""
    per_state = sp.kron(np.ones((1, n_sources)), _link_flow(inst), format="csr")
    flow = sp.kron(sp.identity(len(inst.states), format="csr"), per_state, format="csr")
    r = -sp.vstack([sp.identity(inst.n_links, format="csr")] * len(inst.states), format="csr")
    return lp.add_constraints("routing_max", {"flow": flow, "routing": r}, upper=0.0)


def choice_rows(lp: LinearProgram, inst: DesignInstance) -> Block:
    """``sum_{m in l} y[m] <= 1`` (explicit capacities): the link-module incidence over ``modules``."""
    mod_link = inst.modules["link"].to_numpy(int)
    return lp.add_constraints("choice", {"modules": selector(mod_link, inst.n_links, len(mod_link))}, upper=1.0,
                              index=inst.links.index)


def setup_rows(lp: LinearProgram, inst: DesignInstance) -> Block:
    """``y[m] - ub[m] z[l(m)] <= 0`` (fixed charge), over ``modules`` and ``setup``."""
    n = len(inst.modules)
    mod_link = inst.modules["link"].to_numpy(int)
    z = selector(np.arange(n), n, inst.n_links, cols=mod_link, values=-inst.module_upper())
    return lp.add_constraints("setup", {"modules": sp.identity(n, format="csr"), "setup": z}, upper=0.0)


def cut_crossings(inst: DesignInstance) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """Cuts ``S`` (every node, every adjacent node pair): (out-crossing C x L, in-crossing C x L,
    membership C x N). A link crosses out of ``S`` when ``a in S, b not in S``."""
    n, n_links = len(inst.nodes), inst.n_links
    a, b = inst.links["a"].to_numpy(int), inst.links["b"].to_numpy(int)
    pairs = np.unique(np.sort(np.c_[a, b], axis=1), axis=0)
    rows = np.r_[np.arange(n), np.repeat(np.arange(len(pairs)) + n, 2)]
    cols = np.r_[np.arange(n), pairs.ravel()]
    member = selector(rows, n + len(pairs), n, cols=cols)
    ina = member[:, a].toarray() > 0
    inb = member[:, b].toarray() > 0
    out_cross = sp.csr_matrix((ina & ~inb).astype(float))
    in_cross = sp.csr_matrix((~ina & inb).astype(float))
    del n_links
    return out_cross, in_cross, member


def cutset_rows(lp: LinearProgram, inst: DesignInstance) -> Block | None:
    """Cut-set family: ``cut_matrix @ y >= cut_rhs`` over ``modules`` (:func:`mir_cuts`); None when empty."""
    mat, rhs = mir_cuts(inst)
    if not mat.shape[0]:
        return None
    return lp.add_constraints("cutset", {"modules": mat}, lower=rhs)


def mir_cuts(inst: DesignInstance) -> tuple[sp.csr_matrix, np.ndarray]:
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
    conservation_rows(lp, inst, n_k, supply)
    capacity_rows(lp, inst, n_k)
    if survivable_rc:
        routing_rows(lp, inst, n_k)
    if inst.capacity_model == "E" and n_mod:
        choice_rows(lp, inst)
    if inst.fixed_charge and n_mod:
        setup_rows(lp, inst)
    if cuts and fixed_counts is None:
        cutset_rows(lp, inst)
    return DesignProgram(lp, src, n_arcs)


# ---------------------------------------------------------------------- reading the program back
def program_flows(prog: DesignProgram, inst: DesignInstance, sol: Solution) -> np.ndarray:
    """The ``(states, sources, arcs)`` flow of a solution of ``prog``."""
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
