"""Synthetic backbones for benchmarks and scale tests (deterministic for a given seed).

:func:`synthetic_backbone` places ``n_sites`` sites around real metro anchors on five
continents, meshes them with a planar-ish graph of average degree ~3.5 (spherical Delaunay
triangulation, thinned to its minimum spanning tree plus the shortest remaining edges), marks
inter-region edges as submarine, and adds an all-pairs gravity demand. Link latency and length
come from geography (the model's own derivation: geodesic x route factor, fibre group delay).

It serves the benchmarks and the scale tests only, so it lives here, not in the installed package; tests import
it as ``benchmarks.synthetic`` (``python -m pytest`` from the repository root).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial import ConvexHull

from backbone import geo
from backbone.model import Network

logger = logging.getLogger(__name__)

# (name, lon, lat, region, weight): anchor metros; sites scatter around them by weight
ANCHORS: tuple[tuple[str, float, float, str, float], ...] = (
    ("NYC", -74.0, 40.7, "NA", 3.0), ("WDC", -77.0, 38.9, "NA", 2.0), ("CHI", -87.6, 41.9, "NA", 2.0),
    ("DAL", -96.8, 32.8, "NA", 2.0), ("LAX", -118.2, 34.1, "NA", 2.0), ("SJC", -121.9, 37.3, "NA", 2.5),
    ("SEA", -122.3, 47.6, "NA", 1.5), ("ATL", -84.4, 33.7, "NA", 1.5), ("DEN", -105.0, 39.7, "NA", 1.0),
    ("TOR", -79.4, 43.7, "NA", 1.0), ("MIA", -80.2, 25.8, "NA", 1.0),
    ("SAO", -46.6, -23.5, "LATAM", 1.5), ("MEX", -99.1, 19.4, "LATAM", 1.0), ("BOG", -74.1, 4.7, "LATAM", 0.7),
    ("SCL", -70.7, -33.4, "LATAM", 0.7), ("BUE", -58.4, -34.6, "LATAM", 0.7),
    ("LON", -0.1, 51.5, "EMEA", 2.5), ("AMS", 4.9, 52.4, "EMEA", 2.0), ("FRA", 8.7, 50.1, "EMEA", 2.0),
    ("PAR", 2.35, 48.86, "EMEA", 1.5), ("MAD", -3.7, 40.4, "EMEA", 1.0), ("MIL", 9.2, 45.5, "EMEA", 1.0),
    ("STO", 18.1, 59.3, "EMEA", 0.8), ("WAW", 21.0, 52.2, "EMEA", 0.8), ("DUB", -6.3, 53.3, "EMEA", 1.0),
    ("MRS", 5.4, 43.3, "EMEA", 0.8), ("DXB", 55.3, 25.2, "EMEA", 1.0), ("TLV", 34.8, 32.1, "EMEA", 0.6),
    ("JNB", 28.0, -26.2, "AFRICA", 0.8), ("LOS", 3.4, 6.5, "AFRICA", 0.6), ("CAI", 31.2, 30.0, "AFRICA", 0.6),
    ("NBO", 36.8, -1.3, "AFRICA", 0.5), ("CPT", 18.4, -33.9, "AFRICA", 0.4),
    ("TYO", 139.7, 35.7, "APAC", 2.5), ("OSA", 135.5, 34.7, "APAC", 1.0), ("SEL", 127.0, 37.6, "APAC", 1.5),
    ("HKG", 114.2, 22.3, "APAC", 1.5), ("SIN", 103.8, 1.35, "APAC", 2.0), ("SYD", 151.2, -33.9, "APAC", 1.2),
    ("MEL", 145.0, -37.8, "APAC", 0.7), ("BOM", 72.9, 19.1, "APAC", 1.2), ("MAA", 80.3, 13.1, "APAC", 0.7),
    ("TPE", 121.5, 25.0, "APAC", 0.8), ("JKT", 106.8, -6.2, "APAC", 0.7), ("MNL", 121.0, 14.6, "APAC", 0.5),
)


def _unit_vectors(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    lo, la = np.radians(lon), np.radians(lat)
    return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=1)


def synthetic_backbone(n_sites: int, seed: int = 0, degree: float = 3.5, demand_pairs: str = "all",
                       total_demand_gbps: float | None = None) -> Network:
    """A deterministic synthetic global backbone.

    Parameters
    ----------
    n_sites
        Number of sites (>= 3).
    seed
        Random seed; the same seed gives the same network.
    degree
        Target average site degree (the mesh keeps at least a spanning tree).
    demand_pairs
        ``"all"``: one demand per ordered site pair (gravity volumes); ``"none"``: no demand.
    total_demand_gbps
        Total demand; default: 20 % of the total link capacity.

    Returns
    -------
    Network
        Built with :meth:`Network.from_tables` (trusted tables; derived link columns filled).
    """
    if n_sites < 3:
        raise ValueError("a synthetic backbone needs at least 3 sites")
    rng = np.random.default_rng(seed)
    w = np.array([a[4] for a in ANCHORS])
    anchor = rng.choice(len(ANCHORS), size=n_sites, p=w / w.sum())
    anchor[: min(n_sites, len(ANCHORS))] = np.arange(min(n_sites, len(ANCHORS)))  # every anchor once first
    a_lon = np.array([a[1] for a in ANCHORS])[anchor]
    a_lat = np.array([a[2] for a in ANCHORS])[anchor]
    spread = np.where(np.arange(n_sites) < len(ANCHORS), 0.0, 2.5)  # degrees of scatter around the metro
    lon = np.round(np.clip(a_lon + rng.normal(0, 1, n_sites) * spread, -179.9, 179.9), 4)
    lat = np.round(np.clip(a_lat + rng.normal(0, 1, n_sites) * spread * 0.7, -85, 85), 4)
    region = np.array([a[3] for a in ANCHORS])[anchor]
    site_ids = [f"{ANCHORS[a][0].lower()}-{i:03d}" for i, a in enumerate(anchor)]
    kinds = np.where(rng.random(n_sites) < 0.3, "datacenter", "pop")
    gpus_max = np.where(kinds == "datacenter", rng.integers(2, 20, n_sites) * 1000, 0)
    sites = pd.DataFrame({
        "id": site_ids, "name": site_ids, "lon": lon, "lat": lat, "region": region,
        "metro": [ANCHORS[a][0].lower() for a in anchor], "kind": kinds,
        "gpus_installed": (gpus_max * rng.uniform(0.2, 0.6, n_sites)).astype(np.int64), "gpus_max": gpus_max,
        "power_available_mw": gpus_max * 0.0012, "power_max_mw": gpus_max * 0.0015,
    })
    # spherical Delaunay: the convex hull of the points on the unit sphere (jitter avoids coplanarity)
    xyz = _unit_vectors(lon, lat) + rng.normal(0, 1e-7, (n_sites, 3))
    hull = ConvexHull(xyz)
    tri = hull.simplices
    e = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    e = np.unique(np.sort(e, axis=1), axis=0)
    km = geo.geodesic_km(lon[e[:, 0]], lat[e[:, 0]], lon[e[:, 1]], lat[e[:, 1]])
    # long inter-region edges cost more (ocean crossings are rarer than land links)
    cross = region[e[:, 0]] != region[e[:, 1]]
    score = km * np.where(cross, 2.0, 1.0)
    graph = sp.csr_matrix((score + 1e-6, (e[:, 0], e[:, 1])), shape=(n_sites, n_sites))
    mst = minimum_spanning_tree(graph).tocoo()
    in_tree = set(zip(np.minimum(mst.row, mst.col).tolist(), np.maximum(mst.row, mst.col).tolist(), strict=True))
    tree = np.array([(a, b) in in_tree for a, b in e.tolist()])
    n_target = max(round(n_sites * degree / 2), int(tree.sum()))
    extra = np.flatnonzero(~tree)[np.argsort(score[~tree], kind="stable")][: n_target - int(tree.sum())]
    keep = np.sort(np.concatenate([np.flatnonzero(tree), extra]))
    e, km, cross = e[keep], km[keep], cross[keep]
    cap = np.where(cross, 4_000.0, rng.choice([4_000.0, 8_000.0, 12_800.0], len(e)))
    link_ids = [f"{site_ids[a]}--{site_ids[b]}" for a, b in e.tolist()]
    links = pd.DataFrame({
        "id": link_ids, "name": link_ids, "site_a": [site_ids[a] for a in e[:, 0]],
        "site_b": [site_ids[b] for b in e[:, 1]], "kind": np.where(cross, "submarine", "terrestrial"),
        "cable_system": [f"SYN-{i}" if c else "" for i, c in enumerate(cross)], "capacity_gbps": cap,
    })
    demands = None
    if demand_pairs == "all":
        src, dst = np.nonzero(~np.eye(n_sites, dtype=bool))
        mass = rng.lognormal(0, 0.7, n_sites) * np.where(kinds == "datacenter", 3.0, 1.0)
        dist = geo.geodesic_km(lon[src], lat[src], lon[dst], lat[dst])
        vol = mass[src] * mass[dst] / (1.0 + dist / 2000.0)
        total = 0.2 * float(cap.sum()) if total_demand_gbps is None else total_demand_gbps
        vol = np.round(vol / vol.sum() * total, 3)
        classes = np.array(["training", "inference", "replication", "bulk"])[rng.integers(0, 4, len(src))]
        slo = np.where(classes == "inference", np.round(2 * geo.latency_ms(dist * 1.5) + 40.0, 1), np.nan)
        demands = pd.DataFrame({
            "id": [f"d{i}" for i in range(len(src))], "src": np.asarray(site_ids)[src],
            "dst": np.asarray(site_ids)[dst], "demand_gbps": vol, "traffic_class": classes, "slo_rtt_ms": slo,
        })
    net = Network.from_tables({"sites": sites, "links": links, "demands": demands}, name=f"synthetic-{n_sites}",
                              meta={"description": f"synthetic backbone, {n_sites} sites, seed {seed}"})
    logger.info("synthetic backbone: %d sites, %d links", n_sites, len(links))
    return net
