"""The placement MIP, built as sparse blocks by constraint family.

Each family is a function ``family_rows(lp, inp, ...) -> Block`` that adds its rows to the program with
one :meth:`~backbone.solver.core.problem.LinearProgram.add_constraints` call (a sparse matrix per variable block).

Notation: ``t`` period, ``k`` demand unit (metro, class), ``s`` candidate site, ``r`` route (an
admissible (k, s) pair and one of its SLO-meeting paths), ``l`` link / ``a`` arc, ``e`` existing
demand path, ``j`` training job, ``f`` failed site (N+1). ``B`` GPUs per block, ``g`` Gbps per GPU.

Variables
---------
* ``serve[t, r] >= 0``: GPUs serving unit k(r) from site s(r) over route r in period t.
* ``unserved[t, k] >= 0``: demand not served (penalised: explains infeasibility instead of failing).
* ``blocks[s]`` integer in ``[0, max_blocks_s]``; ``build[s]`` binary; ``power[s]`` MW built.
* ``existing[e] >= 0``, ``existing_unrouted[d] >= 0``: the scenario's demands, routed jointly.
* ``train[o]`` binary per training job placement option (one site, or an even split over two to four), ``train_unplaced[j]`` in [0, 1];
  ``read[q] >= 0`` Gbps of remote dataset reads, ``replica[d, s]`` binary new dataset replicas
  (:mod:`~backbone.solver.placement.workloads`).
* ``backup[f, k, s] >= 0``, ``backup_unserved[f, k] >= 0`` (N+1 only).

Cost (USD) = sum_s cost_per_block_s blocks_s + capex_per_mw_s power_s + fixed build_s, where
cost_per_block = B (capex per GPU + opex per GPU over the horizon).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.solver.core.problem import Block, LinearProgram
from backbone.solver.core.sparse import selector
from backbone.solver.placement.inputs import PlacementInputs
from backbone.solver.placement.splits import option_labels

EXISTING_PENALTY_FACTOR = 1000.0
"""Unrouted scenario demand (per Gbps) costs this many times the unserved-GPU weight."""

N1_PENALTY_FRACTION = 0.5
"""Demand left without backup after a site loss costs this fraction of unserved demand, spread
over the failure scenarios (a GPU may lack backup in several): serving demand that cannot be
protected (e.g. a metro with one site in reach) always beats not serving it."""

READ_COST_USD_PER_GBPS = 1e-3
"""Objective weight of a Gbps of remote dataset read: keeps each read at its formula's rate (negligible next to
any GPU's cost); the reported reads come from the formula, not the variable."""

ELASTIC_FRACTION = 0.01
"""Diagnostic re-solve: one GPU (or its MW, or its Gbps over ~10 links) beyond a limit costs this
fraction of an unserved GPU, so demand is served by stretching limits whenever it can be."""


@dataclass
class PlacementModel:
    """The built program plus the weights used (for the report)."""

    lp: LinearProgram
    inputs: PlacementInputs
    cost: np.ndarray  # USD coefficient of each column (capex + opex), for the budget and the report
    unserved_weight: float


def build_placement(inp: PlacementInputs, elastic: bool = False,
                    fixed: dict[str, np.ndarray] | None = None) -> PlacementModel:
    """Assemble the placement program from its families.

    Parameters
    ----------
    inp
        The placement inputs.
    elastic
        Diagnostic mode: add priced excess columns ``extra_gpus[s]``, ``extra_mw[s]`` and
        ``extra_gbps[arc]`` that relax GPU maxima, power caps and link capacities at a cost
        below the unserved penalty, so a re-solve shows which limits stand in the way.
    fixed
        Values for the integer blocks ``blocks`` and ``train`` (the program then is an LP in
        the remaining variables): used to complete a rounded LP relaxation into a plan.

    Returns
    -------
    PlacementModel
    """
    opts = inp.opts
    T, R = inp.n_periods, len(inp.routes)
    B = float(opts.block)
    min_cost = opts.objective == "min-cost"
    # weight of one unserved GPU (averaged over periods) in the objective
    w_unserved = opts.unserved_penalty_usd_per_gpu if min_cost else 1.0
    eps_cost = 0.0 if min_cost else 1e-3 / max(float(opts.budget_usd or 0.0), 1.0)
    lp = LinearProgram("placement")
    sites = inp.sites

    route_rtt = inp.routes["rtt_ms"].to_numpy()
    lat_w = opts.latency_weight_usd_per_gpu_ms if min_cost else 0.0
    period_idx = pd.MultiIndex.from_product([range(T), range(R)], names=["period", "route"])
    # a route whose SLO some single failure breaks (slo_failures) costs extra: robust sites serve first
    fragile = ~inp.pairs["robust"].to_numpy(bool)[inp.routes["pair"].to_numpy()] if "robust" in inp.pairs else False
    frag_w = opts.slo_failures_penalty_usd_per_gpu if min_cost and opts.slo_failures != "none" else 0.0
    lp.add_variables("serve", period_idx, cost=np.tile((lat_w * route_rtt + frag_w * fragile) / T, T))
    # a unit with no admissible site is unserved whatever the plan: no penalty, so the objective
    # (and the MIP gap) measures only what the plan can change
    servable = np.bincount(inp.pairs["unit"].to_numpy(), minlength=len(inp.units)) > 0
    lp.add_variables("unserved", pd.MultiIndex.from_product([range(T), inp.units.index], names=["period", "unit"]),
                     cost=np.tile(servable * (w_unserved / T), T))
    block_cost = sites["cost_per_block_usd"].to_numpy()
    mw_cost = sites["capex_per_mw_usd"].to_numpy(dtype=float)
    fixed_cost = np.full(len(sites), opts.site_fixed_cost_usd)
    max_blocks = sites["max_blocks"].to_numpy(dtype=float)
    fixed = fixed or {}
    blocks_lo = fixed.get("blocks", 0.0)
    blocks_hi = fixed.get("blocks", max_blocks)
    build_lo = (fixed["blocks"] > 0).astype(float) if "blocks" in fixed else 0.0
    lp.add_variables("blocks", sites.index, cost=block_cost * (1.0 if min_cost else eps_cost), lower=blocks_lo,
                     upper=blocks_hi, integer=True)
    lp.add_variables("build", sites.index, cost=fixed_cost * (1.0 if min_cost else eps_cost), lower=build_lo,
                     upper=(max_blocks > 0).astype(float) if "blocks" not in fixed else build_lo, integer=True)
    power_room = np.maximum(sites["power_cap_mw"].to_numpy() - sites["power_base_mw"].to_numpy(), 0.0)
    lp.add_variables("power", sites.index, cost=mw_cost * (1.0 if min_cost else eps_cost), upper=power_room)
    E = len(inp.existing_paths)
    D = len(inp.existing)
    lp.add_variables("existing", E)
    lp.add_variables("existing_unrouted", inp.existing.index,
                     cost=EXISTING_PENALTY_FACTOR * w_unserved * max(opts.gbps_per_gpu, 1e-3))
    work_variables(lp, inp, fixed, w_unserved, 1.0 if min_cost else eps_cost)

    if elastic:
        unit = ELASTIC_FRACTION * w_unserved
        lp.add_variables("extra_gpus", sites.index, cost=unit)
        lp.add_variables("extra_mw", sites.index, cost=unit * 1000.0 / opts.kw_per_gpu)
    demand_rows(lp, inp)
    site_gpu_rows(lp, inp, B, elastic)
    if not elastic:  # the elastic re-solve's extra GPUs break the integer step the cut rounds to
        gpu_rounding_rows(lp, inp, B)
    power_rows(lp, inp, B, elastic)
    build_max_rows(lp, inp)
    build_min_rows(lp, inp)
    link_rows(lp, inp, ELASTIC_FRACTION * w_unserved / max(opts.gbps_per_gpu, 1e-3) / 10.0 if elastic else None)
    existing_rows(lp, inp, D)
    training_rows(lp, inp)
    read_rows(lp, inp)
    storage_rows(lp, inp)
    if opts.n_plus_one:
        f_idx, p_idx = n1_variables(lp, inp, w_unserved)
        n1_demand_rows(lp, inp, f_idx, p_idx)
        n1_site_gpu_rows(lp, inp, B, f_idx, p_idx, elastic)

    cost = np.zeros(lp.n_cols)
    cost[lp.variables["blocks"].slice] = block_cost
    cost[lp.variables["power"].slice] = mw_cost
    cost[lp.variables["build"].slice] = fixed_cost
    cost[lp.variables["replica"].slice] = inp.work.replicas["cost_usd"].to_numpy(dtype=float)
    if not min_cost:
        lp.add_constraints("budget", sp.csr_matrix(cost[None, :]), upper=float(opts.budget_usd or 0.0),
                           index=pd.Index(["budget"]))
    return PlacementModel(lp, inp, cost, w_unserved)


def demand_rows(lp: LinearProgram, inp: PlacementInputs) -> Block:
    """Every unit's demand is served or declared unserved, per period.

    ``sum_{r in k} serve[t, r] + unserved[t, k] = demand_k x factor[k, t]``.
    """
    T, K, R = inp.n_periods, len(inp.units), len(inp.routes)
    a_kr = selector(inp.routes["unit"].to_numpy(), K, R)
    rhs = (inp.units["demand_gpus"].to_numpy()[:, None] * inp.factors).T.ravel()  # period-major
    return lp.add_constraints("demand", {"serve": sp.kron(sp.identity(T), a_kr, format="csr"),
                                  "unserved": sp.identity(T * K, format="csr")},
                       lower=rhs, upper=rhs,
                       index=pd.MultiIndex.from_product([range(T), inp.units.index], names=["period", "unit"]))


def work_variables(lp: LinearProgram, inp: PlacementInputs, fixed: dict[str, np.ndarray], w_unserved: float,
                   cost_scale: float) -> None:
    """Training variables: ``train[o]`` binary per placement option (job, its one to four sites),
    ``train_unplaced[j]`` in [0, 1] (penalised per GPU), ``read[q] >= 0`` Gbps of each remote dataset read
    (at most 0 where no home reaches the site: a replica must be there), ``replica[d, s]`` binary (storage cost)."""
    w = inp.work
    jobs, opt = w.jobs, w.options
    sites = inp.sites.index.to_numpy()
    label = option_labels(opt, sites)
    lp.add_variables("train", pd.MultiIndex.from_arrays([jobs.index.to_numpy()[opt["job"].to_numpy()], label],
                                                        names=["job", "sites"]),
                     lower=fixed.get("train", 0.0), upper=fixed.get("train", 1.0), integer=True)
    lp.add_variables("train_unplaced", jobs.index, cost=w_unserved * jobs["gpus"].to_numpy(dtype=float), upper=1.0)
    lp.add_variables("read", len(w.reads), cost=READ_COST_USD_PER_GBPS,
                     upper=np.where(w.reads["reachable"].to_numpy(bool), np.inf, 0.0))
    rep = w.replicas
    lp.add_variables("replica", pd.MultiIndex.from_arrays([w.datasets.index.to_numpy()[rep["dataset"].to_numpy()],
                                                          sites[rep["site"].to_numpy()]], names=["dataset", "site"]),
                     cost=rep["cost_usd"].to_numpy(dtype=float) * cost_scale,
                     lower=fixed.get("replica", 0.0), upper=fixed.get("replica", 1.0), integer=True)


def _training_load(inp: PlacementInputs, repeat: int) -> sp.csr_matrix:
    """``(repeat x S) x options``: GPUs each training option puts at site s, stacked ``repeat`` times."""
    return sp.kron(np.ones((repeat, 1)), inp.work.option_gpus, format="csr")


def site_gpu_rows(lp: LinearProgram, inp: PlacementInputs, B: float, elastic: bool = False) -> Block:
    """GPUs used at a site in any period fit what is installed plus built.

    ``sum_{r at s} serve[t, r] + sum_j G_j train[j, s] - B blocks_s <= installed_s``.
    """
    T, S, R = inp.n_periods, len(inp.sites), len(inp.routes)
    a_sr = selector(inp.routes["site"].to_numpy(), S, R)
    blocks = {
        "serve": sp.kron(sp.identity(T), a_sr, format="csr"),
        "train": _training_load(inp, T),
        "blocks": sp.kron(np.ones((T, 1)), -B * sp.identity(S), format="csr"),
    }
    if elastic:
        blocks["extra_gpus"] = sp.kron(np.ones((T, 1)), -sp.identity(S), format="csr")
    return lp.add_constraints("site_gpus", blocks, upper=np.tile(inp.sites["gpus_installed"].to_numpy(dtype=float), T),
        index=pd.MultiIndex.from_product([range(T), inp.sites.index], names=["period", "site"]))


def gpu_rounding_rows(lp: LinearProgram, inp: PlacementInputs, B: float) -> Block | None:
    """Valid cut: GPUs are built in steps, so the GPUs idle across all sites are at least the remainder of the
    demand to that step, unless demand goes unserved (a mixed-integer rounding of the summed site GPU rows).

    Summing :func:`site_gpu_rows` over sites and substituting :func:`demand_rows` (servable units only) gives, in
    period t, ``B sum_s blocks_s - sum_o G_o train[o] + U_t >= c_t`` with ``U_t = sum_k unserved[t, k]`` and
    ``c_t = demand_t - installed``. The left-hand integer part ``Z = (B sum_s blocks_s - sum_o G_o train[o]) / g``
    is whole for ``g = gcd(B, G_j)``, so with ``k_t = ceil(c_t / g)`` and ``f_t = c_t - g (k_t - 1)`` (in
    ``(0, g]``) every plan meets ``f_t Z + U_t >= f_t k_t`` (``Z >= k_t``, or ``U_t`` covers the rest). The LP
    relaxation then pays for the idle remainder the integer plans cannot avoid, which closes the MIP gap the
    block rounding leaves (the optimum is unchanged: the row is implied by the integer rows).
    None when the step is not whole (fractional job sizes) or no period has demand beyond the installed GPUs.
    """
    T, K = inp.n_periods, len(inp.units)
    servable = np.bincount(inp.pairs["unit"].to_numpy(), minlength=K) > 0
    job_gpus = inp.work.jobs["gpus"].to_numpy(dtype=float)
    sizes = np.concatenate([[B], job_gpus])
    if not np.allclose(sizes, np.round(sizes)) or B < 1:
        return None
    g = float(np.gcd.reduce(np.round(sizes).astype(np.int64)))
    demand = (inp.units["demand_gpus"].to_numpy(dtype=float)[:, None] * inp.factors)[servable].sum(axis=0)  # T
    c = demand - float(inp.sites["gpus_installed"].to_numpy(dtype=float).sum())
    k = np.ceil(c / g - 1e-9)
    f = c - g * (k - 1.0)
    keep = np.flatnonzero(c > 0)
    if len(keep) == 0:
        return None
    f, k = f[keep], k[keep]
    S, n_opt = len(inp.sites), len(inp.work.options)
    opt_gpus = job_gpus[inp.work.options["job"].to_numpy()] if n_opt else np.zeros(0)
    unserved = selector(np.repeat(np.arange(T), K), T, T * K, values=np.tile(servable, T).astype(float))
    return lp.add_constraints("gpu_rounding", {
        "blocks": sp.csr_matrix(np.outer(f * B / g, np.ones(S))),
        "train": sp.csr_matrix(np.outer(-f / g, opt_gpus)),
        "unserved": unserved[keep],
    }, lower=f * k, index=pd.Index(keep, name="period"))


def power_rows(lp: LinearProgram, inp: PlacementInputs, B: float, elastic: bool = False) -> Block:
    """Power of the added GPUs is covered by spare power plus power built (up to the cap).

    ``mw_per_gpu x B blocks_s - power_s <= power_base_s - mw_per_gpu x installed_s``.
    """
    S = len(inp.sites)
    mw = inp.opts.kw_per_gpu / 1000.0
    rhs = inp.sites["power_base_mw"].to_numpy() - mw * inp.sites["gpus_installed"].to_numpy(dtype=float)
    blocks = {"blocks": mw * B * sp.identity(S, format="csr"), "power": -sp.identity(S, format="csr")}
    if elastic:  # GPUs beyond the maximum still need power; MW beyond the cap are the other excess
        blocks["extra_mw"] = -sp.identity(S, format="csr")
        blocks["extra_gpus"] = mw * sp.identity(S, format="csr")
    return lp.add_constraints("site_power", blocks, upper=rhs, index=inp.sites.index)


def build_max_rows(lp: LinearProgram, inp: PlacementInputs) -> Block:
    """Blocks only where built: ``blocks_s - max_blocks_s build_s <= 0``."""
    maxb = inp.sites["max_blocks"].to_numpy(dtype=float)
    return lp.add_constraints("build_max", {"blocks": sp.identity(len(inp.sites), format="csr"),
                                            "build": -sp.diags(maxb, format="csr")}, upper=0.0, index=inp.sites.index)


def build_min_rows(lp: LinearProgram, inp: PlacementInputs) -> Block:
    """At least the minimum build where built: ``blocks_s - min_blocks_s build_s >= 0``."""
    minb = inp.sites["min_blocks"].to_numpy(dtype=float)
    return lp.add_constraints("build_min", {"blocks": sp.identity(len(inp.sites), format="csr"),
                                            "build": -sp.diags(minb, format="csr")}, lower=0.0, index=inp.sites.index)


def link_rows(lp: LinearProgram, inp: PlacementInputs, elastic_cost: float | None = None) -> Block | None:
    """Placement traffic plus the scenario's traffic fit every arc, in every period.

    Placement traffic is symmetric (requests and responses ride the same path), so route r puts
    ``g x serve[t, r]`` on both arcs of each of its links:
    ``g sum_r P[r, l] serve[t, r] + sum_e A[e, a] existing_e <= capacity_l`` for each arc a of l.
    Only arcs some variable uses get a row (None when no arc is used). With ``elastic_cost``, the
    priced excess ``extra_gbps`` per arc row is added with the family.
    """
    net = inp.net
    T, L = inp.n_periods, len(net.links)
    g = inp.opts.gbps_per_gpu
    route_arcs = sp.hstack([inp.route_links, inp.route_links], format="csr").T.tocsr() * g  # 2L x R
    exist_arcs = inp.existing_arcs.T.tocsr()  # 2L x E
    w = inp.work
    work_arcs = {"train": w.option_arcs.T.tocsr(), "read": w.read_arcs.T.tocsr(),  # 2L x options, reads, replicas
                 "replica": w.replica_arcs.T.tocsr()}
    any_use = (np.diff(route_arcs.indptr) > 0) | (np.diff(exist_arcs.indptr) > 0)
    for m in work_arcs.values():
        any_use |= np.diff(m.indptr) > 0
    used = np.flatnonzero(any_use)
    if len(used) == 0:
        return None
    route_arcs, exist_arcs = route_arcs[used], exist_arcs[used]
    cap = np.tile(net.links["capacity_gbps"].to_numpy(dtype=float), 2)[used]
    arc_names = np.concatenate([net.links.index.to_numpy(), net.links.index.to_numpy()])[used]
    direction = np.where(used < L, "ab", "ba")
    n = len(used)
    blocks = {
        "serve": sp.kron(sp.identity(T), route_arcs, format="csr"),
        "existing": sp.kron(np.ones((T, 1)), exist_arcs, format="csr"),
    }
    blocks.update({name: sp.kron(np.ones((T, 1)), m[used], format="csr") for name, m in work_arcs.items()})
    if elastic_cost is not None:
        lp.add_variables("extra_gbps", pd.MultiIndex.from_arrays([arc_names, direction], names=["link", "dir"]),
                         cost=elastic_cost)
        blocks["extra_gbps"] = sp.kron(np.ones((T, 1)), -sp.identity(n), format="csr")
    return lp.add_constraints("link_capacity", blocks, upper=np.tile(cap, T), index=pd.MultiIndex.from_arrays(
        [np.repeat(np.arange(T), n), np.tile(arc_names, T), np.tile(direction, T)], names=["period", "link", "dir"]))


def existing_rows(lp: LinearProgram, inp: PlacementInputs, n_demands: int) -> Block | None:
    """Each scenario demand is routed over its candidate paths (or declared unrouted).

    ``sum_{e of d} existing_e + existing_unrouted_d = demand_d`` (None without scenario demands).
    """
    if n_demands == 0:
        return None
    E = len(inp.existing_paths)
    rhs = inp.existing["demand_gbps"].to_numpy(dtype=float)
    return lp.add_constraints("existing_demand", {
        "existing": selector(inp.existing_paths["demand"].to_numpy(), n_demands, E),
        "existing_unrouted": sp.identity(n_demands, format="csr"),
    }, lower=rhs, upper=rhs, index=inp.existing.index)


def training_rows(lp: LinearProgram, inp: PlacementInputs) -> Block | None:
    """Each training job takes exactly one placement option (or is declared unplaced).

    ``sum_{o of j} train[o] + train_unplaced_j = 1`` (None without training jobs).
    """
    w = inp.work
    J = len(w.jobs)
    if J == 0:
        return None
    return lp.add_constraints("training", {
        "train": selector(w.options["job"].to_numpy(), J, len(w.options)),
        "train_unplaced": sp.identity(J, format="csr"),
    }, lower=1.0, upper=1.0, index=w.jobs.index)


def read_rows(lp: LinearProgram, inp: PlacementInputs) -> Block | None:
    """A remote dataset read carries its Gbps unless a new replica sits at the job's site (data gravity).

    ``g_q train[o(q)] - g_q replica[d(q), s(q)] - read_q <= 0`` (None without remote reads).
    """
    w = inp.work
    Q = len(w.reads)
    if Q == 0:
        return None
    g = w.reads["gbps"].to_numpy(dtype=float)
    return lp.add_constraints("dataset_read", {
        "train": selector(w.reads["option"].to_numpy(), len(w.options), Q, values=g).T.tocsr(),
        "replica": selector(w.reads["replica"].to_numpy(), len(w.replicas), Q, values=-g).T.tocsr(),
        "read": -sp.identity(Q, format="csr"),
    }, upper=0.0, index=pd.RangeIndex(Q, name="read"))


def storage_rows(lp: LinearProgram, inp: PlacementInputs) -> Block | None:
    """New dataset replicas fit each site's free storage: ``sum_d size_d replica[d, s] <= free_pb_s``."""
    w = inp.work
    if len(w.replicas) == 0:
        return None
    S = len(inp.sites)
    size = w.datasets["size_pb"].to_numpy(dtype=float)[w.replicas["dataset"].to_numpy()]
    a = selector(w.replicas["site"].to_numpy(), S, len(w.replicas), values=size)
    used = np.flatnonzero(np.diff(a.indptr) > 0)
    return lp.add_constraints("storage", {"replica": a[used]}, upper=w.storage_room_pb[used],
                              index=inp.sites.index[used])


def n1_variables(lp: LinearProgram, inp: PlacementInputs, w_unserved: float) -> tuple[np.ndarray, np.ndarray]:
    """N+1 variables: ``backup[f, k, s] >= 0`` for every admissible (unit, site) pair with ``s != f``, and
    ``backup_unserved[f, k] >= 0`` (penalised). Returns the failed site and pair of each ``backup`` column."""
    S, P = len(inp.sites), len(inp.pairs)
    pair_unit, pair_site = inp.pairs["unit"].to_numpy(), inp.pairs["site"].to_numpy()
    f_idx = np.repeat(np.arange(S), P)
    p_idx = np.tile(np.arange(P), S)
    keep = pair_site[p_idx] != f_idx
    f_idx, p_idx = f_idx[keep], p_idx[keep]
    lp.add_variables("backup", pd.MultiIndex.from_arrays(
        [inp.sites.index[f_idx], inp.units.index[pair_unit[p_idx]], inp.sites.index[pair_site[p_idx]]],
        names=["failed", "unit", "site"]))
    lp.add_variables("backup_unserved", pd.MultiIndex.from_product([inp.sites.index, inp.units.index],
                                                                   names=["failed", "unit"]),
                     cost=N1_PENALTY_FRACTION * w_unserved / S)
    return f_idx, p_idx


def n1_demand_rows(lp: LinearProgram, inp: PlacementInputs, f_idx: np.ndarray, p_idx: np.ndarray) -> Block:
    """After the loss of any one candidate site f, every unit's served peak demand is re-served within SLO
    by the surviving sites (full reassignment, training stays):

    ``sum_{s != f} backup[f, k, s] + backup_unserved[f, k] >= sum_{r in k} serve[t*_k, r]``, where ``t*_k`` is
    unit k's peak period (every unit at its own peak: conservative with periods). ``f_idx``, ``p_idx``: the
    failed site and pair of each ``backup`` column (:func:`n1_variables`).
    """
    S, K, R, T = len(inp.sites), len(inp.units), len(inp.routes), inp.n_periods
    pair_unit = inp.pairs["unit"].to_numpy()
    # served peak demand of each unit: columns (peak period of unit(r), r)
    r_unit = inp.routes["unit"].to_numpy()
    peak = inp.units["peak_period"].to_numpy()[r_unit]
    served_peak = selector(r_unit, K, T * R, cols=peak * R + np.arange(R), values=-1.0)
    return lp.add_constraints("n1_demand", {
        "backup": selector(f_idx * K + pair_unit[p_idx], S * K, len(f_idx)),
        "serve": sp.kron(np.ones((S, 1)), served_peak, format="csr"),
        "backup_unserved": sp.identity(S * K, format="csr"),
    }, lower=0.0, index=pd.MultiIndex.from_product([inp.sites.index, inp.units.index], names=["failed", "unit"]))


def n1_site_gpu_rows(lp: LinearProgram, inp: PlacementInputs, B: float, f_idx: np.ndarray, p_idx: np.ndarray,
                     elastic: bool = False) -> Block:
    """The backups fit the surviving sites' GPUs, in every failure state ``f``:

    ``sum_k backup[f, k, s] + sum_j G_j train[j, s] - B blocks_s <= installed_s`` for ``s != f``.
    Network capacity is not re-checked in failure states (GPU capacity only).
    """
    S = len(inp.sites)
    pair_site = inp.pairs["site"].to_numpy()
    blocks = {
        "backup": selector(f_idx * S + pair_site[p_idx], S * S, len(f_idx)),
        "train": _training_load(inp, S),
        "blocks": sp.kron(np.ones((S, 1)), -B * sp.identity(S), format="csr"),
    }
    if elastic:
        blocks["extra_gpus"] = sp.kron(np.ones((S, 1)), -sp.identity(S), format="csr")
    return lp.add_constraints("n1_site_gpus", blocks,
                              upper=np.tile(inp.sites["gpus_installed"].to_numpy(dtype=float), S),
                              index=pd.MultiIndex.from_product([inp.sites.index, inp.sites.index],
                                                               names=["failed", "site"]))
