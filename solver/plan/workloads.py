"""The plan's hand-over of training workloads from placement to routing (issue #29).

After placement, the backbone carries what the placed training jobs and new dataset replicas make, as demands of
their own traffic classes, so that routing, the failure sweep, the survivable design and the report treat them like
any other demand:

* the placement's ``workload_flows`` (gradient sync, checkpoints, remote dataset reads), each flow's ends by the
  model's one rule (:mod:`backbone.workload_traffic`);
* dataset growth copied from each dataset's first home to its other homes, new replicas included
  (:func:`backbone.workload_traffic.workload_demands` with no job placed: growth does not depend on jobs).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from backbone.model import Network
from backbone.quarters import quarter_number
from backbone.workload_traffic import workload_demands

__all__ = ["WORKLOAD_DEMAND_PREFIX", "jobs_in_period", "network_with_replicas", "with_workload_demands",
           "workload_plan_demands"]

WORKLOAD_DEMAND_PREFIX = "work:"
"""The ids of the demands :func:`workload_plan_demands` makes start with this (the maps and report pick them out)."""


def jobs_in_period(net: Network, first_quarter: int, last_quarter: int) -> Network:
    """``net`` with only the training jobs running in the quarters ``first_quarter``..``last_quarter`` (absolute
    quarter numbers, :func:`backbone.quarters.quarter_number`): a job's ``start`` ('' = already running) to its
    ``end`` ('' = open) overlaps them."""
    jobs = net.training_jobs
    if len(jobs) == 0:
        return net
    start = _quarters(jobs["start"], -np.inf)
    end = _quarters(jobs["end"], np.inf)
    return replace(net, training_jobs=jobs[(start <= last_quarter) & (end >= first_quarter)])


def _quarters(labels: pd.Series, blank: float) -> np.ndarray:
    """Each label's quarter number (:func:`~backbone.quarters.quarter_number`, the model's one reading), ``blank``
    for an empty one."""
    text = labels.fillna("").astype(str).str.strip()
    return np.array([blank if not q else quarter_number(q) for q in text], dtype=float)  # one per job (tens)


def network_with_replicas(net: Network, replicas: pd.DataFrame) -> Network:
    """``net`` with the placement's new dataset replicas added to their datasets' ``home_sites``."""
    if len(replicas) == 0 or len(net.datasets) == 0:
        return net
    added = replicas.groupby("dataset")["site"].agg(tuple)
    homes = [tuple(h) + tuple(s for s in added.get(d, ()) if s not in h)
             for d, h in net.datasets["home_sites"].items()]
    return replace(net, datasets=net.datasets.assign(home_sites=homes))


def workload_plan_demands(net: Network, place_tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Demand rows (``src``, ``dst``, ``demand_gbps``, ``traffic_class``, ``slo_rtt_ms``; index ``id``) of the
    placed training jobs' flows and of every dataset's growth, on ``net`` with the new replicas
    (:func:`network_with_replicas`)."""
    cols = ["src", "dst", "demand_gbps", "traffic_class", "slo_rtt_ms"]
    flows = place_tables.get("workload_flows", pd.DataFrame(columns=["job", "dataset", "traffic_class", "src",
                                                                      "dst", "gbps"]))
    flows = flows[(flows["traffic_class"] != "replication") & (flows["gbps"] > 0)]
    agg = flows.groupby(["traffic_class", "src", "dst"], sort=True)["gbps"].sum().reset_index()
    placed = pd.DataFrame({"src": agg["src"].to_numpy(), "dst": agg["dst"].to_numpy(),
                           "demand_gbps": np.round(agg["gbps"].to_numpy(float), 6),
                           "traffic_class": agg["traffic_class"].to_numpy(), "slo_rtt_ms": np.nan},
                          index=pd.Index([f"{WORKLOAD_DEMAND_PREFIX}{c}:{s}>{d}" for c, s, d in
                                          zip(agg["traffic_class"], agg["src"], agg["dst"], strict=True)], name="id"))
    with_replicas = network_with_replicas(net, place_tables.get("replicas", pd.DataFrame()))
    growth = workload_demands(with_replicas, {str(j): [] for j in net.training_jobs.index})
    growth = growth[growth["traffic_class"] == "replication"][cols]
    growth.index = WORKLOAD_DEMAND_PREFIX + growth.index.astype(str)
    return pd.concat([placed[cols], growth]) if len(growth) else placed[cols]


def with_workload_demands(net: Network, place_tables: dict[str, pd.DataFrame], extra: pd.DataFrame
                          ) -> tuple[Network, pd.DataFrame]:
    """``net`` with the placement's new replicas (:func:`network_with_replicas`) and ``extra`` (the placement's
    inference demands) with the training workloads' demands (:func:`workload_plan_demands`) appended: what the plan
    and each roadmap period route when training jobs were placed."""
    work_demands = workload_plan_demands(net, place_tables)
    extra = pd.concat([extra, work_demands]) if len(work_demands) else extra
    return network_with_replicas(net, place_tables.get("replicas", pd.DataFrame())), extra
