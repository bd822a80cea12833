"""What ``backbone workloads`` shows: a scenario's training jobs and datasets and the backbone traffic they create.

:func:`summarise_workloads` is the one function behind the CLI command and the facade's ``workloads(net)``: the
jobs (GPUs, method, sites, datasets), the datasets (PB, homes, residency, the jobs that read them), storage, and the
demands of :func:`backbone.workload_traffic.workload_demands` totalled by class and by job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from backbone.schema import TRAFFIC_CLASSES
from backbone.serialize import json_safe
from backbone.tables import table_records
from backbone.workload_traffic import checkpoint_bytes, job_placements, workload_demands

if TYPE_CHECKING:
    from backbone.model import Network

__all__ = ["WORKLOAD_CLASSES", "WorkloadSummary", "summarise_workloads"]

WORKLOAD_CLASSES: tuple[str, ...] = tuple(c for c in TRAFFIC_CLASSES
                                          if c in ("checkpoint", "training-sync", "dataset", "replication"))
"""The traffic classes workload flows use, in :data:`backbone.schema.TRAFFIC_CLASSES` priority order."""


@dataclass(frozen=True)
class WorkloadSummary:
    """A scenario's workloads and their backbone traffic (:func:`summarise_workloads`).

    Attributes
    ----------
    jobs
        One row per training job (index ``id``): ``name``, ``gpus``, ``sync_method``, ``sites`` (where it runs; empty
        when placement decides), ``placed``, ``max_sites``, ``datasets``, ``start``, ``end``, ``parameters``,
        ``checkpoint_tb`` (given or derived) and ``backbone_gbps`` (its demands' total).
    datasets
        One row per dataset (index ``id``): ``name``, ``size_pb``, ``home_sites``, ``residency``, ``stored_pb``
        (size x replicas), ``read_gbps_per_1000_gpus``, ``growth_pb_per_year``, ``read_by`` (job ids).
    demands
        The workload demands (:func:`backbone.workload_traffic.workload_demands`).
    by_class
        Index ``traffic_class`` (every class of :data:`WORKLOAD_CLASSES`): ``demands``, ``gbps``.
    by_job
        Index ``job`` (placed jobs, then ``""`` for dataset growth): one Gbps column per class and ``total``.
    storage_pb
        Storage installed at all sites (``sites.storage_pb``), PB.
    """

    scenario: str
    jobs: pd.DataFrame
    datasets: pd.DataFrame
    demands: pd.DataFrame
    by_class: pd.DataFrame
    by_job: pd.DataFrame
    storage_pb: float

    @property
    def total_gbps(self) -> float:
        """Backbone Gbps of every workload demand."""
        return float(self.demands["demand_gbps"].sum())

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``backbone workloads --json``): NaN as null, id lists as lists."""
        return json_safe({
            "scenario": self.scenario,
            "jobs": table_records(self.jobs), "datasets": table_records(self.datasets),
            "jobs_placed": int(self.jobs["placed"].sum()), "jobs_not_placed": int((~self.jobs["placed"]).sum()),
            "gpus": int(self.jobs["gpus"].sum()), "gpus_placed": int(self.jobs.loc[self.jobs["placed"], "gpus"].sum()),
            "stored_pb": float(self.datasets["stored_pb"].sum()), "storage_pb": self.storage_pb,
            "total_gbps": self.total_gbps,
            "gbps_by_class": {str(c): float(v) for c, v in self.by_class["gbps"].items()},
            "gbps_by_job": [{"job": str(j), **{str(k): float(v) for k, v in row.items()}}
                            for j, row in self.by_job.iterrows()],
            "demands": table_records(self.demands),
        })


def summarise_workloads(net: Network, job_sites: Mapping[str, Sequence[str]] | None = None) -> WorkloadSummary:
    """The jobs, datasets and backbone traffic of a scenario's workloads, with jobs at ``job_sites`` (default: their
    pinned ``sites``; see :func:`backbone.workload_traffic.workload_demands`).

    Raises
    ------
    NotFoundError, ValidationError
        For unknown jobs or sites, or too many sites for a job, in ``job_sites``.

    Example
    -------
    >>> s = summarise_workloads(backbone.load_scenario())  # doctest: +SKIP
    >>> s.by_class["gbps"]  # doctest: +SKIP
    """
    demands = workload_demands(net, job_sites)
    placed = job_placements(net, job_sites)
    jobs_t = net.training_jobs
    sites_of = placed.groupby("job", sort=False)["site"].agg(tuple)
    per_job = demands[demands["job"] != ""].groupby("job")["demand_gbps"].sum()
    jobs = pd.DataFrame({
        "name": jobs_t["name"], "gpus": jobs_t["gpus"], "sync_method": jobs_t["sync_method"],
        "sites": [sites_of.get(j, ()) for j in jobs_t.index], "max_sites": jobs_t["max_sites"],
        "datasets": jobs_t["datasets"], "start": jobs_t["start"], "end": jobs_t["end"],
        "parameters": jobs_t["parameters"], "checkpoint_tb": checkpoint_bytes(jobs_t) / 1e12,
        "backbone_gbps": per_job.reindex(jobs_t.index, fill_value=0.0).astype(float),
    }, index=jobs_t.index)
    jobs.insert(4, "placed", jobs["sites"].map(len) > 0)
    ds = net.datasets
    readers = jobs_t["datasets"].explode().dropna()
    read_by = pd.Series(readers.index, index=readers.to_numpy()).groupby(level=0).agg(tuple)
    datasets = pd.DataFrame({
        "name": ds["name"], "size_pb": ds["size_pb"], "home_sites": ds["home_sites"], "residency": ds["residency"],
        "stored_pb": ds["size_pb"] * ds["home_sites"].map(len),
        "read_gbps_per_1000_gpus": ds["read_gbps_per_1000_gpus"], "growth_pb_per_year": ds["growth_pb_per_year"],
        "read_by": [read_by.get(d, ()) for d in ds.index],
    }, index=ds.index)
    by_class = demands.groupby("traffic_class")["demand_gbps"].agg(["size", "sum"]).rename(
        columns={"size": "demands", "sum": "gbps"}).reindex(list(WORKLOAD_CLASSES), fill_value=0)
    by_class.index.name = "traffic_class"
    by_class["gbps"] = by_class["gbps"].astype(float)
    by_job = demands.pivot_table(index="job", columns="traffic_class", values="demand_gbps", aggfunc="sum",
                                 fill_value=0.0).reindex(columns=list(WORKLOAD_CLASSES), fill_value=0.0)
    order = [j for j in jobs_t.index if j in by_job.index] + ([""] if "" in by_job.index else [])
    by_job = by_job.reindex(order).astype(float)
    by_job["total"] = by_job.sum(axis=1)
    by_job.columns.name = None
    return WorkloadSummary(net.name, jobs, datasets, demands, by_class, by_job, float(net.sites["storage_pb"].sum()))
