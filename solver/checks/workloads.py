"""Independent check of the training jobs, dataset replicas and workload flows of a placement, from its OUTPUT
TABLES, the network and the options alone.

Nothing here reuses the placement's job inputs or formulation: the jobs are read again from the scenario's
``training_jobs`` table and the options, each flow's Gbps is derived again from the workload formulas
(:mod:`backbone.workloads`, the documented model of each flow), nearest sites and path latencies come from a
networkx Dijkstra over the link table, and each flow's links are walked site by site.

Checked
-------
* jobs: each placed job's GPUs add up to its size, over at most ``min(max_sites, MAX_SPLIT_SITES)`` sites in equal
  shares (exactly its pinned sites when it has any), each an allowed site (candidate, the job's regions and pinned
  sites, every dataset's residency); every job placed when the plan claims to serve everything;
* rings: a split job's ``sites`` (``a+b+c``, the ring ``a -> b -> c -> a``) are the sites of its rows, and no other
  order of them makes a ring of less summed one-way latency (every order tried, on the checker's own Dijkstra
  latencies); its ``ring_latency_ms``, where reported, is that ring's;
* flows: exactly the flows the placement implies -- gradient sync from each site of a split job to the next of
  its ring, at :func:`~backbone.workloads.gradient_sync_gbps` with ``R`` its number of sites,
  checkpoints to the nearest storage site the replica policy names, dataset reads from the nearest home into each
  site without a home or new replica, growth replication from the first home to each new replica (nearest by
  geodesic distance, as the model's :mod:`backbone.workload_traffic` defines each flow's ends) -- each with the
  Gbps of its formula, on a contiguous path from its source to its destination of the lowest latency;
* storage: new replicas fit each site's free storage (``storage_pb`` less the datasets homed there).

:func:`check_workloads` also returns the flows' load per directed arc, for the network capacity check.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import permutations
from typing import Any, cast

import networkx as nx
import numpy as np
import pandas as pd

from backbone.geo import geodesic_km
from backbone.model import Network
from backbone.solver.placement.options import MAX_SPLIT_SITES, PlaceOptions
from backbone.workload_traffic import CHECKPOINT_BYTES_PER_PARAMETER
from backbone.workloads import (
    SyncMethod,
    checkpoint_replication_gbps,
    dataset_read_gbps,
    dataset_replication_gbps,
    gradient_sync_gbps,
)

__all__ = ["backbone_latency_ms", "check_workloads"]

ArcGbps = dict[tuple[str, str, str], float]
"""Gbps per (link, from site, to site)."""

Flow = tuple[str, str, str, str, float, tuple[str, ...]]
"""An expected flow: job, traffic class, dataset, destination, Gbps, the sources it may come from."""


@dataclass(frozen=True)
class JobToCheck:
    """A training job as the checker reads it again (the scenario's ``training_jobs`` row or the options' job):
    the fields the checks and the workload formulas use, with its checkpoint's bytes worked out."""

    gpus: int
    regions: tuple[str, ...]
    sites: tuple[str, ...]
    max_sites: int
    parameters: float
    bytes_per_parameter: float
    step_time_s: float
    sync_method: SyncMethod
    inner_steps: int
    fragments: int
    compression_bits: float
    """Bits per gradient value on the wire (NaN: uncompressed)."""
    datasets: tuple[str, ...]
    checkpoint_bytes: float
    checkpoint_interval_s: float
    checkpoint_replicas: str


def _job(fields: Mapping[str, Any], checkpoint_size_tb: float | None, compression_bits: float | None) -> JobToCheck:
    """One job from a table row or an options job (``fields``), its checkpoint TB and compression (None: not
    given)."""
    size = math.nan if checkpoint_size_tb is None else float(checkpoint_size_tb) * 1e12
    return JobToCheck(
        gpus=int(fields["gpus"]), regions=tuple(str(x) for x in fields["regions"]),
        sites=tuple(str(x) for x in fields["sites"]), max_sites=int(fields["max_sites"]),
        parameters=float(fields["parameters"]), bytes_per_parameter=float(fields["bytes_per_parameter"]),
        step_time_s=float(fields["step_time_s"]),
        sync_method=cast("SyncMethod", str(fields["sync_method"])),  # the table schema or the options model checked it
        inner_steps=int(fields["inner_steps"]), fragments=int(fields["fragments"]),
        compression_bits=math.nan if compression_bits is None else float(compression_bits),
        datasets=tuple(str(x) for x in fields["datasets"]),
        checkpoint_bytes=size if math.isfinite(size) else float(fields["parameters"]) * CHECKPOINT_BYTES_PER_PARAMETER,
        checkpoint_interval_s=float(fields["checkpoint_interval_s"]),
        checkpoint_replicas=str(fields["checkpoint_replicas"]))


def _jobs(net: Network, opts: PlaceOptions) -> dict[str, JobToCheck]:
    """Every job to place, read again from the scenario table and the options."""
    out: dict[str, JobToCheck] = {}
    if opts.scenario_jobs:
        for jid, r in net.training_jobs.iterrows():  # the checker reads record by record, on purpose
            out[str(jid)] = _job(r, float(r["checkpoint_size_tb"]), float(r["compression_bits"]))
    for j in opts.training:
        out[j.id] = _job(j.model_dump(), j.checkpoint_size_tb, j.compression_bits)
    return out


def backbone_latency_ms(net: Network, sources: list[str]) -> dict[str, dict[str, float]]:
    """Lowest one-way backbone latency (ms) from each source site to every site it reaches: networkx Dijkstra over
    the link table (the checkers' own shortest paths, not the solver's path search)."""
    g = nx.Graph()
    g.add_nodes_from(net.sites.index)
    for _lid, r in net.links.iterrows():
        a, b, w = r["site_a"], r["site_b"], float(r["latency_ms"])
        if not g.has_edge(a, b) or g[a][b]["weight"] > w:
            g.add_edge(a, b, weight=w)
    return {s: nx.single_source_dijkstra_path_length(g, s, weight="weight") for s in sources}


def _resident(net: Network, job: JobToCheck, datasets: pd.DataFrame, site: str) -> bool:
    """The site satisfies the residency of every dataset the job reads."""
    s = net.sites.loc[site]
    for d in job.datasets:
        res = tuple(datasets.at[d, "residency"])
        if res and s["region"] not in res and s["country"] not in res:
            return False
    return True


def _allowed(net: Network, job: JobToCheck, datasets: pd.DataFrame, site: str) -> bool:
    s = net.sites.loc[site]
    if job.regions and s["region"] not in job.regions:
        return False
    if job.sites and site not in job.sites:
        return False
    return _resident(net, job, datasets, site)


def _ring(jid: str, rows: pd.DataFrame, dist: dict[str, dict[str, float]], tol: float
          ) -> tuple[list[str], list[str]]:
    """The job's sites in its stated ring order, and the problems with that ring: the stated ``sites`` are not the
    rows' sites, or another order of them makes a ring of less summed one-way latency (every order tried), or the
    stated ``ring_latency_ms`` is not the ring's."""
    sites = [str(s) for s in rows["site"]]
    stated = str(rows["sites"].iloc[0]).split("+") if "sites" in rows else sites
    if sorted(stated) != sorted(sites):
        return sites, [f"training job {jid}: sites {'+'.join(stated)!r} are not the sites of its rows "
                       f"({', '.join(sorted(sites))})"]
    if len(stated) < 2:
        return stated, []

    def ring_ms(order: tuple[str, ...] | list[str]) -> float:
        return sum(dist.get(a, {}).get(b, math.inf) for a, b in zip(order, [*order[1:], order[0]], strict=True))

    mine = ring_ms(stated)
    best = min(ring_ms((stated[0], *p)) for p in permutations(stated[1:]))
    problems = []
    if mine > best * (1 + 1e-6) + 1e-9:
        problems.append(f"training job {jid}: its sync ring {'+'.join(stated)} is {mine:.3f} ms, another order of "
                        f"its sites makes a ring of {best:.3f} ms")
    if "ring_latency_ms" in rows and abs(float(rows["ring_latency_ms"].iloc[0]) - mine) > tol * max(1.0, mine):
        problems.append(f"training job {jid}: ring_latency_ms {float(rows['ring_latency_ms'].iloc[0]):.3f}, its "
                        f"ring {'+'.join(stated)} is {mine:.3f} ms")
    return stated, problems


def _sync_flows(jid: str, job: JobToCheck, ring: list[str]) -> list[Flow]:
    """Gradient sync of a job over ``ring``: each site sends the formula's Gbps (``R`` = its sites) to the next."""
    if len(ring) < 2 or job.parameters <= 0:
        return []
    bits = job.compression_bits
    g = float(gradient_sync_gbps(job.parameters, job.bytes_per_parameter, job.step_time_s, len(ring),
                                 method=job.sync_method, inner_steps=job.inner_steps,
                                 fragments=job.fragments, compression_bits=None if not math.isfinite(bits) else bits))
    return [(jid, "training-sync", "", ring[(i + 1) % len(ring)], g, (ring[i],)) for i in range(len(ring))]


def _expected_flows(net: Network, jobs: dict[str, JobToCheck], training: pd.DataFrame,
                    replicas: pd.DataFrame, datasets: pd.DataFrame, dist: dict[str, dict[str, float]], tol: float
                    ) -> tuple[list[Flow], list[str]]:
    """The flows the placement implies: (job, class, dataset, dst, Gbps, allowed sources), and problems."""
    out: list[Flow] = []
    problems: list[str] = []
    replica_at = {(str(r.dataset), str(r.site)) for r in replicas.itertuples(index=False)}
    region = net.sites["region"].astype(str).to_dict()

    lon, lat = net.sites["lon"].astype(float), net.sites["lat"].astype(float)

    def nearest(src: str, targets: list[str]) -> tuple[str, ...]:
        """The targets at the least geodesic distance from ``src`` (the model's rule for a flow's far end)."""
        far = {t: float(geodesic_km(lon[src], lat[src], lon[t], lat[t])) for t in targets}
        best = min(far.values(), default=math.inf)
        return tuple(t for t, v in far.items() if math.isfinite(best) and v <= best + 1e-6)

    for jid, rows in training.groupby("job"):
        job = jobs[str(jid)]
        sites = [str(s) for s in rows["site"]]
        ring, ring_problems = _ring(str(jid), rows, dist, tol)
        problems += ring_problems
        out += _sync_flows(str(jid), job, ring)
        first = ring[0]
        policy = job.checkpoint_replicas
        if policy != "none" and job.checkpoint_bytes > 0:
            stores = [str(x) for x in net.sites.index[net.sites["storage_pb"] > 0]] or \
                [str(x) for x in net.sites.index]
            targets = [c for c in stores if c not in sites and (
                (policy == "other-region") == (region[c] != region[first]))
                and _resident(net, job, datasets, c)]
            best = nearest(first, targets)
            problems += _policy_flag_problems(str(jid), rows, bool(best))
            at_first = rows.loc[rows["site"].astype(str) == first, "checkpoint_site"]  # the ring's first site's row
            stated = str(at_first.iloc[0]) if len(at_first) else ""
            if best and stated not in best:
                problems.append(f"training job {jid}: checkpoints go to {stated!r}, not to the nearest {policy} "
                                f"site ({', '.join(best)})")
            if best:
                g = float(checkpoint_replication_gbps(job.checkpoint_bytes, job.checkpoint_interval_s))
                out.append((str(jid), "checkpoint", "", stated, g, (first,)))
        for site, gpus in zip(sites, rows["gpus"].astype(float), strict=True):
            for d in job.datasets:
                homes = [str(h) for h in datasets.at[d, "home_sites"]]
                if site in homes or (d, site) in replica_at:
                    continue
                g = float(dataset_read_gbps(gpus, datasets.at[d, "read_gbps_per_1000_gpus"]))
                best = nearest(site, homes)
                if g > 0:
                    out.append((str(jid), "dataset", d, site, g, best))
    for r in replicas.itertuples(index=False):
        g = float(dataset_replication_gbps(datasets.at[r.dataset, "growth_pb_per_year"]))
        homes = [str(h) for h in datasets.at[r.dataset, "home_sites"]]
        if g > 0:
            out.append(("", "replication", str(r.dataset), str(r.site), g, (homes[0],)))
    return out, problems


def _policy_flag_problems(jid: str, rows: pd.DataFrame, has_site: bool) -> list[str]:
    """The job's ``checkpoint_policy_met`` says what the checker finds: false exactly when no storage site meets
    the policy and the residency (or, stated as the reason, the backbone reaches none); [] for tables without it."""
    if "checkpoint_policy_met" not in rows:
        return []
    met = bool(rows["checkpoint_policy_met"].iloc[0])
    note = str(rows["checkpoint_policy_note"].iloc[0] or "") if "checkpoint_policy_note" in rows else ""
    if met and not has_site:
        return [f"training job {jid}: checkpoint_policy_met is true, but no storage site meets its policy"]
    if not met and has_site and not note.startswith("no backbone path"):
        return [f"training job {jid}: checkpoint_policy_met is false ({note!r}), but a storage site meets its policy"]
    return []


def _walk(ends: dict[str, tuple[str, str]], start: str, links: list[str]) -> list[tuple[str, str, str]] | None:
    """(link, from, to) of each link walked from ``start``; None when not contiguous."""
    at, out = start, []
    for lid in links:
        if lid not in ends:
            return None
        a, b = ends[lid]
        if at not in (a, b):
            return None
        nxt = b if at == a else a
        out.append((lid, at, nxt))
        at = nxt
    return out


def check_workloads(net: Network, opts: PlaceOptions, tables: dict[str, pd.DataFrame], candidates: set[str],
                    expect_full: bool, tol: float) -> tuple[list[str], ArcGbps, int]:
    """Check the training, replica and workload-flow tables (see the module docstring).

    Returns the violations, the flows' Gbps per (link, from, to), and the number of jobs checked.
    """
    jobs = _jobs(net, opts)
    training = tables.get("training", pd.DataFrame({"job": [], "site": [], "gpus": []}))
    replicas = tables.get("replicas", pd.DataFrame({"dataset": [], "site": []}))
    flows = tables.get("workload_flows", pd.DataFrame({"job": [], "traffic_class": [], "dataset": [], "src": [],
                                                        "dst": [], "gbps": [], "links": []}))
    datasets = net.datasets
    out = _check_jobs(net, jobs, training, datasets, candidates, expect_full, tol)
    unknown = set(training["job"].astype(str)) - set(jobs) if len(training) else set()
    out += [f"training table: unknown job {j!r}" for j in sorted(unknown)]
    if unknown:
        return out, {}, len(jobs)
    ends = dict(zip(net.links.index.astype(str), zip(net.links["site_a"].astype(str), net.links["site_b"].astype(str),
                                                     strict=True), strict=True))
    dist = backbone_latency_ms(net, sorted(net.sites.index.astype(str))) if len(training) else {}
    expected, problems = _expected_flows(net, jobs, training, replicas, datasets, dist, tol)
    out += problems
    out += _storage(net, replicas, datasets, tol)
    want = Counter((j, c, d, dst) for j, c, d, dst, _g, _s in expected)
    got = Counter((str(r.job), str(r.traffic_class), str(r.dataset), str(r.dst)) for r in flows.itertuples())
    for key in sorted((want - got) + (got - want)):
        out.append(f"workload flow {key}: expected {want[key]}, reported {got[key]}")
    flow_out, load = _check_flows(net, flows, expected, dist, ends, tol)
    out += flow_out
    return out, load, len(jobs)


def _check_jobs(net: Network, jobs: dict[str, JobToCheck], training: pd.DataFrame, datasets: pd.DataFrame,
                candidates: set[str], expect_full: bool, tol: float) -> list[str]:
    """Each placed job: whole, in equal shares over at most ``min(max_sites, MAX_SPLIT_SITES)`` allowed sites (its
    pinned sites, all of them, when it has any)."""
    out: list[str] = []
    placed = training.groupby("job") if len(training) else None
    for jid, job in jobs.items():
        rows = placed.get_group(jid) if placed is not None and jid in placed.groups else training.iloc[:0]
        if len(rows) == 0:
            if expect_full:
                out.append(f"training job {jid}: not placed")
            continue
        n = len(rows)
        if n > min(int(job.max_sites), MAX_SPLIT_SITES):
            out.append(f"training job {jid}: spans {n} sites, more than min(max_sites {job.max_sites}, "
                       f"{MAX_SPLIT_SITES})")
        pinned = {str(x) for x in job.sites}
        if pinned and {str(x) for x in rows["site"]} != pinned:
            out.append(f"training job {jid}: runs at {sorted(rows['site'].astype(str))}, not at exactly its pinned "
                       f"sites {sorted(pinned)}")
        if abs(float(rows["gpus"].sum()) - float(job.gpus)) > tol * max(1.0, float(job.gpus)) or \
                not np.allclose(rows["gpus"].astype(float), float(job.gpus) / n):
            out.append(f"training job {jid}: GPUs {list(rows['gpus'])} do not split {job.gpus} evenly")
        for s in rows["site"]:
            if str(s) not in candidates or not _allowed(net, job, datasets, str(s)):
                out.append(f"training job {jid}: site {s} is not allowed")
    return out


def _check_flows(net: Network, flows: pd.DataFrame, expected: list[Flow],
                 dist: dict[str, dict[str, float]], ends: dict[str, tuple[str, str]], tol: float
                 ) -> tuple[list[str], ArcGbps]:
    """Each reported flow: its formula's Gbps, from an allowed (nearest) source, on a contiguous lowest-latency
    path; returns the problems and the flows' Gbps per arc."""
    out: list[str] = []
    load: ArcGbps = {}
    exp = {(j, c, d, dst): (gb, srcs) for j, c, d, dst, gb, srcs in expected}
    for r in flows.itertuples(index=False):
        key = (str(r.job), str(r.traffic_class), str(r.dataset), str(r.dst))
        if key not in exp:
            continue
        gbps, srcs = exp[key]
        if abs(float(r.gbps) - gbps) > tol * max(1.0, gbps):
            out.append(f"workload flow {key}: {float(r.gbps):,.4f} Gbps, the formula gives {gbps:,.4f}")
        if str(r.src) not in srcs:
            out.append(f"workload flow {key}: from {r.src}, not from the nearest source ({', '.join(srcs)})")
        links = [x for x in str(r.links).split(";") if x]
        walk = _walk(ends, str(r.src), links)
        if walk is None or (walk[-1][2] if walk else str(r.src)) != str(r.dst):
            out.append(f"workload flow {key}: links {links} are not a path {r.src} -> {r.dst}")
            continue
        lat = float(net.links.loc[links, "latency_ms"].sum()) if links else 0.0
        best = dist.get(str(r.src), {}).get(str(r.dst), math.inf)
        if lat > best * (1 + 1e-6) + 1e-9:
            out.append(f"workload flow {key}: path of {lat:.3f} ms, the lowest-latency path is {best:.3f} ms")
        for arc in walk:
            load[arc] = load.get(arc, 0.0) + float(r.gbps)
    return out, load


def _storage(net: Network, replicas: pd.DataFrame, datasets: pd.DataFrame, tol: float) -> list[str]:
    """New replicas fit each site's free storage."""
    if len(replicas) == 0:
        return []
    out = []
    size = datasets["size_pb"].astype(float)
    for site, rows in replicas.groupby("site"):
        homed = sum(float(size[d]) for d, hs in datasets["home_sites"].items() if site in hs)
        room = float(net.sites.at[site, "storage_pb"]) - homed
        need = float(size[rows["dataset"]].sum())
        if need > room + tol * max(1.0, room):
            out.append(f"site {site}: new replicas need {need:,.2f} PB, {room:,.2f} PB free")
    return out
