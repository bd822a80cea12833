"""Training jobs and dataset replicas in the roadmap (issue #29 item 4): what each period's placement did with them.

Each period places the jobs running in it (:func:`backbone.solver.plan.workloads.jobs_in_period`). What the roadmap
carries from it:

* a dataset replica the placement builds in period ``t`` is a build (``action`` ``replica``: its storage capex is
  charged to period ``t``, online in ``t``) and a home of its dataset in the network from then on (the placement's
  ``with_workload_demands`` adds it to ``home_sites``), so later periods read the dataset there, count its PB
  against the site's storage, and neither buy it again nor pull the dataset over the backbone;
* each job running in the period is placed (its sites and GPUs) or unplaced, with the reason the placement's
  diagnosis gives (residency, power, GPUs) -- never dropped silently.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backbone.model import Network
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.placement.workloads import job_table
from backbone.solver.roadmap.records import JobUnplaced, PlacedJob, RoadmapBuild

__all__ = ["period_jobs", "replica_builds"]

NO_REASON = "the placement left it unplaced (its diagnosis names no limit)"
"""The reason given when the placement's diagnosis names neither the job nor a site it may use."""


def replica_builds(replicas: pd.DataFrame, label: str, t: int) -> list[RoadmapBuild]:
    """The builds rows of the new dataset replicas of period ``t`` (label ``label``): ``action`` ``replica``,
    ``site_a`` the site, ``site_b`` the dataset, ``cost_usd`` its storage capex, committed and online in ``t``
    (the placement buys storage with no lead time)."""
    if len(replicas) == 0:
        return []
    return [RoadmapBuild(id=f"replica:{d}:{s}", action="replica", site_a=str(s), site_b=str(d),
                         kind=f"dataset replica ({pb:,.1f} PB)", modules=0, added_gbps=0.0, gpus=0.0,
                         cost_usd=float(c), lead_time_quarters=0, committed=label, online=label,
                         committed_index=t, online_index=t, available_from="")
            for d, s, pb, c in zip(replicas["dataset"], replicas["site"], replicas["size_pb"].astype(float),
                                   replicas["cost_usd"].astype(float), strict=True)]  # the period's new replicas


def period_jobs(place_net: Network, place_opts: PlaceOptions, result: Any, budget_note: str = ""
                ) -> tuple[list[PlacedJob], list[JobUnplaced]]:
    """The period's training jobs, placed and unplaced.

    Parameters
    ----------
    place_net
        The network the period's placement saw (only the jobs running in the period).
    place_opts
        Its placement options (``scenario_jobs``, ``training``).
    result
        The :class:`~backbone.solver.placement.result.PlacementResult`.
    budget_note
        The period's GPU budget note: the reason of a job left out by the budget when the diagnosis names none.

    Returns
    -------
    tuple
        ``(placed, unplaced)``: :class:`~backbone.solver.roadmap.records.PlacedJob` records (``job``, ``sites``
        ``+``-joined, ``gpus``) and :class:`~backbone.solver.roadmap.records.JobUnplaced` records (``job``, ``gpus``,
        ``reason``: :func:`unplaced_reason`).
    """
    jobs = job_table(place_net, place_opts)
    if len(jobs) == 0:
        return [], []
    training = result.tables.get("training", pd.DataFrame({"job": [], "sites": [], "gpus": []}))
    by_job = training.groupby("job", sort=True).agg(sites=("sites", "first"), gpus=("gpus", "sum"))
    placed = [PlacedJob(job=str(j), sites=str(r["sites"]), gpus=float(r["gpus"])) for j, r in by_job.iterrows()]
    left = jobs[~jobs.index.isin(by_job.index)]
    reasons = [str(x) for x in result.infeasibility]
    unplaced = [JobUnplaced(job=str(j), gpus=float(r["gpus"]),
                            reason=unplaced_reason(str(j), allowed_sites(place_net, r), reasons, budget_note))
                for j, r in left.iterrows()]  # the period's unplaced jobs (a handful)
    return placed, unplaced


def allowed_sites(net: Network, job: pd.Series) -> list[str]:
    """The sites a job row of :func:`~backbone.solver.placement.workloads.job_table` may run at by its regions and
    pinned sites (every site when it names neither)."""
    sites = net.sites
    ok = sites["region"].isin(job["regions"]) if len(job["regions"]) else pd.Series(True, index=sites.index)
    if len(job["sites"]):
        ok &= sites.index.isin(job["sites"])
    return [str(s) for s in sites.index[ok.to_numpy()]]


def unplaced_reason(job: str, sites: list[str], reasons: list[str], budget_note: str = "") -> str:
    """Why ``job`` was left unplaced, from the placement's diagnosis ``reasons``: those about the job (``training job
    <id>: ...``), else the limits of the sites it may run at (``sites``: ``site <id> is at its power cap`` or GPU
    maximum), else the backbone's bottlenecks (``link ...``), else the budget note, else every reason."""
    for picked in ([r for r in reasons if r.startswith(f"training job {job}:")],
                   [r for r in reasons if any(r.startswith(f"site {s} ") for s in sites)],
                   [r for r in reasons if r.startswith("link ")]):
        if picked:
            return "; ".join(picked)
    if budget_note:
        return budget_note
    return "; ".join(reasons) if reasons else NO_REASON
