"""Training jobs in placement, with data gravity: where each job may run, and the backbone traffic it then makes.

A training job of ``G`` GPUs runs at one site, or split evenly over ``k`` sites, ``k`` up to its ``max_sites`` and
at most :data:`~backbone.solver.placement.options.MAX_SPLIT_SITES` (four; a job allowing more is placed on at most
four, and the result says so). Each *placement option* ``o`` of a job is a set of sites in the order of its
least-latency synchronisation ring (:mod:`~backbone.solver.placement.splits`, which also prunes the 3- and 4-site
sets to ``split_sets_per_job`` per job and size, and says why a job no set can place is unplaceable); the MIP picks
one option per job (``train[o]`` binary). An option is admissible when every site of it is allowed (the job's
regions and pinned sites), has room for its share of the GPUs, and may hold every dataset the job reads (the
dataset's residency: reading data at a site puts it there), and, when any option of the job can, meets its
checkpoint replica policy (a job none of whose options can is placed anyway and flagged: ``checkpoint_policy_met``
false, with the reason).

Traffic an option creates, each from :mod:`backbone.workloads` (one function per flow):

* **training-sync** (:func:`~backbone.workloads.gradient_sync_gbps` with ``R = k``): from each site of a split
  option to the next site of its ring (the last back to the first; both ways between two sites), over the
  lowest-latency path;
* **checkpoint** (:func:`~backbone.workloads.checkpoint_replication_gbps`): from the option's first site to the
  nearest storage site its replica policy names (``other-region``: in another region; ``same-region``: another
  site in the same region; ``none``), within its datasets' residency;
* **dataset** (:func:`~backbone.workloads.dataset_read_gbps`): reads from the dataset's nearest home site (by
  backbone latency) to each site of the option that holds no replica. A new replica of dataset ``d`` at site
  ``s`` (``replica[d, s]`` binary; storage ``size_pb`` within the site's free ``storage_pb``, at
  ``storage_cost_usd_per_pb``) removes those reads, and adds the dataset's growth replication
  (:func:`~backbone.workloads.dataset_replication_gbps`) from its nearest home. The one-off seeding copy is not
  sustained traffic and is not counted against link capacity.

The tables here hold positions into the placement's site table and arc incidences (``2L`` columns: arc ``l``
is link ``l`` from ``site_a`` to ``site_b``, arc ``L + l`` the reverse), so the formulation adds the traffic to
its link rows with one sparse block per variable family.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.errors import Problem, ValidationError
from backbone.geo import geodesic_km
from backbone.model import Network
from backbone.solver.paths.candidates import PathSet
from backbone.solver.placement.options import MAX_SPLIT_SITES, PlaceOptions
from backbone.solver.placement.splits import (
    SITE_COLUMNS,
    SplitRanking,
    ring_edges,
    split_notes,
    split_sets,
    unplaceable_reasons,
)
from backbone.validate_workloads import dataset_allowed_sites
from backbone.workload_traffic import CHECKPOINT_BYTES_PER_PARAMETER, checkpoint_bytes
from backbone.workloads import (
    checkpoint_replication_gbps,
    dataset_read_gbps,
    dataset_replication_gbps,
    gradient_sync_gbps,
)

__all__ = ["JobInputs", "job_inputs", "job_table"]

_JOB_COLUMNS = ("gpus", "max_sites", "parameters", "bytes_per_parameter", "step_time_s", "sync_method",
                "inner_steps", "fragments", "compression_bits", "datasets", "checkpoint_bytes",
                "checkpoint_interval_s", "checkpoint_replicas", "regions", "sites", "origin")


@dataclass
class JobInputs:
    """Training jobs, their placement options and the traffic each option makes.

    Attributes
    ----------
    jobs
        One row per job (index job id): the columns of :data:`_JOB_COLUMNS`.
    options
        One row per admissible (job, site set): ``job`` (position), ``site_a`` .. ``site_d`` (positions in ring
        order, -1 past ``n_sites``), ``n_sites``, ``ring_latency_ms``, ``sync_gbps`` (on each ring edge),
        ``checkpoint_gbps``,
        ``checkpoint_site`` (site id, '' for none), ``checkpoint_route`` (row of ``checkpoint_routes``, -1),
        ``checkpoint_unmet`` (why the job's checkpoint replica policy gets no copy from this option; '' when met).
    option_gpus
        ``sites x options`` CSR: GPUs the option puts at each site.
    option_arcs
        ``options x 2L`` CSR: Gbps of sync and checkpoint traffic on each arc.
    reads
        One row per (option, site of it, dataset) that would read remotely: ``option``, ``site``, ``dataset``
        (positions), ``gbps``, ``replica`` (row of ``replicas`` that removes it), ``reachable`` (a home can
        reach the site over the backbone; where not, the option needs a replica there, seeded offline).
    read_arcs
        ``reads x 2L`` CSR: one unit per arc of the path from the dataset's nearest home to the site.
    datasets
        The datasets the jobs read (index dataset id): ``size_pb``, ``growth_gbps``.
    replicas
        Candidate new replicas: ``dataset``, ``site`` (positions), ``cost_usd``.
    replica_arcs
        ``replicas x 2L`` CSR: Gbps of growth replication on each arc.
    storage_room_pb
        Free storage per site (PB), for the replicas' storage rows.
    site_routes, home_routes
        Lowest-latency routes between candidate sites (pair ``a * S + b``) and from dataset homes to candidate
        sites (pair ``h * S + s``; reads' and replicas' ``home`` is ``h``).
    checkpoint_routes
        Routes from options' first sites to their checkpoint sites (``options["checkpoint_route"]``).
    allowed
        ``jobs x sites``: the site is allowed for the job (regions, pinned sites, its datasets' residency).
    notes
        The restrictions of the options (pruned 3- and 4-site sets, jobs allowing more than four sites).
    unplaceable
        Why each job without any option cannot be placed (job id -> reason).
    """

    jobs: pd.DataFrame
    options: pd.DataFrame
    option_gpus: sp.csr_matrix
    option_arcs: sp.csr_matrix
    reads: pd.DataFrame
    read_arcs: sp.csr_matrix
    datasets: pd.DataFrame
    replicas: pd.DataFrame
    replica_arcs: sp.csr_matrix
    storage_room_pb: np.ndarray
    site_routes: Routes | None = None
    home_routes: Routes | None = None
    checkpoint_routes: Routes | None = None
    allowed: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    unplaceable: dict[str, str] = field(default_factory=dict)


def job_table(net: Network, opts: PlaceOptions) -> pd.DataFrame:
    """The jobs to place: the scenario's ``training_jobs`` (when ``opts.scenario_jobs``), then ``opts.training``,
    as one table with every field :func:`job_inputs` reads.

    A job with pinned ``sites`` is placed only there; the options' jobs keep their defaults (no datasets, no
    synchronisation or checkpoint traffic unless given). Start and end quarters are not read: placement plans
    the peak with every job running.
    """
    rows: list[dict[str, object]] = []
    table = net.training_jobs
    if opts.scenario_jobs and len(table):
        t = table
        ckpt = checkpoint_bytes(t).to_numpy(dtype=float)
        frame = pd.DataFrame({
            "gpus": t["gpus"].to_numpy(dtype=float), "max_sites": t["max_sites"].to_numpy(dtype=int),
            "parameters": t["parameters"].to_numpy(dtype=float),
            "bytes_per_parameter": t["bytes_per_parameter"].to_numpy(dtype=float),
            "step_time_s": t["step_time_s"].to_numpy(dtype=float), "sync_method": t["sync_method"].to_numpy(),
            "inner_steps": t["inner_steps"].to_numpy(dtype=float), "fragments": t["fragments"].to_numpy(dtype=float),
            "compression_bits": t["compression_bits"].to_numpy(dtype=float),
            "datasets": [tuple(x) for x in t["datasets"]], "checkpoint_bytes": ckpt,
            "checkpoint_interval_s": t["checkpoint_interval_s"].to_numpy(dtype=float),
            "checkpoint_replicas": t["checkpoint_replicas"].to_numpy(),
            "regions": [tuple(x) for x in t["regions"]], "sites": [tuple(x) for x in t["sites"]],
            "origin": "scenario"}, index=pd.Index(t.index.astype(str), name="job"))
        rows.extend(frame.reset_index().to_dict("records"))
    for j in opts.training:
        ckpt = j.checkpoint_size_tb * 1e12 if j.checkpoint_size_tb is not None else \
            j.parameters * CHECKPOINT_BYTES_PER_PARAMETER
        rows.append({"job": j.id, "gpus": float(j.gpus), "max_sites": j.max_sites, "parameters": j.parameters,
                     "bytes_per_parameter": j.bytes_per_parameter, "step_time_s": j.step_time_s,
                     "sync_method": j.sync_method, "inner_steps": float(j.inner_steps), "fragments": float(j.fragments),
                     "compression_bits": np.nan if j.compression_bits is None else j.compression_bits,
                     "datasets": tuple(j.datasets), "checkpoint_bytes": ckpt,
                     "checkpoint_interval_s": j.checkpoint_interval_s, "checkpoint_replicas": j.checkpoint_replicas,
                     "regions": tuple(j.regions), "sites": tuple(j.sites), "origin": "options"})
    if not rows:
        return pd.DataFrame({c: [] for c in _JOB_COLUMNS}, index=pd.Index([], name="job"))
    jobs = pd.DataFrame(rows).set_index("job")
    dup = jobs.index[jobs.index.duplicated()]
    if len(dup):
        raise ValidationError([Problem(f"training job {d!r} is given twice (scenario and options, or twice in "
                                       "options)", table="options", record=str(d), field="training.id")
                               for d in dict.fromkeys(dup)])
    return jobs


def _datasets(net: Network, jobs: pd.DataFrame) -> pd.DataFrame:
    """The scenario's datasets the jobs read; an unknown dataset id is a :class:`ValidationError`."""
    table = net.datasets
    wanted = sorted({d for ds in jobs["datasets"] for d in ds})
    unknown = [d for d in wanted if d not in table.index]
    if unknown:
        raise ValidationError([Problem(f"unknown dataset {d!r}", table="training_jobs", field="datasets")
                               for d in unknown])
    return table.loc[wanted] if wanted else table.iloc[:0]


def _resident(net: Network, jobs: pd.DataFrame, site_ids: pd.Index) -> np.ndarray:
    """``jobs x site_ids``: the site satisfies the residency of every dataset the job reads (the model's one
    residency rule, :func:`backbone.validate_workloads.dataset_allowed_sites`)."""
    out = np.ones((len(jobs), len(site_ids)), bool)
    if len(net.datasets) == 0:
        return out
    allowed = dataset_allowed_sites(net).reindex(columns=site_ids, fill_value=False).to_numpy()
    row = net.datasets.index.get_indexer
    for i, ds in enumerate(jobs["datasets"]):  # one row per job (tens); its datasets' rows ANDed
        if ds:
            out[i] = allowed[row(list(ds))].all(axis=0)
    return out


@dataclass
class Routes:
    """The lowest-latency path of each (src, dst) pair of site ids: ``latency_ms`` (one way; inf where
    unreachable; 0 where src == dst), ``arcs`` (``pairs x 2L`` incidence) and each pair's link ids on demand."""

    src: np.ndarray
    dst: np.ndarray
    latency_ms: np.ndarray
    arcs: sp.csr_matrix
    pathset: PathSet | None
    path_of: np.ndarray  # pair -> path row of ``pathset`` (-1: none, or src == dst)

    def links(self, pairs: np.ndarray) -> list[str]:
        """';'-joined link ids of the given pairs' paths ('' for none)."""
        ps = self.pathset
        return ["" if ps is None or self.path_of[p] < 0 else ";".join(ps.path_links(int(self.path_of[p])))
                for p in pairs]  # the chosen flows only


def shortest_routes(net: Network, src: np.ndarray, dst: np.ndarray) -> Routes:
    """:class:`Routes` of each (src, dst) pair of site ids (one candidate path search for all of them)."""
    from backbone.solver.paths.candidates import candidate_paths

    n, n_arcs = len(src), 2 * len(net.links)
    lat = np.where(src == dst, 0.0, np.inf)
    path_of = np.full(n, -1)
    remote = np.flatnonzero(src != dst)
    if len(remote) == 0:
        return Routes(src, dst, lat, sp.csr_matrix((n, n_arcs)), None, path_of)
    ps = candidate_paths(net, pd.DataFrame({"src": src[remote], "dst": dst[remote]}), k_paths=1)
    rows = remote[ps.path_pair]
    lat[rows] = ps.path_latency_ms
    path_of[rows] = np.arange(len(rows))
    pick = sp.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))), shape=(n, len(rows)))
    return Routes(src, dst, lat, (pick @ ps.arc_incidence).tocsr(), ps, path_of)


def _allowed_sites(jobs: pd.DataFrame, sites: pd.DataFrame, resident: np.ndarray) -> np.ndarray:
    """``jobs x sites``: the site is allowed for the job (regions, pinned sites, every dataset's residency:
    ``resident``)."""
    ok = resident.copy()
    for i, (regions, pinned) in enumerate(zip(jobs["regions"], jobs["sites"], strict=True)):
        if regions:  # one row per job: a handful of jobs, each test vectorised over sites
            ok[i] &= sites["region"].isin(regions).to_numpy()
        if pinned:
            ok[i] &= sites.index.isin(pinned)
    return ok


def _checkpoint_targets(net: Network, jobs: pd.DataFrame, options: pd.DataFrame,
                        sites: pd.DataFrame) -> tuple[np.ndarray, Routes | None, np.ndarray, np.ndarray]:
    """The checkpoint replica site of each option by the model's rule (:mod:`backbone.workload_traffic`): the
    storage site (``storage_pb > 0``; any site when none has storage) nearest the option's first site (geodesic;
    ties to the first in the sites table), outside the option's own sites, in the same region (``same-region``) or
    another (``other-region``), within the residency of every dataset the job reads. Returns each option's target id ('' for none), the routes to the targets, each
    option's row of those routes (-1 for none), and why an option whose policy asks for a copy gets none ('' where
    the policy is met or is ``none``; see :func:`_checkpoint_unmet`)."""
    n_opt = len(options)
    all_sites = net.sites
    has = all_sites["storage_pb"].to_numpy(dtype=float) > 0 if "storage_pb" in all_sites else np.zeros(0, bool)
    stores = all_sites[has] if has.any() else all_sites
    if n_opt == 0 or len(stores) == 0:
        return np.full(n_opt, "", dtype=object), None, np.full(n_opt, -1), np.full(n_opt, "", dtype=object)
    policy = jobs["checkpoint_replicas"].to_numpy()[options["job"].to_numpy()]
    ids = sites.index.to_numpy()
    a = options["site_a"].to_numpy()
    ring = options[list(SITE_COLUMNS)].to_numpy()
    km = geodesic_km(sites["lon"].to_numpy(dtype=float)[a][:, None], sites["lat"].to_numpy(dtype=float)[a][:, None],
                     stores["lon"].to_numpy(dtype=float)[None, :], stores["lat"].to_numpy(dtype=float)[None, :])
    store_ids = stores.index.to_numpy()
    same = sites["region"].to_numpy()[a][:, None] == stores["region"].to_numpy()[None, :]
    own = np.where(ring >= 0, ids[np.maximum(ring, 0)], "")  # options x MAX_SPLIT_SITES site ids ('' past n_sites)
    bad = (store_ids[None, :, None] == own[:, None, :]).any(axis=2)
    bad |= np.where((policy == "same-region")[:, None], ~same, same)
    by_region = ~bad.all(axis=1)  # some storage site meets the region rule, before residency
    bad |= ~_resident(net, jobs, stores.index)[options["job"].to_numpy()]
    km = np.where(bad, np.inf, km)
    pick = km.argmin(axis=1)
    ok = (policy != "none") & np.isfinite(km[np.arange(n_opt), pick])
    target = np.where(ok, store_ids[pick], "").astype(object)
    pairs = pd.DataFrame({"src": ids[a][ok], "dst": target[ok]}).drop_duplicates(ignore_index=True)
    routes = shortest_routes(net, pairs["src"].to_numpy(), pairs["dst"].to_numpy())
    row_of = pd.Series(np.arange(len(pairs)), index=pd.MultiIndex.from_frame(pairs))
    rows = np.full(n_opt, -1)
    rows[ok] = row_of.reindex(pd.MultiIndex.from_arrays([ids[a][ok], target[ok]])).to_numpy(dtype=int)
    lat = routes.latency_ms[np.maximum(rows, 0)] if len(pairs) else np.full(n_opt, np.inf)
    unreachable = (rows >= 0) & ~np.isfinite(lat)
    unmet = _checkpoint_unmet(policy, ok, by_region, unreachable, target,
                              jobs["datasets"].to_numpy()[options["job"].to_numpy()])
    target[unreachable], rows[unreachable] = "", -1
    return target, routes, rows, unmet


def _meeting_checkpoint_policy(net: Network, jobs: pd.DataFrame, options: pd.DataFrame,
                               sites: pd.DataFrame) -> pd.DataFrame:
    """The options that meet their job's checkpoint replica policy, for every job some option of which meets it:
    the policy is then a hard rule, as residency is, and a placement cannot drop a job's checkpoint copy to save
    backbone capacity. A job no option of which can meet it keeps every option, and its result says so
    (``checkpoint_policy_met`` false, with the reason)."""
    if len(options) == 0:
        return options
    unmet = _checkpoint_targets(net, jobs, options, sites)[3] != ""
    job = options["job"].to_numpy()
    can_meet = np.bincount(job[~unmet], minlength=len(jobs)) > 0
    return options[~(unmet & can_meet[job])].reset_index(drop=True)


def _checkpoint_unmet(policy: np.ndarray, found: np.ndarray, by_region: np.ndarray, unreachable: np.ndarray,
                      target: np.ndarray, datasets: np.ndarray) -> np.ndarray:
    """Why each option's checkpoint replica policy goes unmet ('' where it is met or is ``none``): no storage site
    in the region the policy names (outside the job's own sites), or the residency of the datasets it reads leaves
    none there, or the backbone has no path to the nearest one."""
    where = np.where(policy == "same-region", "in the same region", "in another region")
    read = np.array([", ".join(d) for d in datasets], dtype=object)
    no_site = np.char.add("no storage site ", where.astype(str)).astype(object)
    residency = np.char.add(np.char.add(no_site.astype(str), " within the residency of "), read.astype(str))
    no_path = np.char.add("no backbone path to its checkpoint site ", target.astype(str))
    reason = np.where(~by_region, no_site, np.where(~found, residency, no_path)).astype(object)
    return np.where((policy != "none") & (~found | unreachable), reason, "").astype(object)


def _split_ranking(net: Network, opts: PlaceOptions, jobs: pd.DataFrame, sites: pd.DataFrame,
                   pair_arcs: sp.csr_matrix) -> SplitRanking:
    """What the 3- and 4-site sets are ranked by (:class:`~backbone.solver.placement.splits.SplitRanking`): each
    site's USD per added GPU (``cost_per_block_usd / block`` + ``capex_per_mw_usd x kw_per_gpu / 1000``), its
    installed and power-limited GPUs, each job's ring-edge sync Gbps per split size, and the links' capacity."""
    b = float(opts.block)
    installed = sites["gpus_installed"].to_numpy(dtype=float)
    per_gpu = (sites["cost_per_block_usd"].to_numpy(dtype=float) / b
               + sites["capex_per_mw_usd"].to_numpy(dtype=float) * opts.kw_per_gpu / 1000.0)
    sync = np.zeros((len(jobs), MAX_SPLIT_SITES + 1))
    for k in range(2, MAX_SPLIT_SITES + 1):  # one column per split size (three)
        sync[:, k] = _sync_gbps(jobs, np.full(len(jobs), k))
    return SplitRanking(job_gpus=jobs["gpus"].to_numpy(dtype=float), cost_per_gpu_usd=per_gpu, free_gpus=installed,
                        room_gpus=installed + b * sites["max_blocks"].to_numpy(dtype=float), sync_gbps=sync,
                        pair_arcs=pair_arcs.tocsr(),
                        arc_capacity_gbps=np.tile(net.links["capacity_gbps"].to_numpy(dtype=float), 2))


def _sync_gbps(jc: pd.DataFrame, n_sites: np.ndarray) -> np.ndarray:
    """Gradient-sync Gbps on each ring edge of every option (``R`` = its ``n_sites``; 0 on one site or without
    parameters), one formula call per synchronisation method (three at most)."""
    two = n_sites >= 2
    sync = np.zeros(len(jc))
    method_of = jc["sync_method"].to_numpy()
    comp = jc["compression_bits"].to_numpy(dtype=float)
    bpp = jc["bytes_per_parameter"].to_numpy(dtype=float)
    for method in np.unique(method_of):
        m = (method_of == method) & two & (jc["parameters"].to_numpy(dtype=float) > 0)
        if m.any():
            sync[m] = gradient_sync_gbps(jc["parameters"].to_numpy(dtype=float)[m], bpp[m],
                                         jc["step_time_s"].to_numpy(dtype=float)[m], n_sites[m], method=method,
                                         inner_steps=jc["inner_steps"].to_numpy(dtype=float)[m],
                                         fragments=jc["fragments"].to_numpy(dtype=float)[m],
                                         compression_bits=np.where(np.isfinite(comp[m]), comp[m], 8.0 * bpp[m]))
    return sync


def _no_jobs(jobs: pd.DataFrame, datasets: pd.DataFrame, n_sites: int, n_arcs: int) -> JobInputs:
    options = pd.DataFrame({c: np.zeros(0, int) for c in ("job", *SITE_COLUMNS, "n_sites", "checkpoint_route")}
                           ).assign(ring_latency_ms=np.zeros(0), sync_gbps=np.zeros(0), checkpoint_gbps=np.zeros(0),
                                    checkpoint_site=np.zeros(0, dtype=object),
                                    checkpoint_unmet=np.zeros(0, dtype=object))
    reads = pd.DataFrame({"option": np.zeros(0, int), "site": np.zeros(0, int), "dataset": np.zeros(0, int),
                          "gbps": np.zeros(0), "replica": np.zeros(0, int), "reachable": np.zeros(0, bool)})
    replicas = pd.DataFrame({"dataset": np.zeros(0, int), "site": np.zeros(0, int), "cost_usd": np.zeros(0)})
    return JobInputs(jobs, options, sp.csr_matrix((n_sites, 0)), sp.csr_matrix((0, n_arcs)), reads,
                     sp.csr_matrix((0, n_arcs)), pd.DataFrame({"size_pb": [], "growth_gbps": []}), replicas,
                     sp.csr_matrix((0, n_arcs)), np.zeros(n_sites))


def job_inputs(net: Network, opts: PlaceOptions, sites: pd.DataFrame) -> JobInputs:
    """Every training job's placement options and the traffic each makes (see the module docstring).

    Parameters
    ----------
    net
        The network (sites, links; ``datasets`` and ``training_jobs`` when present).
    opts
        Placement options (``training``, ``scenario_jobs``).
    sites
        The placement's candidate sites (index site id; ``region``, ``country``, ``gpus_cap``).
    """
    jobs = job_table(net, opts)
    datasets = _datasets(net, jobs)
    S, n_arcs = len(sites), 2 * len(net.links)
    if len(jobs) == 0:
        return _no_jobs(jobs, datasets, S, n_arcs)
    resident = _resident(net, jobs, sites.index)
    allowed = _allowed_sites(jobs, sites, resident)
    ids = sites.index.to_numpy()
    # all-pairs lowest latency between candidate sites (the site count is small: tens)
    aa, bb = np.meshgrid(np.arange(S), np.arange(S), indexing="ij")
    site_routes = shortest_routes(net, ids[aa.ravel()], ids[bb.ravel()])
    lat_ss, arcs_flat = site_routes.latency_ms.reshape(S, S), site_routes.arcs
    options, counts = split_sets(jobs, sites["gpus_cap"].to_numpy(dtype=float), allowed, lat_ss,
                                 opts.split_sets_per_job, _split_ranking(net, opts, jobs, sites, arcs_flat))
    unplaceable = unplaceable_reasons(jobs, sites, resident,
                                      np.bincount(options["job"].to_numpy(), minlength=len(jobs)) > 0)
    options = _meeting_checkpoint_policy(net, jobs, options, sites)
    job = options["job"].to_numpy()
    n_sites = options["n_sites"].to_numpy()
    ring = options[list(SITE_COLUMNS)].to_numpy()
    n_opt = len(options)
    jc = jobs.iloc[job] if n_opt else jobs.iloc[:0]
    sync = _sync_gbps(jc, n_sites)
    ckpt_bytes = jc["checkpoint_bytes"].to_numpy(dtype=float)
    ckpt = np.where(ckpt_bytes > 0, checkpoint_replication_gbps(np.maximum(ckpt_bytes, 0.0),
                                                                jc["checkpoint_interval_s"].to_numpy(dtype=float)), 0.0)
    target, ckpt_routes, ckpt_row, ckpt_unmet = _checkpoint_targets(net, jobs, options, sites)
    ck = ckpt_row >= 0
    ckpt = np.where(ck, ckpt, 0.0)
    options = options.assign(sync_gbps=sync, checkpoint_gbps=ckpt, checkpoint_site=target, checkpoint_route=ckpt_row,
                             checkpoint_unmet=ckpt_unmet)
    # option arcs: sync on each ring edge x -> y (pair row x * S + y), checkpoint from a to its target
    e_opt, e_from, e_to = ring_edges(ring, n_sites)
    pick = sp.csr_matrix((sync[e_opt], (e_opt, e_from * S + e_to)), shape=(n_opt, S * S))
    option_arcs = (pick @ arcs_flat).tocsr() if n_opt else sp.csr_matrix((0, n_arcs))
    if ckpt_routes is not None and ck.any():
        pick = sp.csr_matrix((ckpt[ck], (np.flatnonzero(ck), ckpt_row[ck])), shape=(n_opt, len(ckpt_routes.src)))
        option_arcs = (option_arcs + pick @ ckpt_routes.arcs).tocsr()
    gpus_each = jc["gpus"].to_numpy(dtype=float) / np.maximum(n_sites, 1)
    og_cols, og_rows = np.nonzero(ring >= 0)  # (option, site) of each site of each option
    og_rows = ring[og_cols, og_rows]
    option_gpus = sp.csr_matrix((gpus_each[og_cols], (og_rows, og_cols)), shape=(S, n_opt))
    reads, read_arcs, replicas, replica_arcs, home_routes = _reads(net, jobs, datasets, sites, options, og_rows,
                                                                   og_cols, gpus_each)
    storage = sites["storage_pb"].to_numpy(dtype=float) if "storage_pb" in sites else np.zeros(S)
    homed = np.zeros(S)
    for d, homes in zip(datasets.index, datasets["home_sites"], strict=True):  # one row per dataset
        homed += sites.index.isin(homes) * float(datasets.at[d, "size_pb"])
    growth = dataset_replication_gbps(datasets["growth_pb_per_year"].to_numpy(dtype=float))
    return JobInputs(jobs, options, option_gpus.tocsr(), option_arcs, reads, read_arcs,
                     datasets.assign(growth_gbps=growth)[["size_pb", "growth_gbps"]], replicas, replica_arcs,
                     np.maximum(storage - homed, 0.0), site_routes, home_routes, ckpt_routes, allowed,
                     split_notes(jobs, counts, opts.split_sets_per_job), unplaceable)


def _reads(net: Network, jobs: pd.DataFrame, datasets: pd.DataFrame, sites: pd.DataFrame, options: pd.DataFrame,
           og_site: np.ndarray, og_option: np.ndarray, gpus_each: np.ndarray
           ) -> tuple[pd.DataFrame, sp.csr_matrix, pd.DataFrame, sp.csr_matrix, Routes | None]:
    """Remote dataset reads of every (option, site, dataset) and the candidate replicas that remove them.

    A read comes from the dataset's home site (any site of the network) nearest the job's site by backbone
    latency; a (dataset, site) pair no home can reach gets no read row and its options are dropped by the caller
    (``reads["reachable"]``)."""
    S, n_arcs = len(sites), 2 * len(net.links)
    D = len(datasets)
    empty = (pd.DataFrame({"option": np.zeros(0, int), "site": np.zeros(0, int), "dataset": np.zeros(0, int),
                           "gbps": np.zeros(0), "replica": np.zeros(0, int), "reachable": np.zeros(0, bool),
                           "home": np.zeros(0, int)}),
             sp.csr_matrix((0, n_arcs)),
             pd.DataFrame({"dataset": np.zeros(0, int), "site": np.zeros(0, int), "cost_usd": np.zeros(0),
                           "home": np.zeros(0, int)}),
             sp.csr_matrix((0, n_arcs)), None)
    if D == 0 or len(options) == 0:
        return empty
    homes = pd.Index(sorted({h for hs in datasets["home_sites"] for h in hs}))
    H = len(homes)
    hh, ss = np.meshgrid(np.arange(H), np.arange(S), indexing="ij")
    routes = shortest_routes(net, homes.to_numpy()[hh.ravel()], sites.index.to_numpy()[ss.ravel()])
    lat_hs, arcs_flat = routes.latency_ms.reshape(H, S), routes.arcs
    # the model's rule (backbone.workload_traffic): the nearest home by geodesic distance, ties to the first listed
    nearest, first = np.zeros((D, S), int), np.zeros(D, int)
    lon, lat = net.sites["lon"], net.sites["lat"]
    s_lon, s_lat = sites["lon"].to_numpy(dtype=float), sites["lat"].to_numpy(dtype=float)
    for i, hs in enumerate(datasets["home_sites"]):  # one row per dataset (a handful); vectorised over sites
        hs = list(hs)
        km = geodesic_km(lon[hs].to_numpy(dtype=float)[:, None], lat[hs].to_numpy(dtype=float)[:, None],
                         s_lon[None, :], s_lat[None, :])
        nearest[i] = homes.get_indexer(np.asarray(hs)[km.argmin(axis=0)])
        first[i] = homes.get_loc(hs[0])
    reachable = np.isfinite(lat_hs[nearest, np.arange(S)[None, :]])
    local = sites.index.to_numpy()[None, :] == homes.to_numpy()[nearest]
    pos = {d: i for i, d in enumerate(datasets.index)}
    ds_of_job = jobs["datasets"].to_numpy()
    job = options["job"].to_numpy()[og_option]
    counts = np.array([len(ds_of_job[j]) for j in job], dtype=int)
    q_option = np.repeat(og_option, counts)
    q_site = np.repeat(og_site, counts)
    q_dataset = np.array([pos[d] for j in job for d in ds_of_job[j]], dtype=int)
    q_gpus = np.repeat(gpus_each[og_option], counts)
    remote = ~local[q_dataset, q_site]
    q_option, q_site, q_dataset, q_gpus = q_option[remote], q_site[remote], q_dataset[remote], q_gpus[remote]
    rate = datasets["read_gbps_per_1000_gpus"].to_numpy(dtype=float)[q_dataset]
    gbps = dataset_read_gbps(q_gpus, rate)
    # candidate replicas: each (dataset, site) some read would come to
    pairs = np.unique(np.stack([q_dataset, q_site], axis=1), axis=0) if len(q_site) else np.zeros((0, 2), int)
    r_d, r_s = pairs[:, 0], pairs[:, 1]
    cost_pb = sites["storage_cost_usd_per_pb"].to_numpy(dtype=float) if "storage_cost_usd_per_pb" in sites \
        else np.zeros(S)
    replicas = pd.DataFrame({"dataset": r_d, "site": r_s,
                             "cost_usd": datasets["size_pb"].to_numpy(dtype=float)[r_d] * cost_pb[r_s]})
    replica_of = pd.Series(np.arange(len(pairs)), index=pd.MultiIndex.from_arrays([r_d, r_s]))
    q_replica = replica_of.reindex(pd.MultiIndex.from_arrays([q_dataset, q_site])).to_numpy(dtype=int)
    reads = pd.DataFrame({"option": q_option, "site": q_site, "dataset": q_dataset, "gbps": gbps,
                          "replica": q_replica, "reachable": reachable[q_dataset, q_site],
                          "home": nearest[q_dataset, q_site]})
    replicas["home"] = first[r_d]  # growth comes from the dataset's first home
    path_row = nearest[q_dataset, q_site] * S + q_site
    read_arcs = (sp.csr_matrix((np.ones(len(reads)), (np.arange(len(reads)), path_row)),
                               shape=(len(reads), H * S)) @ arcs_flat).tocsr()
    growth = dataset_replication_gbps(datasets["growth_pb_per_year"].to_numpy(dtype=float))[r_d]
    rep_row = first[r_d] * S + r_s
    replica_arcs = (sp.csr_matrix((growth, (np.arange(len(pairs)), rep_row)), shape=(len(pairs), H * S))
                    @ arcs_flat).tocsr()
    return reads, read_arcs, replicas, replica_arcs, routes
