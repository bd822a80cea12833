"""The two TE formulation families, built by constraint family with scipy.sparse.

Both families build one :class:`~backbone.solver.core.problem.LinearProgram` with one variable layout, so
every objective (see :mod:`backbone.solver.te.objectives`) drives either of them by re-solving it in
stages that change only costs, bounds and a few extra rows:

* ``flow`` -- path flows ``f_p`` (path family) or per-source arc flows ``x[s, a]`` (edge family);
* ``path_flow`` -- edge family only: path flows of SLO-constrained demands (see below);
* ``unmet`` -- slack ``s_d``, the demand not carried (``carried_d = h_d - s_d``);
* ``mlu`` -- ``u``, the utilisation every arc stays under: ``load_a <= u * cap_a``. Min-MLU
  minimises ``u``; the other objectives fix ``0 <= u <= ceiling``.

Latency SLOs (hard, both families)
----------------------------------
A path is admissible for demand ``d`` when ``2 * latency(path) <= slo_rtt_ms``. In the path
family the demand's variables are its admissible candidate paths only. The edge family
aggregates commodities by source, and aggregated arc flows cannot tell which destination's
traffic took which route, so a per-demand latency limit cannot be written on them (a flow-weighted
latency budget would only bound the *mean*, letting part of the traffic take a path over the
SLO). We therefore route SLO-constrained demands path-based inside the edge model as well
(their admissible candidate paths, ``path_flow``), and every demand without an SLO as exact
multicommodity flow aggregated by source. The edge optimum is a relaxation of the path model
with the same ``k`` (same paths for SLO demands, every route for the others), hence a lower
bound on it for min-type objectives.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.deadline import Deadline
from backbone.solver.core.problem import INF, Block, LinearProgram, Solution
from backbone.solver.core.sparse import selector
from backbone.solver.te.instance import REASON_SLO, TEInstance

logger = logging.getLogger(__name__)

SPLIT_COLUMNS = ("demand_pos", "path_sites", "path_links", "hops", "latency_ms", "gbps")
"""Columns of the raw path-split frame a formulation extracts."""


@dataclass
class Formulation:
    """A built TE model plus what the objectives and the result need.

    Attributes
    ----------
    kind
        ``"path"`` or ``"edge"``.
    lp
        The program: the variable layout of the module docstring, its row families, zero costs (each
        objective stage sets its own costs, bounds and extra rows on a copy).
    lp_demands
        Positions (into the instance's demands) of the ``unmet`` variables, in order.
    latency_cost
        Per flow block, one-way latency per unit of flow (``lat_p`` or ``lat_a``).
    reason
        Per demand (all of them), the structural reason it cannot be carried, or ``""``.
    extract
        ``extract(solution) -> (arc_load_gbps (2L,), splits frame)``.
    paths_seconds
        Time spent computing candidate paths.
    n_paths
        Candidate path variables in the model.
    routed
        The min-MLU solution solved on this program, once one is (every demand carried): a later max-throughput
        on the same program tests with it which classes fit at the ceiling without an LP.
    """

    kind: str
    lp: LinearProgram
    lp_demands: np.ndarray
    latency_cost: dict[str, np.ndarray]
    reason: np.ndarray
    extract: Callable[[Solution], tuple[np.ndarray, pd.DataFrame]]
    paths_seconds: float = 0.0
    n_paths: int = 0
    routed: Any = None


# ---------------------------------------------------------------------- candidate paths
@dataclass
class DemandPaths:
    """Admissible path variables of a set of demands.

    ``var_demand[v]`` (instance demand position) and ``var_path[v]`` (row of ``paths``) for
    each variable ``v``; variables of one demand are contiguous.
    """

    paths: Any  # solver.paths.PathSet
    var_demand: np.ndarray
    var_path: np.ndarray
    seconds: float


def admissible_paths(inst: TEInstance, demands: np.ndarray, k_paths: int, disjoint: bool,
                     deadline: Deadline | None = None) -> DemandPaths:
    """Candidate paths of ``demands`` filtered by each demand's SLO (``latency <= slo / 2``).

    One candidate-path request per distinct (src, dst) pair, limited to the loosest SLO among
    the pair's demands; each demand then keeps the paths within its own SLO. Vectorized: the
    demand -> path expansion is a ``repeat`` over pair path ranges. ``deadline`` bounds the search
    (:class:`~backbone.solver.core.deadline.TimeLimitReached` when it passes); a custom path provider is
    checked only before and after its call.
    """
    from backbone.solver.paths.candidates import candidate_paths, csr_ranges

    t0 = time.perf_counter()
    demands = np.asarray(demands, np.int64)
    n_sites = inst.n_sites
    pair_key = inst.src[demands] * n_sites + inst.dst[demands]
    uniq, pair_of = np.unique(pair_key, return_inverse=True)
    limit = np.full(len(uniq), -np.inf)
    np.maximum.at(limit, pair_of, inst.slo_one_way_ms[demands])
    if len(uniq) == 0:
        empty = np.zeros(0, np.int64)
        return DemandPaths(None, empty, empty, 0.0)
    pairs = pd.DataFrame({"src": inst.site_ids[uniq // n_sites].astype(str),
                          "dst": inst.site_ids[uniq % n_sites].astype(str)})
    max_latency = np.where(np.isinf(limit), np.nan, limit)
    if inst.path_provider is None:
        ps = candidate_paths(inst.net, pairs, k_paths=k_paths, max_latency_ms=max_latency, disjoint=disjoint,
                             deadline=deadline)
    else:
        if deadline is not None:
            deadline.check("candidate path search")
        ps = inst.path_provider(inst.net, pairs, k_paths=k_paths, max_latency_ms=max_latency, disjoint=disjoint)
    if deadline is not None:
        deadline.check("candidate path search")
    ptr = ps.pair_ptr
    counts = np.diff(ptr)[pair_of]
    var_demand = np.repeat(demands, counts)
    var_path = csr_ranges(ptr[:-1][pair_of], counts).astype(np.int64)
    ok = ps.path_latency_ms[var_path] <= inst.slo_one_way_ms[var_demand] + 1e-9
    return DemandPaths(ps, var_demand[ok], var_path[ok], time.perf_counter() - t0)


def path_strings(paths: Any, idx: np.ndarray, inst: TEInstance) -> tuple[list[str], list[str]]:
    """``"A>B>C"`` site sequences and ``"l1;l2"`` link sequences of paths ``idx``.

    Links are put in travel order from the arcs' tails (the position of each arc's tail in the
    path's site sequence, vectorized), so the strings do not depend on the order a path set
    stores arcs in. Only the final string joins run per path.
    """
    uniq, inv = np.unique(idx, return_inverse=True)
    site_flat, site_ptr, arc_flat, arc_ptr = _flat_sequences(paths, uniq, inst)
    n_u, n_sites = len(uniq), inst.n_sites
    path_of_site = np.repeat(np.arange(n_u), np.diff(site_ptr))
    pos_in = np.arange(len(site_flat)) - site_ptr[path_of_site]
    key = path_of_site * n_sites + site_flat
    order = np.argsort(key, kind="stable")
    path_of_arc = np.repeat(np.arange(n_u), np.diff(arc_ptr))
    tail_pos = pos_in[order[np.searchsorted(key[order], path_of_arc * n_sites + inst.arc_tail[arc_flat])]]
    arcs_sorted = arc_flat[np.lexsort((tail_pos, path_of_arc))]
    site_names = inst.site_ids.astype(str).to_numpy()[site_flat].tolist()
    link_names = inst.link_ids.astype(str).to_numpy()[arcs_sorted % inst.n_links].tolist()
    sp_, ap_ = site_ptr.tolist(), arc_ptr.tolist()
    sites = np.asarray([">".join(site_names[sp_[j]:sp_[j + 1]]) for j in range(n_u)], dtype=object)
    links = np.asarray([";".join(link_names[ap_[j]:ap_[j + 1]]) for j in range(n_u)], dtype=object)
    return list(sites[inv]), list(links[inv])


def _flat_sequences(paths: Any, idx: np.ndarray, inst: TEInstance) -> tuple[np.ndarray, ...]:
    """Flat site / arc positions of paths ``idx`` with their offsets."""
    if hasattr(paths, "_take") and hasattr(paths, "_site_seq"):
        sub = paths._take(idx)  # the path set's own vectorized gather
        return (np.asarray(sub._site_seq, np.int64), np.asarray(sub._site_ptr, np.int64),
                np.asarray(sub._arc_seq, np.int64), np.asarray(sub._arc_ptr, np.int64))
    site_pos = pd.Series(np.arange(inst.n_sites), index=inst.site_ids)
    seqs = [site_pos.loc[paths.path_sites(int(i))].to_numpy() for i in idx]
    arcs = [np.asarray(paths.path_arcs(int(i)), np.int64) for i in idx]
    return (np.concatenate(seqs) if seqs else np.zeros(0, np.int64),
            np.concatenate([[0], np.cumsum([len(x) for x in seqs])]).astype(np.int64),
            np.concatenate(arcs) if arcs else np.zeros(0, np.int64),
            np.concatenate([[0], np.cumsum([len(x) for x in arcs])]).astype(np.int64))


# ---------------------------------------------------------------------- shared families
def demand_rows(lp: LinearProgram, var_lp_demand: np.ndarray, unmet_cols: np.ndarray, h: np.ndarray,
                block: str) -> Block:
    """Demand family: ``sum_{p in P(d)} f_p + s_d = h_d`` for each demand routed by paths.

    ``var_lp_demand[v]`` is the row (0..n_rows-1) of variable ``v`` of flow block ``block``; ``unmet_cols``
    the column of each row's demand in the ``unmet`` block.
    """
    n = len(unmet_cols)
    return lp.add_constraints("demand", {block: selector(var_lp_demand, n, len(var_lp_demand)),
                                         "unmet": selector(np.arange(n), n, lp.variables["unmet"].size, unmet_cols)},
                              lower=h, upper=h, index=pd.RangeIndex(n))


def capacity_rows(lp: LinearProgram, inst: TEInstance, loads: dict[str, sp.csr_matrix],
                  every_arc: bool = False) -> Block:
    """Capacity family: ``load_a(x) - cap_a * u <= 0`` for every arc some flow can use.

    ``loads[b]`` is the ``2L x |b|`` arc-load map of flow block ``b`` (e.g. ``P^T`` for paths:
    ``sum_p P[p,a] f_p``; ``[I I ... I]`` over sources for edge flows: ``sum_s x[s,a]``). ``every_arc``
    gives every arc its row (in arc order), used or not: a program whose columns grow later.
    """
    used = np.full(inst.n_arcs, every_arc)
    for m in loads.values():
        used |= np.diff(m.tocsr().indptr) > 0
    arcs = np.flatnonzero(used)
    blocks = {b: m.tocsr() if used.all() else m.tocsr()[arcs] for b, m in loads.items()}  # no copy when all used
    blocks["mlu"] = sp.csr_matrix(-inst.arc_capacity_gbps[arcs].reshape(-1, 1))
    return lp.add_constraints("capacity", blocks, lower=-INF, upper=0.0, index=pd.Index(arcs, name="arc"))


def te_variables(lp: LinearProgram, inst: TEInstance, lp_demands: np.ndarray) -> None:
    """The ``unmet`` (``0 <= s_d <= h_d``) and ``mlu`` (``u >= 0``) blocks every TE program shares."""
    lp.add_variables("unmet", pd.Index(inst.demand_ids[lp_demands], name="demand"), lower=0.0,
                     upper=inst.demand_gbps[lp_demands])
    lp.add_variables("mlu", pd.Index(["mlu"]), lower=0.0, upper=INF)


def check_between_families(deadline: Deadline | None, what: str) -> None:
    """Between two constraint families: :class:`~backbone.solver.core.deadline.TimeLimitReached` naming ``what`` when
    ``deadline`` has passed (a model whose families take long to build stops there, not after the last one)."""
    if deadline is not None:
        deadline.check(what)


# ---------------------------------------------------------------------- path family
def build_path_formulation(inst: TEInstance, k_paths: int = 4, disjoint: bool = False,
                           deadline: Deadline | None = None) -> Formulation:
    """Path-based TE over the ``k_paths`` lowest-latency admissible candidate paths per demand.

    Families::

        demand:    sum_{p in P(d)} f_p + s_d = h_d          (d with >= 1 admissible path)
        capacity:  sum_p P[p,a] f_p - cap_a u <= 0          (arcs on some candidate path)
        bounds:    f >= 0, 0 <= s_d <= h_d, u >= 0
    """
    reason = inst.reason.copy()
    cand = np.flatnonzero(inst.routable)
    dp = admissible_paths(inst, cand, k_paths, disjoint, deadline)
    has = np.zeros(inst.n_demands, bool)
    has[dp.var_demand] = True
    reason[cand[~has[cand]]] = REASON_SLO
    lp_demands = cand[has[cand]]
    pos = np.full(inst.n_demands, -1)
    pos[lp_demands] = np.arange(len(lp_demands))
    var_row = pos[dp.var_demand]
    n_vars = len(var_row)
    lp = LinearProgram("te-path")
    lp.add_variables("flow", pd.RangeIndex(n_vars, name="path_var"), lower=0.0, upper=INF)
    te_variables(lp, inst, lp_demands)
    h = inst.demand_gbps[lp_demands]
    demand_rows(lp, var_row, np.arange(len(lp_demands)), h, "flow")
    check_between_families(deadline, "TE model building (demand rows)")
    arc_map = dp.paths.arc_incidence[dp.var_path].T.tocsr() if n_vars else sp.csr_matrix((inst.n_arcs, 0))
    capacity_rows(lp, inst, {"flow": arc_map})
    check_between_families(deadline, "TE model building (capacity rows)")
    lat = dp.paths.path_latency_ms[dp.var_path] if n_vars else np.zeros(0)

    def extract(sol: Solution) -> tuple[np.ndarray, pd.DataFrame]:
        f = _clean(sol.values("flow").to_numpy(), _tol(inst))  # loads and splits from the same flows
        return arc_map @ f, _path_splits(dp, f, dp.var_demand, dp.var_path, _tol(inst), inst)

    return Formulation("path", lp, lp_demands, {"flow": lat}, reason, extract, dp.seconds, n_vars)


def block_values(sol: Solution, block: str, size: int) -> np.ndarray:
    """Values of a variable block, zeros when the block was left out (fixed at zero)."""
    if sol.lp is not None and block not in sol.lp.variables:
        return np.zeros(size)
    return sol.values(block).to_numpy()


def _clean(f: np.ndarray, tol: float) -> np.ndarray:
    """Flows with solver noise (below ``tol``, or negative) set to zero."""
    return np.where(f > tol, f, 0.0)


def _tol(inst: TEInstance) -> float:
    return 1e-7 * max(1.0, float(inst.demand_gbps.max(initial=0.0)))


def _path_splits(dp: DemandPaths, f: np.ndarray, var_demand: np.ndarray, var_path: np.ndarray,
                 tol: float, inst: TEInstance) -> pd.DataFrame:
    used = np.flatnonzero(f > tol)
    if len(used) == 0:
        return pd.DataFrame({c: [] for c in SPLIT_COLUMNS})
    p = var_path[used]
    sites, links = path_strings(dp.paths, p, inst)
    return pd.DataFrame({"demand_pos": var_demand[used], "path_sites": sites, "path_links": links,
                         "hops": dp.paths.path_hops[p], "latency_ms": dp.paths.path_latency_ms[p],  # type: ignore[attr-defined]
                         "gbps": f[used]})


# ---------------------------------------------------------------------- edge family
def build_edge_formulation(inst: TEInstance, k_paths: int = 4, disjoint: bool = False,
                           deadline: Deadline | None = None) -> Formulation:
    """Edge-based multicommodity flow, commodities aggregated by source (SLO-bound demands over their
    ``k_paths`` candidate paths;

    For each source ``s`` (a site originating demand without an SLO) and node ``v``::

        conservation:  (M x_s)_v + sum_{d: src=s} s_d [v = s] - sum_{d: src=s, dst=v} s_d = b_s(v)
                       with M the node-arc incidence (+1 tail, -1 head) and
                       b_s(s) = sum_{d: src=s} h_d,  b_s(v) = -sum_{d: src=s, dst=v} h_d
        (SLO demands)  sum_{p in P(d)} f_p + s_d = h_d   over admissible candidate paths
        capacity:      sum_s x[s,a] + sum_p P[p,a] f_p - cap_a u <= 0
        bounds:        x, f >= 0, 0 <= s_d <= h_d, u >= 0

    The conservation family is ``kron(I_S, M)``; the capacity map of ``x`` is
    ``kron(1_S^T, I_2L)``.
    """
    reason = inst.reason.copy()
    routable = inst.routable
    slo_d = np.flatnonzero(routable & inst.has_slo)
    agg_d = np.flatnonzero(routable & ~inst.has_slo)
    dp = admissible_paths(inst, slo_d, k_paths, disjoint, deadline)
    has = np.zeros(inst.n_demands, bool)
    has[dp.var_demand] = True
    reason[slo_d[~has[slo_d]]] = REASON_SLO
    slo_lp = slo_d[has[slo_d]]
    lp_demands = np.concatenate([agg_d, slo_lp])
    n_lp = len(lp_demands)
    n_agg = len(agg_d)
    sources, src_of = np.unique(inst.src[agg_d], return_inverse=True)
    n_src, n_arcs = len(sources), inst.n_arcs

    lp = LinearProgram("te-edge")
    lp.add_variables("flow", pd.MultiIndex.from_product([inst.site_ids[sources], np.arange(n_arcs)],
                                                        names=["source", "arc"]), lower=0.0, upper=INF)
    lp.add_variables("path_flow", pd.RangeIndex(len(dp.var_demand), name="path_var"), lower=0.0, upper=INF)
    te_variables(lp, inst, lp_demands)

    h_agg = inst.demand_gbps[agg_d]
    conservation_rows(lp, inst, sources, src_of, agg_d)
    check_between_families(deadline, "TE model building (conservation rows)")
    # SLO demands over paths
    pos = np.full(inst.n_demands, -1)
    pos[slo_lp] = np.arange(len(slo_lp))
    if len(slo_lp):
        demand_rows(lp, pos[dp.var_demand], n_agg + np.arange(len(slo_lp)), inst.demand_gbps[slo_lp], "path_flow")
    x_map = sp.kron(sp.csr_matrix(np.ones((1, n_src))), sp.identity(n_arcs, format="csr"), format="csr")
    p_map = (dp.paths.arc_incidence[dp.var_path].T.tocsr() if len(dp.var_path)  # type: ignore[attr-defined]
             else sp.csr_matrix((n_arcs, 0)))
    capacity_rows(lp, inst, {"flow": x_map, "path_flow": p_map})
    check_between_families(deadline, "TE model building (capacity rows)")
    lat_p = dp.paths.path_latency_ms[dp.var_path] if len(dp.var_path) else np.zeros(0)  # type: ignore[attr-defined]
    latency = {"flow": np.tile(inst.arc_latency_ms, n_src), "path_flow": lat_p}
    tol = _tol(inst)

    def extract(sol: Solution) -> tuple[np.ndarray, pd.DataFrame]:
        x = sol.values("flow").to_numpy()
        f = _clean(sol.values("path_flow").to_numpy(), tol)
        s = block_values(sol, "unmet", n_lp)
        carried = np.clip(h_agg - s[:n_agg], 0.0, None)
        agg_splits, agg_load = decompose_source_flows(inst, sources, x.reshape(n_src, n_arcs), agg_d, src_of,
                                                      carried, tol)
        parts = [agg_splits]
        if len(dp.var_demand):
            parts.append(_path_splits(dp, f, dp.var_demand, dp.var_path, tol, inst))
        splits = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) \
            else parts[0]
        # loads of the decomposed paths: circulations in the LP's arc flows carry no traffic
        return agg_load + p_map @ f, splits

    return Formulation("edge", lp, lp_demands, latency, reason, extract, dp.seconds, len(dp.var_demand))


def conservation_rows(lp: LinearProgram, inst: TEInstance, sources: np.ndarray, src_of: np.ndarray,
                      agg_d: np.ndarray) -> Block:
    """Conservation family of the edge formulation, per source ``s`` and node ``v``::

        (M x_s)_v + sum_{d: src=s} s_d [v = s] - sum_{d: src=s, dst=v} s_d = b_s(v)

    over the ``flow`` block ``kron(I_S, M)`` (``M`` the node-arc incidence) and the first ``len(agg_d)``
    columns of ``unmet`` (demand ``agg_d[i]`` from source ``sources[src_of[i]]``).
    """
    n_src, n_nodes, n_agg = len(sources), inst.n_sites, len(agg_d)
    cons_x = sp.kron(sp.identity(n_src, format="csr"), inst.node_arc_incidence(), format="csr")
    h_agg = inst.demand_gbps[agg_d]
    row_src = src_of * n_nodes + inst.src[agg_d]
    row_dst = src_of * n_nodes + inst.dst[agg_d]
    b = np.zeros(n_src * n_nodes)
    np.add.at(b, row_src, h_agg)
    np.add.at(b, row_dst, -h_agg)
    slack = selector(np.concatenate([row_src, row_dst]), n_src * n_nodes, lp.variables["unmet"].size,
                     cols=np.concatenate([np.arange(n_agg)] * 2), values=np.r_[np.ones(n_agg), -np.ones(n_agg)])
    return lp.add_constraints("conservation", {"flow": cons_x, "unmet": slack}, lower=b, upper=b,
                              index=pd.MultiIndex.from_product([inst.site_ids[sources], inst.site_ids],
                                                               names=["source", "site"]))


def decompose_source_flows(inst: TEInstance, sources: np.ndarray, x: np.ndarray, agg_d: np.ndarray,
                           src_of: np.ndarray, carried: np.ndarray, tol: float) -> tuple[pd.DataFrame, np.ndarray]:
    """Split per-source arc flows into paths per demand (classic flow decomposition); also
    return the ``(2L,)`` arc loads of those paths.

    For each source, walk arcs with remaining flow from the source until reaching a node with
    remaining delivered demand; cycles met on the way are cancelled (they carry no demand).
    Pair paths are shared among that pair's demands in proportion to their carried traffic.
    This is result extraction (one walk per path), not model building.
    """
    n_nodes = inst.n_sites
    names, link_ids = inst.site_ids.astype(str), inst.link_ids.astype(str)
    n_links = inst.n_links
    pair_key = src_of * n_nodes + inst.dst[agg_d]
    need_all = np.zeros(len(sources) * n_nodes)
    np.add.at(need_all, pair_key, carried)
    out_order = np.argsort(inst.arc_tail, kind="stable")
    out_ptr = np.searchsorted(inst.arc_tail[out_order], np.arange(n_nodes + 1))
    rows: list[tuple[int, int, list[int], float]] = []  # (source idx, dst node, arcs, gbps)
    for k, s in enumerate(sources):
        flow = np.where(x[k] > tol, x[k], 0.0)
        need = need_all[k * n_nodes:(k + 1) * n_nodes].copy()
        nxt_ptr = out_ptr[:-1].copy()  # next candidate out-arc per node
        guard = 0
        while need.sum() > tol * max(1, int(np.count_nonzero(need))) and guard < 10 * inst.n_arcs + 100:
            guard += 1
            node, nodes, seen = int(s), [int(s)], {int(s): 0}
            arcs: list[int] = []
            stuck = False
            while node == s or need[node] <= tol:
                a = -1
                while nxt_ptr[node] < out_ptr[node + 1]:
                    cand = out_order[nxt_ptr[node]]
                    if flow[cand] > tol:
                        a = int(cand)
                        break
                    nxt_ptr[node] += 1
                if a < 0:
                    stuck = True
                    break
                head = int(inst.arc_head[a])
                if head in seen:  # cancel the cycle
                    i = seen[head]
                    cyc = [*arcs[i:], a]
                    flow[cyc] -= flow[cyc].min()
                    flow[np.abs(flow) <= tol] = 0.0
                    for nd in nodes[i + 1:]:
                        del seen[nd]
                    nodes, arcs, node = nodes[:i + 1], arcs[:i], head
                    continue
                arcs.append(a)
                nodes.append(head)
                seen[head] = len(nodes) - 1
                node = head
            if stuck and arcs:  # a dead end (solver noise breaks conservation slightly): drop that trickle
                flow[arcs] -= flow[arcs].min()
                flow[flow <= tol] = 0.0
                continue
            if stuck or not arcs:
                logger.debug("flow decomposition: %.3g Gbps left undecomposed at source %s", need.sum(), s)
                break
            amount = min(float(need[node]), float(flow[arcs].min()))
            flow[arcs] -= amount
            flow[flow <= tol] = 0.0
            need[node] -= amount
            rows.append((k, node, arcs, amount))
    load = np.zeros(inst.n_arcs)
    if not rows:
        return pd.DataFrame({c: [] for c in SPLIT_COLUMNS}), load
    arcs_flat = np.concatenate([np.asarray(r[2], np.int64) for r in rows])
    np.add.at(load, arcs_flat, np.repeat([r[3] for r in rows], [len(r[2]) for r in rows]))
    # share each pair path among that pair's demands by carried traffic
    pk = np.array([k * n_nodes + d for k, d, _, _ in rows])
    amounts = np.array([r[3] for r in rows])
    pair_total = np.zeros(len(sources) * n_nodes)
    np.add.at(pair_total, pair_key, carried)
    order = np.argsort(pair_key, kind="stable")
    ptr = np.searchsorted(pair_key[order], pk, side="left")
    end = np.searchsorted(pair_key[order], pk, side="right")
    counts = end - ptr
    from backbone.solver.paths.candidates import csr_ranges

    d_idx = order[csr_ranges(ptr, counts)]
    r_idx = np.repeat(np.arange(len(rows)), counts)
    share = carried[d_idx] / np.maximum(pair_total[pk[r_idx]], 1e-300)
    lat = np.array([inst.arc_latency_ms[r[2]].sum() for r in rows])
    hops = np.array([len(r[2]) for r in rows])
    sites = [">".join(names[[int(sources[r[0]])] + [int(inst.arc_head[a]) for a in r[2]]]) for r in rows]
    links = [";".join(link_ids[np.asarray(r[2]) % n_links]) for r in rows]
    frame = pd.DataFrame({"demand_pos": agg_d[d_idx], "path_sites": np.asarray(sites, object)[r_idx],
                          "path_links": np.asarray(links, object)[r_idx], "hops": hops[r_idx],
                          "latency_ms": lat[r_idx], "gbps": amounts[r_idx] * share})
    return frame[frame["gbps"] > 0].reset_index(drop=True), load


def build_formulation(net_or_inst: Network | TEInstance, formulation: str, k_paths: int = 4,
                      disjoint: bool = False, deadline: Deadline | None = None) -> Formulation:
    """Build the ``"path"`` or ``"edge"`` formulation over ``k_paths`` candidate paths per demand.

    ``deadline`` is checked during the path search and after the families are built
    (:class:`~backbone.solver.core.deadline.TimeLimitReached` when it has passed).
    """
    from backbone.solver.te.instance import build_instance
    inst = net_or_inst if isinstance(net_or_inst, TEInstance) else build_instance(net_or_inst)
    if formulation == "path":
        form = build_path_formulation(inst, k_paths, disjoint, deadline)
    elif formulation == "edge":
        form = build_edge_formulation(inst, k_paths, disjoint, deadline)
    else:
        raise ValueError(f"unknown formulation {formulation!r}")
    if deadline is not None:
        deadline.check("TE model building")
    return form
