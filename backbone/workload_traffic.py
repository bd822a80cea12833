"""The backbone traffic of a scenario's training jobs and datasets, as demand rows (issue #29).

:func:`workload_demands` turns the ``training_jobs`` and ``datasets`` tables, and where each job runs, into demands
of the classes ``training-sync``, ``dataset``, ``checkpoint`` and ``replication``, each rate from one function of
:mod:`backbone.workloads`:

* **gradient synchronisation** (``training-sync``, flow ``gradient-sync``): a job over ``R >= 2`` sites runs a ring
  between them, its least-latency ring from its first listed site (:func:`backbone.workload_ring.ring_order`, the
  placement's rule too); each site sends :func:`~backbone.workloads.gradient_sync_gbps` to
  the next (``R`` demands; two sites give one demand each way);
* **dataset reads** (``dataset``, flow ``dataset-read``): each site of a job reads each of its datasets from the
  nearest home site (geodesic distance, :func:`backbone.geo.geodesic_km`) unless a replica sits at the site itself,
  at :func:`~backbone.workloads.dataset_read_gbps` for the GPUs at that site (a job's GPUs split evenly over its
  sites);
* **checkpoint replication** (``checkpoint``, flow ``checkpoint``): the job's first site copies each checkpoint
  (``checkpoint_size_tb``, or :func:`checkpoint_bytes` when empty) every ``checkpoint_interval_s`` to the nearest
  storage site (``storage_pb > 0``; any site when no site has storage) outside the job's own sites, in the first
  site's region (``same-region``) or in another region (``other-region``), within the residency of every dataset
  the job reads (:func:`checkpoint_residency`: a checkpoint is trained from that data); ``none`` copies nothing; at
  :func:`~backbone.workloads.checkpoint_replication_gbps`;
* **dataset growth** (``replication``, flow ``dataset-growth``): a dataset's first home site copies its growth to
  each other home site at :func:`~backbone.workloads.dataset_replication_gbps`. This flow does not depend on where
  jobs run.

:func:`without_workload_sites` keeps the tables valid when sites fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from backbone import geo
from backbone.errors import NotFoundError, Problem, ValidationError
from backbone.validate_workloads import dataset_allowed_sites
from backbone.workload_ring import ring_order
from backbone.workloads import (
    BITS_PER_BYTE,
    checkpoint_replication_gbps,
    dataset_read_gbps,
    dataset_replication_gbps,
    gradient_sync_gbps,
)

if TYPE_CHECKING:
    from backbone.model import Network

__all__ = ["CHECKPOINT_BYTES_PER_PARAMETER", "WORKLOAD_DEMAND_COLUMNS", "checkpoint_bytes", "checkpoint_residency",
           "job_placements", "without_workload_sites", "workload_demands"]

CHECKPOINT_BYTES_PER_PARAMETER = 14.0
"""Bytes a checkpoint holds per model parameter with mixed-precision Adam: BF16 weights (2) plus FP32 master weights
(4) and two FP32 Adam moments (4 + 4). The mixed-precision training recipe (FP16/BF16 weights with an FP32 master
copy) is Micikevicius et al., "Mixed Precision Training", ICLR 2018; the per-parameter accounting (2 + 4 + 4 + 4 =
14 bytes of model and optimiser state with Adam, before the 2-byte gradient) is Rajbhandari et al., "ZeRO: Memory
Optimizations Toward Training Trillion Parameter Models", SC 2020, section 3.1 (their K = 12 optimiser bytes
include the FP32 master weights)."""

WORKLOAD_DEMAND_COLUMNS: tuple[str, ...] = ("src", "dst", "demand_gbps", "traffic_class", "slo_rtt_ms", "job",
                                            "flow", "dataset")
"""Columns of :func:`workload_demands` (indexed by demand ``id``): the ``demands`` table's, then the job (empty for
dataset growth), the flow (``gradient-sync``, ``dataset-read``, ``checkpoint``, ``dataset-growth``) and the dataset
(empty for gradient sync and checkpoints)."""


def checkpoint_bytes(training_jobs: pd.DataFrame) -> pd.Series:
    """Bytes of one checkpoint per job: ``checkpoint_size_tb x 1e12``, or ``parameters x 14`` where the size is
    empty (:data:`CHECKPOINT_BYTES_PER_PARAMETER`).

    Example
    -------
    A 405e9-parameter model (Llama 3 405B) without a given size: 405e9 x 14 = 5.67e12 bytes (5.67 TB).
    """
    given = training_jobs["checkpoint_size_tb"].astype(float) * 1e12
    derived = training_jobs["parameters"].astype(float) * CHECKPOINT_BYTES_PER_PARAMETER
    return given.where(given.notna(), derived).rename("checkpoint_bytes")


def job_placements(net: Network, job_sites: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Where each placed job runs: one row per (job, site), in the order of the job's sync ring (its sites as given
    for one or two, else their least-latency ring from the first given site: :func:`backbone.workload_ring.ring_order`).

    A job in ``job_sites`` runs at the sites given there (an empty list: not placed); any other job at its pinned
    ``sites`` (none: not placed).

    Returns
    -------
    pandas.DataFrame
        Columns ``job``, ``site``, ``position`` (0 for the job's first site), ``sites`` (how many the job spans)
        and ``gpus`` (the job's GPUs split evenly over its sites).

    Raises
    ------
    NotFoundError
        For an unknown job or site id in ``job_sites``.
    ValidationError
        For a job given more sites than its ``max_sites``, or the same site twice.
    """
    jobs = net.training_jobs
    chosen = {str(j): tuple(str(s) for s in sites) for j, sites in (job_sites or {}).items()}
    unknown_jobs = sorted(set(chosen) - set(jobs.index))
    unknown_sites = sorted({s for sites in chosen.values() for s in sites} - set(net.sites.index))
    if unknown_jobs or unknown_sites:
        raise NotFoundError("; ".join(f"unknown {what} id(s): {', '.join(ids[:10])}" for what, ids in
                                      (("training job", unknown_jobs), ("site", unknown_sites)) if ids))
    sites = pd.Series([chosen.get(str(j), pinned) for j, pinned in jobs["sites"].items()], index=jobs.index,
                      dtype=object)
    count = sites.map(len)
    problems = [Problem(f"{count[j]} sites given but max_sites is {jobs.at[j, 'max_sites']}", table="training_jobs",
                        record=str(j), field="sites") for j in jobs.index[count > jobs["max_sites"]]]
    problems += [Problem("a site is given twice", table="training_jobs", record=str(j), field="sites")
                 for j in jobs.index[sites.map(lambda s: len(set(s))) != count]]
    if problems:
        raise ValidationError(problems)
    sites = sites.map(lambda ids: tuple(ring_order(net, ids)))  # a job per call (tens); one or two sites as given
    long = sites.rename("site").rename_axis("job").explode().dropna().reset_index()
    long["position"] = long.groupby("job").cumcount()
    long["sites"] = long["job"].map(count).astype(int)
    long["gpus"] = long["job"].map(jobs["gpus"]).astype(float) / long["sites"]
    return long[["job", "site", "position", "sites", "gpus"]]


def workload_demands(net: Network, job_sites: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Demands of the scenario's training jobs and datasets, for jobs placed at the given sites.

    See the module docstring for each flow and its rule; each rate is one function of :mod:`backbone.workloads`.

    Parameters
    ----------
    net
        The network (its ``training_jobs``, ``datasets`` and ``sites``).
    job_sites
        ``{job id: [site ids]}`` where jobs run; a job not listed runs at its pinned ``sites``, and a job with no
        sites is not placed and creates no demand (dataset growth does not depend on jobs).

    Returns
    -------
    pandas.DataFrame
        Indexed by demand ``id`` (``<job>/sync/<src>><dst>``, ``<job>/read/<dataset>/<src>><dst>``,
        ``<job>/checkpoint/<src>><dst>``, ``<dataset>/growth/<src>><dst>``), with the columns of
        :data:`WORKLOAD_DEMAND_COLUMNS`; zero-rate rows are left out. ``slo_rtt_ms`` is NaN (no latency SLO).

    Raises
    ------
    NotFoundError, ValidationError
        As :func:`job_placements`.

    Example
    -------
    >>> demands = workload_demands(net, {"frontier": ["ashburn", "dallas"]})  # doctest: +SKIP
    >>> demands.groupby("traffic_class")["demand_gbps"].sum()  # doctest: +SKIP
    """
    placed = job_placements(net, job_sites)
    parts = [_sync_rows(net, placed), _read_rows(net, placed), _checkpoint_rows(net, placed), _growth_rows(net)]
    out = pd.concat([p for p in parts if len(p)] or [_frame([])], ignore_index=True)
    out = out[out["demand_gbps"] > 0]
    out.index = pd.Index(out.pop("id").astype(str), name="id")
    out["slo_rtt_ms"] = np.nan
    return out[list(WORKLOAD_DEMAND_COLUMNS)]


def _frame(rows: list[pd.DataFrame] | list[dict[str, object]]) -> pd.DataFrame:
    cols = ["id", "src", "dst", "demand_gbps", "traffic_class", "job", "flow", "dataset"]
    return pd.DataFrame(rows, columns=cols)


def _rows(ids: pd.Series, src: pd.Series, dst: pd.Series, gbps: np.ndarray, traffic_class: str, job: pd.Series | str,
          flow: str, dataset: pd.Series | str) -> pd.DataFrame:
    """One block of demand rows (every argument aligned, or a scalar for the whole block)."""
    return pd.DataFrame({"id": ids.to_numpy(str), "src": src.to_numpy(str), "dst": dst.to_numpy(str),
                         "demand_gbps": np.asarray(gbps, dtype=float), "traffic_class": traffic_class,
                         "job": job if isinstance(job, str) else job.to_numpy(str), "flow": flow,
                         "dataset": dataset if isinstance(dataset, str) else dataset.to_numpy(str)})


def _sync_rows(net: Network, placed: pd.DataFrame) -> pd.DataFrame:
    """``training-sync``: each site of a multi-site job sends its ring share to the next site of the ring."""
    ring = placed[placed["sites"] >= 2].copy()
    if not len(ring):
        return _frame([])
    nxt = (ring["position"] + 1) % ring["sites"]
    first = ring.groupby("job")["site"].transform("first")
    ring["next"] = ring["site"].shift(-1).where(nxt > 0, first)
    jobs = net.training_jobs.loc[ring["job"]]
    gbps = np.zeros(len(ring))
    for method in jobs["sync_method"].unique():  # one vectorised call per method (a handful)
        m = (jobs["sync_method"] == method).to_numpy()
        j = jobs[m]
        bits = j["compression_bits"].to_numpy(float)
        plain = BITS_PER_BYTE * j["bytes_per_parameter"].to_numpy(float)
        gbps[m] = gradient_sync_gbps(j["parameters"], j["bytes_per_parameter"], j["step_time_s"],
                                     ring["sites"].to_numpy()[m], method=method, inner_steps=j["inner_steps"],
                                     fragments=j["fragments"], compression_bits=np.where(np.isnan(bits), plain, bits))
    ids = ring["job"] + "/sync/" + ring["site"] + ">" + ring["next"]
    return _rows(ids, ring["site"], ring["next"], gbps, "training-sync", ring["job"], "gradient-sync", "")



def _nearest(candidates: pd.DataFrame, key: list[str], site_col: str, target_col: str, net: Network) -> pd.DataFrame:
    """The row of ``candidates`` whose ``target_col`` site is nearest (geodesic) to its ``site_col`` site, per
    ``key``; ties go to the first listed."""
    lon, lat = net.sites["lon"], net.sites["lat"]
    km = geo.geodesic_km(candidates[site_col].map(lon).to_numpy(float), candidates[site_col].map(lat).to_numpy(float),
                         candidates[target_col].map(lon).to_numpy(float),
                         candidates[target_col].map(lat).to_numpy(float))
    ranked = candidates.assign(_km=km, _order=np.arange(len(candidates))).sort_values(["_km", "_order"], kind="stable")
    return ranked.groupby(key, sort=False).head(1).sort_values("_order").drop(columns=["_km", "_order"])


def _read_rows(net: Network, placed: pd.DataFrame) -> pd.DataFrame:
    """``dataset``: each job site reads each dataset from its nearest home site unless a replica is local."""
    ds = net.datasets
    reads = placed.assign(dataset=placed["job"].map(net.training_jobs["datasets"])).explode("dataset").dropna(
        subset=["dataset"])
    if not len(reads):
        return _frame([])
    homes = reads.assign(home=reads["dataset"].map(ds["home_sites"])).explode("home")
    local = (homes["home"] == homes["site"]).groupby([homes["job"], homes["site"], homes["dataset"]]).transform("any")
    remote = homes[~local.to_numpy()]
    if not len(remote):
        return _frame([])
    near = _nearest(remote, ["job", "site", "dataset"], "site", "home", net)
    gbps = dataset_read_gbps(near["gpus"].to_numpy(float), near["dataset"].map(ds["read_gbps_per_1000_gpus"]))
    ids = near["job"] + "/read/" + near["dataset"] + "/" + near["home"] + ">" + near["site"]
    return _rows(ids, near["home"], near["site"], gbps, "dataset", near["job"], "dataset-read", near["dataset"])


def checkpoint_residency(net: Network) -> pd.DataFrame:
    """Where each job's checkpoints may be copied: a boolean table (index: job ids, columns: site ids), true where
    the site satisfies the residency of every dataset the job reads (a checkpoint is trained from that data, so it
    stays where the data may; every site for a job reading no resident data)."""
    jobs, sites = net.training_jobs, net.sites
    out = pd.DataFrame(True, index=jobs.index, columns=sites.index)
    reads = jobs["datasets"].rename("dataset").rename_axis("job").explode().dropna()
    if len(reads):
        allowed = dataset_allowed_sites(net).loc[reads.to_numpy()].set_axis(reads.index)
        out = allowed.groupby(level=0).all().reindex(index=jobs.index, fill_value=True)
    return out


def _checkpoint_rows(net: Network, placed: pd.DataFrame) -> pd.DataFrame:
    """``checkpoint``: the job's first site copies each checkpoint to the nearest storage site per its policy."""
    jobs = net.training_jobs
    first = placed[placed["position"] == 0]
    first = first[first["job"].map(jobs["checkpoint_replicas"]) != "none"]
    if not len(first):
        return _frame([])
    sites = net.sites
    stores = sites.index[sites["storage_pb"] > 0] if (sites["storage_pb"] > 0).any() else sites.index
    pairs = first.merge(pd.DataFrame({"replica": stores}), how="cross")
    own = pairs.merge(placed[["job", "site"]].rename(columns={"site": "replica"}), how="left",
                      on=["job", "replica"], indicator=True)["_merge"].to_numpy() == "both"
    same = pairs["replica"].map(sites["region"]).to_numpy() == pairs["site"].map(sites["region"]).to_numpy()
    want_same = (pairs["job"].map(jobs["checkpoint_replicas"]) == "same-region").to_numpy()
    resident = checkpoint_residency(net).to_numpy()[jobs.index.get_indexer(pairs["job"]),
                                                    sites.index.get_indexer(pairs["replica"])]
    pairs = pairs[(same == want_same) & ~own & resident]
    if not len(pairs):
        return _frame([])
    near = _nearest(pairs, ["job"], "site", "replica", net)
    gbps = checkpoint_replication_gbps(near["job"].map(checkpoint_bytes(jobs)).to_numpy(float),
                                       near["job"].map(jobs["checkpoint_interval_s"]).to_numpy(float))
    ids = near["job"] + "/checkpoint/" + near["site"] + ">" + near["replica"]
    return _rows(ids, near["site"], near["replica"], gbps, "checkpoint", near["job"], "checkpoint", "")


def _growth_rows(net: Network) -> pd.DataFrame:
    """``replication``: a dataset's first home site copies its growth to each other home site."""
    ds = net.datasets[net.datasets["growth_pb_per_year"] > 0]
    homes = ds["home_sites"].rename("home").rename_axis("dataset").explode().dropna().reset_index()
    homes["first"] = homes.groupby("dataset")["home"].transform("first")
    homes = homes[homes["home"] != homes["first"]]
    if not len(homes):
        return _frame([])
    gbps = dataset_replication_gbps(homes["dataset"].map(ds["growth_pb_per_year"]).to_numpy(float))
    ids = homes["dataset"] + "/growth/" + homes["first"] + ">" + homes["home"]
    return _rows(ids, homes["first"], homes["home"], gbps, "replication", "", "dataset-growth", homes["dataset"])


def without_workload_sites(datasets: pd.DataFrame, training_jobs: pd.DataFrame, site_ids: Iterable[str]
                           ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The workload tables without the given sites: replicas and pinned job sites at them are dropped; a dataset
    left without any replica is dropped too, and the jobs forget it (its data is gone with the sites).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(datasets, training_jobs)``, the inputs themselves when nothing refers to the sites.
    """
    gone = set(site_ids)
    if not gone or (not len(datasets) and not len(training_jobs)):
        return datasets, training_jobs
    datasets = datasets.copy()
    datasets["home_sites"] = [tuple(s for s in homes if s not in gone) for homes in datasets["home_sites"]]
    lost = set(datasets.index[datasets["home_sites"].map(len) == 0])
    datasets = datasets[datasets["home_sites"].map(len) > 0]
    jobs = training_jobs.copy()
    jobs["sites"] = [tuple(s for s in sites if s not in gone) for sites in jobs["sites"]]
    jobs["datasets"] = [tuple(d for d in used if d not in lost) for used in jobs["datasets"]]
    return datasets, jobs
