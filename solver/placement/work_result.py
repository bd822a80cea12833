"""The solved placement's training results: where each job runs and why, the new dataset replicas, and every
backbone flow the workloads make (:mod:`~backbone.solver.placement.workloads` builds what these read)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backbone.solver.core.problem import Solution
from backbone.solver.placement.splits import SITE_COLUMNS, option_labels, ring_edges
from backbone.solver.placement.workloads import JobInputs

__all__ = ["read_gbps", "replica_table", "training_table", "workload_arc_gbps", "workload_flows"]


# ---------------------------------------------------------------------- results
def read_gbps(work: JobInputs, sol: Solution) -> np.ndarray:
    """Gbps of each remote read in the solved plan: its formula's rate where its option is chosen and no new
    replica sits at its site, else 0 (the read variables only bound this from above)."""
    if len(work.reads) == 0:
        return np.zeros(0)
    train = np.round(sol.values("train").to_numpy()) > 0.5
    replica = np.round(sol.values("replica").to_numpy()) > 0.5
    covered = replica[work.reads["replica"].to_numpy()]
    on = train[work.reads["option"].to_numpy()] & ~covered
    return np.where(on, work.reads["gbps"].to_numpy(dtype=float), 0.0)


def workload_arc_gbps(work: JobInputs, sol: Solution) -> np.ndarray:
    """Gbps the solved training options, remote reads and new replicas put on each of the ``2L`` arcs."""
    n_arcs = work.option_arcs.shape[1]
    if len(work.options) == 0:
        return np.zeros(n_arcs)
    train = np.round(sol.values("train").to_numpy())
    replica = np.round(sol.values("replica").to_numpy())
    return np.asarray(work.option_arcs.T @ train + work.read_arcs.T @ read_gbps(work, sol)
                      + work.replica_arcs.T @ replica)


def training_table(work: JobInputs, sites: pd.DataFrame, sol: Solution, usd_per_gpu: np.ndarray) -> pd.DataFrame:
    """One row per (placed job, site): GPUs there, the sites the job spans, and the backbone Gbps it makes by class
    (``training-sync`` sent to the next site of its ring, ``sites`` listing them in ring order, ``ring_latency_ms``
    the ring's summed one-way latency; ``checkpoint`` to its replica site, ``dataset`` reads into the
    site), with the datasets read remotely and those with a new local replica; and, to say why it went there, the
    site's cost per added GPU (``usd_per_gpu``, capex and opex) beside the cheapest allowed site that could hold the
    whole job (``cheapest_allowed_site``, ``cheapest_usd_per_gpu``): a dearer choice was made for its data, the
    backbone or room the cheaper site lacked. ``checkpoint_policy_met`` is false (on every row of the job) when its
    checkpoint replica policy asks for a copy the placement cannot make, with the reason in
    ``checkpoint_policy_note`` (for example the residency of the data it reads leaves no storage site in another
    region): the job then has no checkpoint flow. ``why`` says it in words (:func:`_why`)."""
    site_ids = sites.index
    cols = ["job", "site", "gpus", "sites", "n_sites", "ring_latency_ms", "sync_gbps", "checkpoint_gbps", "checkpoint_site",
            "checkpoint_policy_met", "checkpoint_policy_note", "dataset_gbps", "datasets_remote", "datasets_replicated", "usd_per_gpu", "cheapest_allowed_site",
            "cheapest_usd_per_gpu", "why", "origin"]
    if len(work.options) == 0:
        return pd.DataFrame({c: [] for c in cols})
    opt = work.options
    chosen = np.flatnonzero(np.round(sol.values("train").to_numpy()) > 0.5)
    ring = opt[list(SITE_COLUMNS)].to_numpy()[chosen]
    at, pos = np.nonzero(ring >= 0)  # chosen option x position in its ring
    rows_o, rows_s = chosen[at], ring[at, pos]
    ids = site_ids.to_numpy()
    jobs = work.jobs
    job = opt["job"].to_numpy()[rows_o]
    label = option_labels(opt.iloc[rows_o], ids)
    reads = work.reads.assign(value=read_gbps(work, sol))
    key = pd.MultiIndex.from_arrays([rows_o, rows_s])
    by_key = reads.groupby(["option", "site"])
    gbps = by_key["value"].sum().reindex(key, fill_value=0.0).to_numpy()
    dnames = work.datasets.index.to_numpy()
    remote = _joined(reads[reads["value"] > 1e-9], dnames, key)
    covered = _joined(reads[reads["value"] <= 1e-9], dnames, key)
    ckpt_site = opt["checkpoint_site"].to_numpy()[rows_o]
    first = pos == 0
    out = pd.DataFrame({
        "job": jobs.index.to_numpy()[job], "site": ids[rows_s],
        "gpus": jobs["gpus"].to_numpy(dtype=float)[job] / opt["n_sites"].to_numpy()[rows_o],
        "sites": label, "n_sites": opt["n_sites"].to_numpy()[rows_o],
        "ring_latency_ms": opt["ring_latency_ms"].to_numpy(dtype=float)[rows_o],
        "sync_gbps": opt["sync_gbps"].to_numpy()[rows_o],
        "checkpoint_gbps": np.where(first, opt["checkpoint_gbps"].to_numpy()[rows_o], 0.0),
        "checkpoint_site": np.where(first, ckpt_site, ""),
        "checkpoint_policy_met": opt["checkpoint_unmet"].to_numpy()[rows_o] == "",
        "checkpoint_policy_note": opt["checkpoint_unmet"].to_numpy()[rows_o],
        "dataset_gbps": gbps, "datasets_remote": remote, "datasets_replicated": covered,
        "usd_per_gpu": np.asarray(usd_per_gpu, dtype=float)[rows_s], **_cheapest(work, sites, usd_per_gpu, job),
        "origin": jobs["origin"].to_numpy()[job]})
    out["why"] = out["job"].map(_why(out, work, sites, sol, usd_per_gpu))
    return out.sort_values(["job", "site"], kind="stable", ignore_index=True)


def _why(rows: pd.DataFrame, work: JobInputs, sites: pd.DataFrame, sol: Solution, usd_per_gpu: np.ndarray
         ) -> dict[str, str]:
    """Why each placed job runs where it does, in words, by the first rule that holds (a reading of the solution,
    not a second solve): ``X`` is the cheapest allowed site with room for the whole job.

    1. it runs at ``X`` (or no pricier site than it): the cheapest allowed site; the note adds the cheaper site its
       regions, pins or data residency rule out, if any;
    2. no allowed site has room for the whole job: it is split;
    3. ``X``'s blocks are all built (its power or ``gpus_max`` ran out) in this solution: the room ran out there;
    4. the job reads its datasets locally here (a home or a new replica) and would read them remotely at ``X``:
       its data pulled it;
    5. else the backbone: its sync, reads or checkpoints from ``X`` would need capacity the links lack, or the joint
       optimum with inference and the other jobs put it here."""
    cost = np.asarray(usd_per_gpu, dtype=float)
    ids = sites.index
    room = sites["gpus_cap"].to_numpy(dtype=float)
    full = np.round(sol.values("blocks").to_numpy()) >= sites["max_blocks"].to_numpy() - 0.5
    allowed = work.allowed if work.allowed is not None else np.ones((len(work.jobs), len(sites)), bool)
    opt = work.options
    out: dict[str, str] = {}
    for jid, r in rows.groupby("job", sort=False):  # one pass per placed job (tens)
        j = work.jobs.index.get_loc(jid)
        gpus = float(work.jobs.iloc[j]["gpus"])
        fits = room >= gpus
        x = str(r["cheapest_allowed_site"].iloc[0])
        any_best = int(np.argmin(np.where(fits, cost, np.inf))) if fits.any() else -1
        ruled_out = (f"; its regions, pins or data residency rule out {ids[any_best]} (USD {cost[any_best]:,.0f}/GPU)"
                     if any_best >= 0 and not allowed[j, any_best] and cost[any_best] < cost[
                         ids.get_loc(x)] - 1e-6 else "") if x else ""
        if not x:
            out[jid] = f"no allowed site has room for all {gpus:,.0f} GPUs: split over {int(r['n_sites'].iloc[0])}"
        elif float(r["usd_per_gpu"].max()) <= float(r["cheapest_usd_per_gpu"].iloc[0]) + 1e-6:
            out[jid] = "the cheapest allowed site with room" + ruled_out
        elif full[ids.get_loc(x)]:
            out[jid] = f"room or power ran out at {x}, the cheapest allowed site (all its blocks are built)" + ruled_out
        elif _reads_locally_here_not_at(work, opt, j, ids.get_loc(x), r):
            out[jid] = f"its data pulled it: read locally here, over the backbone (or from a new replica) at {x}"
        else:
            out[jid] = (f"the backbone or the joint optimum: {x} is cheaper per GPU, but its sync, reads or "
                        f"checkpoints from there would need link capacity, or inference took the room")
    return out


def _reads_locally_here_not_at(work: JobInputs, opt: pd.DataFrame, j: int, x: int, rows: pd.DataFrame) -> bool:
    """The job reads datasets, reads none remotely where it runs, and would read some remotely at site ``x``."""
    if not len(work.jobs.iloc[j]["datasets"]) or (rows["datasets_remote"] != "").any():
        return False
    at_x = np.flatnonzero((opt["job"].to_numpy() == j) & (opt["n_sites"].to_numpy() == 1)
                          & (opt[SITE_COLUMNS[0]].to_numpy() == x))
    return bool(len(at_x)) and bool(np.isin(work.reads["option"].to_numpy(), at_x).any())


def _cheapest(work: JobInputs, sites: pd.DataFrame, usd_per_gpu: np.ndarray, job: np.ndarray) -> dict[str, Any]:
    """The cheapest allowed site with room for the whole job, and its cost per added GPU, for each row's job."""
    allowed = work.allowed if work.allowed is not None else np.ones((len(work.jobs), len(sites)), bool)
    room = sites["gpus_cap"].to_numpy(dtype=float)[None, :] >= work.jobs["gpus"].to_numpy(dtype=float)[:, None]
    cost = np.where(allowed & room, np.asarray(usd_per_gpu, dtype=float)[None, :], np.inf)
    best = cost.argmin(axis=1) if len(sites) else np.zeros(len(work.jobs), int)
    ok = np.isfinite(cost[np.arange(len(work.jobs)), best]) if len(sites) else np.zeros(len(work.jobs), bool)
    return {"cheapest_allowed_site": np.where(ok, sites.index.to_numpy()[best], "")[job],
            "cheapest_usd_per_gpu": np.where(ok, cost[np.arange(len(work.jobs)), best] if len(sites) else 0.0,
                                             np.nan)[job]}


def _joined(reads: pd.DataFrame, names: np.ndarray, key: pd.MultiIndex) -> np.ndarray:
    """';'-joined dataset names of the reads of each (option, site) of ``key`` ('' for none)."""
    joined = reads.groupby(["option", "site"])["dataset"].agg(lambda d: ";".join(sorted(names[d])))
    return joined.astype(object).reindex(key).fillna("").to_numpy()


def replica_table(work: JobInputs, site_ids: pd.Index, sol: Solution) -> pd.DataFrame:
    """The new dataset replicas the placement builds: dataset, site, PB, storage cost and growth-replication Gbps."""
    rep = work.replicas
    if len(rep) == 0:
        return pd.DataFrame({"dataset": [], "site": [], "size_pb": [], "cost_usd": [], "growth_gbps": []})
    built = np.round(sol.values("replica").to_numpy()) > 0.5
    r = rep[built]
    d = r["dataset"].to_numpy()
    return pd.DataFrame({"dataset": work.datasets.index.to_numpy()[d], "site": site_ids.to_numpy()[r["site"].to_numpy()],
                         "size_pb": work.datasets["size_pb"].to_numpy(dtype=float)[d],
                         "cost_usd": r["cost_usd"].to_numpy(dtype=float),
                         "growth_gbps": work.datasets["growth_gbps"].to_numpy(dtype=float)[d]})


def workload_flows(work: JobInputs, site_ids: pd.Index, sol: Solution) -> pd.DataFrame:
    """One row per backbone flow of the placed training jobs and new replicas: ``job`` ('' for a replica's
    growth), ``dataset`` ('' for sync and checkpoints), ``traffic_class`` (``training-sync``, ``checkpoint``,
    ``dataset``, ``replication``), ``src``, ``dst``, ``gbps`` and the ``links`` of its path (';'-joined, in
    travel order)."""
    cols = ["job", "dataset", "traffic_class", "src", "dst", "gbps", "links"]
    if len(work.options) == 0 or work.site_routes is None:
        return pd.DataFrame({c: [] for c in cols})
    S, ids = len(site_ids), site_ids.to_numpy()
    opt = work.options
    chosen = np.flatnonzero(np.round(sol.values("train").to_numpy()) > 0.5)
    o = opt.iloc[chosen]
    job_ids = work.jobs.index.to_numpy()[o["job"].to_numpy()]
    row = o["checkpoint_route"].to_numpy()
    ck = (row >= 0) & (o["checkpoint_gbps"].to_numpy() > 0)
    e_opt, src, dst = ring_edges(o[list(SITE_COLUMNS)].to_numpy(), o["n_sites"].to_numpy())
    sync = o["sync_gbps"].to_numpy()[e_opt]
    e_opt, src, dst, sync = e_opt[sync > 0], src[sync > 0], dst[sync > 0], sync[sync > 0]
    parts = [pd.DataFrame({
        "job": job_ids[e_opt], "dataset": "", "traffic_class": "training-sync",
        "src": ids[src], "dst": ids[dst], "gbps": sync, "links": work.site_routes.links(src * S + dst)})]
    cr = work.checkpoint_routes
    if cr is not None and ck.any():
        parts.append(pd.DataFrame({
            "job": job_ids[ck], "dataset": "", "traffic_class": "checkpoint", "src": cr.src[row[ck]],
            "dst": cr.dst[row[ck]], "gbps": o["checkpoint_gbps"].to_numpy()[ck], "links": cr.links(row[ck])}))
    hr = work.home_routes
    if hr is not None and len(work.reads):
        value = read_gbps(work, sol)
        r = work.reads[value > 1e-9]
        pair = r["home"].to_numpy() * S + r["site"].to_numpy()
        parts.append(pd.DataFrame({
            "job": work.jobs.index.to_numpy()[opt["job"].to_numpy()[r["option"].to_numpy()]],
            "dataset": work.datasets.index.to_numpy()[r["dataset"].to_numpy()], "traffic_class": "dataset",
            "src": hr.src[pair], "dst": hr.dst[pair], "gbps": value[value > 1e-9], "links": hr.links(pair)}))
        built = np.round(sol.values("replica").to_numpy()) > 0.5
        rep = work.replicas[built]
        growth = work.datasets["growth_gbps"].to_numpy(dtype=float)[rep["dataset"].to_numpy()]
        rep, growth = rep[growth > 0], growth[growth > 0]
        pair = rep["home"].to_numpy() * S + rep["site"].to_numpy()
        parts.append(pd.DataFrame({
            "job": "", "dataset": work.datasets.index.to_numpy()[rep["dataset"].to_numpy()],
            "traffic_class": "replication", "src": hr.src[pair], "dst": hr.dst[pair], "gbps": growth,
            "links": hr.links(pair)}))
    return pd.concat(parts, ignore_index=True)[cols]
