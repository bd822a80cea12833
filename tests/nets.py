"""Hand-built test networks used by more than one test file (one definition each).

Plain functions returning a fresh validated :class:`Network`; ``tests/conftest.py`` wraps the common ones
as fixtures (``triangle``, ``submarine_cut``, ``small_world``). Import them as ``from tests.nets import ...``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backbone.model import Network
from backbone.validate import build_network


def make_network(sites: list[dict[str, Any]], links: list[dict[str, Any]], demands: list[dict[str, Any]] | None = None,
                 srlgs: list[dict[str, Any]] | None = None, metros: list[dict[str, Any]] | None = None,
                 name: str = "test", **meta: Any) -> Network:
    """Build a validated network from records (defaults fill the rest)."""
    return build_network({"sites": sites, "links": links, "demands": demands or [], "srlgs": srlgs or [],
                          "metros": metros or []}, name=name, meta=meta)


def site(i: str, lon: float, lat: float, region: str = "NA", **kw: Any) -> dict[str, Any]:
    """A site record in region ``region`` (other columns from ``kw``)."""
    return {"id": i, "name": i, "lon": lon, "lat": lat, "region": region, **kw}


def triangle_network() -> Network:
    """Three sites A-B-C, unit latencies; A->C demand 15 with capacity 10 per link.

    Direct A-C carries 10 at 1 ms; the rest goes A-B-C (2 ms). Min-MLU optimum: split so
    that the A-C load x and the A-B-C load 15-x give max(x, 15-x)/10 minimal -> 0.75.
    """
    sites = [site("A", 0, 0), site("B", 1, 1), site("C", 2, 0)]
    links = [
        {"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 10, "length_km": 100, "latency_ms": 1},
        {"id": "BC", "site_a": "B", "site_b": "C", "capacity_gbps": 10, "length_km": 100, "latency_ms": 1},
        {"id": "AC", "site_a": "A", "site_b": "C", "capacity_gbps": 10, "length_km": 100, "latency_ms": 1},
    ]
    demands = [{"id": "d1", "src": "A", "dst": "C", "demand_gbps": 15, "traffic_class": "bulk"}]
    srlgs = [{"id": "cut", "kind": "corridor", "links": "AC"}]
    return make_network(sites, links, demands, srlgs, name="triangle")


def submarine_cut_network() -> Network:
    """Two continents joined by two cables; one SRLG holds both (a corridor cut partitions them)."""
    sites = [site("NY", -74.0, 40.7), site("WDC", -77.0, 38.9), site("LON", -0.1, 51.5, "EMEA", country="GB"),
             site("PAR", 2.35, 48.86, "EMEA", country="FR")]
    links = [
        {"id": "ny-wdc", "site_a": "NY", "site_b": "WDC", "capacity_gbps": 1000},
        {"id": "lon-par", "site_a": "LON", "site_b": "PAR", "capacity_gbps": 1000},
        {"id": "tat-1", "site_a": "NY", "site_b": "LON", "kind": "submarine", "cable_system": "TAT",
         "capacity_gbps": 400, "waypoints": "-50 45; -20 50"},
        {"id": "tat-2", "site_a": "WDC", "site_b": "PAR", "kind": "submarine", "cable_system": "TAT2",
         "capacity_gbps": 400, "waypoints": "-60 40; -10 47"},
    ]
    srlgs = [{"id": "atlantic", "kind": "corridor", "links": "tat-1;tat-2"},
             {"id": "tat", "kind": "cable_system", "links": "tat-1"}]
    demands = [{"id": "ny-lon", "src": "NY", "dst": "LON", "demand_gbps": 300, "traffic_class": "inference",
                "slo_rtt_ms": 120},
               {"id": "wdc-par", "src": "WDC", "dst": "PAR", "demand_gbps": 300, "traffic_class": "bulk"}]
    return make_network(sites, links, demands, srlgs, name="submarine-cut")


def world_site(i: str, lon: float, lat: float, region: str, country: str, kind: str = "pop", **kw: object) -> dict:
    """A site of the small world (metro = its id for the six metro sites)."""
    metro = i if i in ("new-york", "los-angeles", "london", "frankfurt", "tokyo", "singapore") else ""
    return {"id": i, "name": i.title(), "lon": lon, "lat": lat, "region": region, "country": country,
            "metro": metro, "kind": kind, **kw}


def small_world_network() -> Network:
    """Eight sites on three continents, two transatlantic and two transpacific cables, metros
    with inference demand beyond the installed GPUs, and background traffic."""
    dc = {"kind": "datacenter", "gpus_max": 60000, "power_max_mw": 120.0}
    sites = [
        world_site("ashburn", -77.49, 39.04, "NA", "US", gpus_installed=4096, power_available_mw=10, **dc),
        world_site("new-york", -74.0, 40.71, "NA", "US"),
        world_site("los-angeles", -118.24, 34.05, "NA", "US"),
        world_site("london", -0.13, 51.51, "EMEA", "GB", gpus_installed=2048, power_available_mw=5, **dc),
        world_site("frankfurt", 8.68, 50.11, "EMEA", "DE", gpus_installed=2048, power_available_mw=5, **dc),
        world_site("tokyo", 139.69, 35.69, "APAC", "JP", gpus_installed=2048, power_available_mw=5, **dc),
        world_site("singapore", 103.82, 1.35, "APAC", "SG", gpus_installed=1024, power_available_mw=3, **dc),
        world_site("seattle", -122.33, 47.61, "NA", "US"),
    ]
    t = {"kind": "terrestrial", "capacity_gbps": 4000}
    links = [
        {"id": "ash-nyc", "site_a": "ashburn", "site_b": "new-york", **t},
        {"id": "ash-lax", "site_a": "ashburn", "site_b": "los-angeles", **t},
        {"id": "lax-sea", "site_a": "los-angeles", "site_b": "seattle", **t},
        {"id": "nyc-sea", "site_a": "new-york", "site_b": "seattle", **t},
        {"id": "lon-fra", "site_a": "london", "site_b": "frankfurt", **t},
        {"id": "tyo-sin-1", "site_a": "tokyo", "site_b": "singapore", "kind": "submarine", "cable_system": "APG",
         "capacity_gbps": 1200, "waypoints": "125 25; 112 10"},
        {"id": "nyc-lon-1", "site_a": "new-york", "site_b": "london", "kind": "submarine", "cable_system": "TAT-A",
         "capacity_gbps": 1200, "waypoints": "-50 44; -20 50"},
        {"id": "ash-fra-1", "site_a": "ashburn", "site_b": "frankfurt", "kind": "submarine", "cable_system": "TAT-B",
         "capacity_gbps": 800, "waypoints": "-60 38; -10 45; -2 47"},
        {"id": "lax-tyo-1", "site_a": "los-angeles", "site_b": "tokyo", "kind": "submarine", "cable_system": "PAC-A",
         "capacity_gbps": 1200, "waypoints": "-150 33; 170 34"},
        {"id": "sea-tyo-1", "site_a": "seattle", "site_b": "tokyo", "kind": "submarine", "cable_system": "PAC-B",
         "capacity_gbps": 800, "waypoints": "-160 48; 165 42"},
        {"id": "fra-sin-1", "site_a": "frankfurt", "site_b": "singapore", "kind": "submarine",
         "cable_system": "SMW", "capacity_gbps": 600, "waypoints": "10 40; 32 31; 38 20; 60 15; 80 5"},
    ]
    srlgs = [
        {"id": "tat-a", "name": "TAT-A", "kind": "cable_system", "links": "nyc-lon-1"},
        {"id": "tat-b", "name": "TAT-B", "kind": "cable_system", "links": "ash-fra-1"},
        {"id": "pac-a", "name": "PAC-A", "kind": "cable_system", "links": "lax-tyo-1"},
        {"id": "pac-b", "name": "PAC-B", "kind": "cable_system", "links": "sea-tyo-1"},
        {"id": "smw", "name": "SMW", "kind": "cable_system", "links": "fra-sin-1"},
        {"id": "apg", "name": "APG", "kind": "cable_system", "links": "tyo-sin-1"},
        {"id": "atlantic", "name": "North Atlantic", "kind": "corridor", "links": "nyc-lon-1;ash-fra-1"},
    ]
    metros = [
        {"id": m, "name": m.title(), "lon": lon, "lat": lat, "region": r, "country": c, "population_m": p,
         "inference_gpus": g, "interactive_share": 0.6}
        for m, lon, lat, r, c, p, g in [
            ("new-york", -74.0, 40.71, "NA", "US", 19.0, 9000.0), ("los-angeles", -118.24, 34.05, "NA", "US", 13.0, 6000.0),
            ("london", -0.13, 51.51, "EMEA", "GB", 9.0, 5000.0), ("frankfurt", 8.68, 50.11, "EMEA", "DE", 2.0, 3000.0),
            ("tokyo", 139.69, 35.69, "APAC", "JP", 37.0, 8000.0), ("singapore", 103.82, 1.35, "APAC", "SG", 6.0, 3000.0),
        ]]
    demands = [
        {"id": "trn-ash-fra", "src": "ashburn", "dst": "frankfurt", "demand_gbps": 300, "traffic_class": "training"},
        {"id": "rep-lon-nyc", "src": "london", "dst": "new-york", "demand_gbps": 400, "traffic_class": "replication"},
        {"id": "inf-tyo-lax", "src": "tokyo", "dst": "los-angeles", "demand_gbps": 300, "traffic_class": "inference",
         "slo_rtt_ms": 150},
        {"id": "bulk-sin-fra", "src": "singapore", "dst": "frankfurt", "demand_gbps": 200, "traffic_class": "bulk"},
    ]
    return make_network(sites, links, demands, srlgs, metros, name="small-world")


def te_link(i: str, a: str, b: str, cap: float, lat: float) -> dict[str, Any]:
    """A link record with latency ``lat`` ms (100 km per ms)."""
    return {"id": i, "site_a": a, "site_b": b, "capacity_gbps": cap, "length_km": 100 * lat, "latency_ms": lat}


def grid(n: int = 3, seed: int = 7) -> Network:
    """An n x n grid with uneven capacities/latencies and a handful of demands."""
    rng = np.random.default_rng(seed)
    sites = [site(f"s{r}{c}", c, r) for r in range(n) for c in range(n)]
    links = []
    for r in range(n):
        for c in range(n):
            if c + 1 < n:
                links.append(te_link(f"h{r}{c}", f"s{r}{c}", f"s{r}{c + 1}", float(rng.integers(5, 20)),
                                   float(rng.uniform(1, 3))))
            if r + 1 < n:
                links.append(te_link(f"v{r}{c}", f"s{r}{c}", f"s{r + 1}{c}", float(rng.integers(5, 20)),
                                   float(rng.uniform(1, 3))))
    ids = [s["id"] for s in sites]
    demands = []
    for i in range(12):
        a, b = rng.choice(len(ids), 2, replace=False)
        demands.append({"id": f"d{i}", "src": ids[a], "dst": ids[b], "demand_gbps": float(rng.integers(2, 12)),
                        "traffic_class": ["training", "inference", "replication", "bulk"][i % 4]})
    return make_network(sites, links, demands, name="grid")


def europe(cap_gbps: float = 1000.0, demand_gpus: float = 1000.0, demands: list[dict[str, Any]] | None = None,
           par: dict[str, Any] | None = None, metros: list[dict[str, Any]] | None = None,
           extra_sites: list[dict[str, Any]] | None = None, extra_links: list[dict[str, Any]] | None = None) -> Network:
    """PAR (France, capex 40k/GPU) and LON (UK, 30k/GPU) joined by one link; the Paris metro sits
    on PAR (zero access distance) with all-interactive demand (50 ms RTT SLO)."""
    common = dict(kind="datacenter", region="EMEA", gpus_max=5000, power_available_mw=10, power_max_mw=20,
                  power_price_usd_per_mwh=100)
    sites = [dict(id="PAR", lon=2.35, lat=48.86, country="FR", capex_per_gpu_usd=40_000, **common),
             dict(id="LON", lon=-0.13, lat=51.51, country="GB", capex_per_gpu_usd=30_000, **common)]
    sites[0].update(par or {})
    sites += extra_sites or []
    links = [dict(id="par-lon", site_a="PAR", site_b="LON", capacity_gbps=cap_gbps), *(extra_links or [])]
    metros = metros or [dict(id="paris", lon=2.35, lat=48.86, region="EMEA", country="FR",
                             inference_gpus=demand_gpus, interactive_share=1.0)]
    return make_network(sites, links, demands=demands, metros=metros, name="europe")


def pacific_network() -> Network:
    """Sites around the Pacific and Atlantic; three cables cross the antimeridian."""
    sites = [
        site("LAX", -118.24, 34.05, "NA", name="Los Angeles", kind="landing"),
        site("SEA", -122.33, 47.61, "NA", name="Seattle"),
        site("DFW", -96.8, 32.78, "NA", name="Dallas DC", kind="datacenter", gpus_installed=20000,
              power_available_mw=60),
        site("IAD", -77.49, 39.04, "NA", name="Ashburn DC", kind="datacenter", gpus_installed=50000,
              power_available_mw=150),
        site("NYC", -74.0, 40.7, "NA", name="New York"),
        site("LON", -0.12, 51.5, "EMEA", name="London", kind="datacenter", gpus_installed=15000),
        site("FRA", 8.68, 50.11, "EMEA", name="Frankfurt"),
        site("TYO", 139.69, 35.68, "APAC", name="Tokyo", kind="datacenter", gpus_installed=30000),
        site("SIN", 103.82, 1.35, "APAC", name="Singapore", kind="datacenter", gpus_installed=10000),
        site("SYD", 151.21, -33.87, "APAC", name="Sydney", kind="landing"),
        site("HNL", -157.86, 21.31, "NA", name="Honolulu", kind="landing"),
    ]

    def link(i: str, a: str, b: str, cap: float, **kw: Any) -> dict[str, Any]:
        return {"id": i, "site_a": a, "site_b": b, "capacity_gbps": cap, **kw}

    links = [
        link("lax-sea", "LAX", "SEA", 4000), link("lax-dfw", "LAX", "DFW", 8000), link("dfw-iad", "DFW", "IAD", 12000),
        link("iad-nyc", "IAD", "NYC", 16000), link("lon-fra", "LON", "FRA", 10000),
        link("nyc-lon", "NYC", "LON", 3200, kind="submarine", cable_system="Atlantic-1", waypoints="-50 44; -20 50"),
        link("lax-tyo", "LAX", "TYO", 2400, kind="submarine", cable_system="Pacific-1", waypoints="-150 35; 170 38"),
        link("sea-tyo", "SEA", "TYO", 1600, kind="submarine", cable_system="Pacific-2"),
        link("lax-hnl", "LAX", "HNL", 800, kind="submarine", cable_system="Hawaii-1"),
        link("hnl-syd", "HNL", "SYD", 800, kind="submarine", cable_system="Southern-X", waypoints="-178 -18"),
        link("tyo-sin", "TYO", "SIN", 2000, kind="submarine", cable_system="APG", waypoints="125 20; 110 10"),
        link("sin-fra", "SIN", "FRA", 600, kind="submarine", cable_system="SMW",
             waypoints="95 5; 75 8; 55 13; 43 12; 33 28; 20 35; 10 40"),
    ]
    metros = [{"id": "m-sf", "name": "San Francisco", "lon": -122.42, "lat": 37.77, "region": "NA", "population_m": 7},
              {"id": "m-osa", "name": "Osaka", "lon": 135.5, "lat": 34.69, "region": "APAC", "population_m": 19}]
    demands = [{"id": "d1", "src": "DFW", "dst": "TYO", "demand_gbps": 500},
               {"id": "d2", "src": "IAD", "dst": "LON", "demand_gbps": 900}]
    return make_network(sites, links, demands, metros=metros, name="pacific-test")


def lead_toy(rfs: str = "", module_gbps: float = 100, max_modules: int = 2) -> Network:
    """A-B over one link in SRLG s1; candidate C1 (lead time 2 quarters) is its only protection."""
    sites = [{"id": "A", "lon": 0.0, "lat": 0.0, "region": "NA", "kind": "datacenter"},
             {"id": "B", "lon": 2.0, "lat": 0.0, "region": "NA"}]
    links = [{"id": "L1", "site_a": "A", "site_b": "B", "capacity_gbps": 100, "module_gbps": 100,
              "module_cost_usd": 1e6, "max_capacity_gbps": 400}]
    cands = [{"id": "C1", "site_a": "A", "site_b": "B", "kind": "terrestrial", "link_kind": "terrestrial",
              "waypoints": "1 0.5", "module_gbps": module_gbps, "module_cost_usd": 2e6, "fixed_cost_usd": 5e6,
              "max_modules": max_modules, "lead_time_quarters": 2, "available_from": rfs}]
    demands = [{"id": "d1", "src": "A", "dst": "B", "demand_gbps": 50, "traffic_class": "bulk"}]
    srlgs = [{"id": "s1", "kind": "conduit", "links": "L1"}]
    return build_network({"sites": sites, "links": links, "demands": demands, "srlgs": srlgs, "metros": [],
                          "candidates": cands}, name="lead-toy")


def random_connected(rng: np.random.Generator, n: int, m: int) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """``n`` sites on a line (ids ``s0``..) and ``m`` distinct site-index pairs, sorted, that connect them: a random
    spanning tree (each site ``i`` joined to an earlier one) plus random extra pairs."""
    sites = [{"id": f"s{i}", "lon": float(i), "lat": 0.0, "region": "NA"} for i in range(n)]
    edges = {(int(rng.integers(0, i)), i) for i in range(1, n)}
    while len(edges) < m:
        a, b = sorted(rng.choice(n, 2, replace=False).tolist())
        edges.add((a, b))
    return sites, sorted(edges)


ALL_PATHS_K = 64
"""More than the loopless paths of any pair of the random networks below (at most 8 sites)."""


def random_te_net(seed: int, n: int = 7, m: int = 12, slo: bool = False, tight: float = 1.0) -> Network:
    """A connected random graph with parallel links, random capacities and all-pairs random demand."""
    rng = np.random.default_rng(seed)
    sites, edges = random_connected(rng, n, m)
    edge_list = [*edges, edges[0]]  # one parallel link
    links = [{"id": f"l{j}", "site_a": f"s{a}", "site_b": f"s{b}", "capacity_gbps": float(rng.integers(50, 200)),
              "latency_ms": float(rng.integers(1, 6))} for j, (a, b) in enumerate(edge_list)]
    demands = []
    for i in range(n):
        for j in range(n):
            if i != j and rng.random() < 0.8:
                d = {"id": f"d{i}-{j}", "src": f"s{i}", "dst": f"s{j}", "traffic_class": "bulk",
                     "demand_gbps": float(rng.uniform(1, 40)) * tight}
                if slo and rng.random() < 0.3:
                    d["slo_rtt_ms"] = 2.0 * float(rng.integers(4, 12))
                    d["traffic_class"] = "inference"
                demands.append(d)
    return make_network(sites, links, demands, name=f"random-te-{seed}")


def pendant_chain_net(seed: int) -> Network:
    """A random core with chains of transit sites, transit leaves and pendant demand sites hanging off it."""
    rng = np.random.default_rng(seed)
    core = random_te_net(seed, n=6, m=9)
    sites = [dict(id=str(i), lon=0.0, lat=0.0, region="NA") for i in core.sites.index]
    links = [{"id": str(j), "site_a": r.site_a, "site_b": r.site_b, "capacity_gbps": r.capacity_gbps,
              "latency_ms": r.latency_ms} for j, r in core.links.iterrows()]
    demands = [{"id": str(i), "src": r.src, "dst": r.dst, "traffic_class": "bulk", "demand_gbps": r.demand_gbps}
               for i, r in core.demands.iterrows()]
    names = list(core.sites.index)
    for c in range(4):  # chains of 1-3 transit sites between two core sites
        a, b = rng.choice(names, 2, replace=False).tolist()
        prev = a
        for t in range(int(rng.integers(1, 4))):
            sites.append({"id": f"c{c}-{t}", "lon": 0.0, "lat": 0.0, "region": "NA"})
            links.append({"id": f"lc{c}-{t}", "site_a": prev, "site_b": f"c{c}-{t}",
                          "capacity_gbps": float(rng.integers(50, 200)), "latency_ms": 1.0})
            prev = f"c{c}-{t}"
        links.append({"id": f"lc{c}-end", "site_a": prev, "site_b": b, "capacity_gbps": float(rng.integers(50, 200)),
                      "latency_ms": 1.0})
    for p in range(3):  # pendant demand sites (one behind another for p == 2) and a transit leaf
        host = names[p] if p < 2 else "p1"
        sites.append({"id": f"p{p}", "lon": 0.0, "lat": 0.0, "region": "NA"})
        links.append({"id": f"lp{p}", "site_a": host, "site_b": f"p{p}", "capacity_gbps": float(rng.integers(60, 300)),
                      "latency_ms": 1.0})
        for other in names[2:5]:
            demands.append({"id": f"dp{p}-{other}", "src": f"p{p}", "dst": other, "traffic_class": "bulk",
                            "demand_gbps": float(rng.uniform(1, 30))})
            demands.append({"id": f"dq{p}-{other}", "src": other, "dst": f"p{p}", "traffic_class": "bulk",
                            "demand_gbps": float(rng.uniform(1, 30))})
    sites.append({"id": "leaf", "lon": 0.0, "lat": 0.0, "region": "NA"})
    links.append({"id": "lleaf", "site_a": names[3], "site_b": "leaf", "capacity_gbps": 10.0, "latency_ms": 1.0})
    return make_network(sites, links, demands, name=f"pendant-chain-{seed}")


def fan_network(demand_gbps: float = 35.0) -> Network:
    """A direct A-D link (30 Gbps, 1 ms) and three two-hop routes A-B-D, A-C-D, A-E-D (10 Gbps each, 2, 3 and
    4 ms); ``demand_gbps`` A->D.

    With A-D cut, every path together carries 30 Gbps (unmet ``demand - 30``); a routing over the k shortest
    paths carries only ``10 k`` (k = 2: 20 Gbps). Each of the others cut leaves A-D plus two routes: 50 Gbps.
    """
    sites = [site("A", 0, 0), site("B", 1, 1), site("C", 1, 0), site("E", 1, -1), site("D", 2, 0)]
    links = [te_link("AD", "A", "D", 30, 1), te_link("AB", "A", "B", 10, 1), te_link("BD", "B", "D", 10, 1),
             te_link("AC", "A", "C", 10, 1.5), te_link("CD", "C", "D", 10, 1.5), te_link("AE", "A", "E", 10, 2),
             te_link("ED", "E", "D", 10, 2)]
    demands = [{"id": "a-d", "src": "A", "dst": "D", "demand_gbps": demand_gbps, "traffic_class": "bulk"}]
    return make_network(sites, links, demands, name="fan")


def workload_network() -> Network:
    """Five sites on three continents with two datasets and three training jobs (issue #29's tables).

    ``web`` (40 PB) sits in Ashburn and Frankfurt, anywhere allowed; ``eu-health`` (2 PB) in Frankfurt and London,
    residency DE;FR;GB. ``frontier`` (16,384 GPUs, 405e9 parameters) runs data-parallel over Ashburn and Dallas
    reading ``web``; ``tune`` (512 GPUs) runs in London reading ``eu-health``; ``later`` (1,024 GPUs, 2027Q3-2028Q2)
    is not placed yet.
    """
    sites = [world_site("ash", -77.49, 39.04, "NA", "US", "datacenter", storage_pb=200, storage_cost_usd_per_pb=2e6),
             world_site("dfw", -96.8, 32.78, "NA", "US", "datacenter", storage_pb=50, storage_cost_usd_per_pb=2e6),
             world_site("lon", -0.13, 51.51, "EMEA", "GB", "datacenter", storage_pb=20),
             world_site("fra", 8.68, 50.11, "EMEA", "DE", "datacenter", storage_pb=100),
             world_site("bom", 72.88, 19.08, "APAC", "IN", "datacenter", storage_pb=10)]
    links = [{"id": "ash-dfw", "site_a": "ash", "site_b": "dfw", "capacity_gbps": 4000},
             {"id": "ash-lon", "site_a": "ash", "site_b": "lon", "kind": "submarine", "capacity_gbps": 2000},
             {"id": "lon-fra", "site_a": "lon", "site_b": "fra", "capacity_gbps": 4000},
             {"id": "fra-bom", "site_a": "fra", "site_b": "bom", "kind": "submarine", "capacity_gbps": 1000}]
    datasets = [{"id": "web", "size_pb": 40, "home_sites": "ash;fra", "read_gbps_per_1000_gpus": 10,
                 "growth_pb_per_year": 5},
                {"id": "eu-health", "size_pb": 2, "home_sites": "fra;lon", "residency": "DE;FR;GB",
                 "read_gbps_per_1000_gpus": 2}]
    jobs = [{"id": "frontier", "gpus": 16384, "parameters": 405e9, "step_time_s": 5.0, "datasets": "web",
             "max_sites": 2, "sites": "ash;dfw", "regions": "NA"},
            {"id": "tune", "gpus": 512, "parameters": 8e9, "step_time_s": 1.0, "datasets": "eu-health",
             "sites": "lon", "checkpoint_replicas": "same-region"},
            {"id": "later", "gpus": 1024, "parameters": 70e9, "step_time_s": 2.0, "sync_method": "diloco",
             "inner_steps": 500, "start": "2027Q3", "end": "2028Q2", "max_sites": 2}]
    return build_network({"sites": sites, "links": links, "datasets": datasets, "training_jobs": jobs},
                         name="workloads")


def two_oceans_network(demands: list[dict[str, Any]] | None = None) -> Network:
    """NA (New York, Washington, Los Angeles), EMEA (London, Paris, Marseille) and APAC (Tokyo, Singapore).

    ``tat-2`` is listed Paris -> Washington (its a -> b runs west), ``tpc`` Los Angeles -> Tokyo (west across the
    antimeridian), ``sin-mrs`` Singapore -> Marseille (west). Corridor SRLGs: ``atlantic`` (both transatlantic
    cables) and ``red-sea`` (Singapore-Marseille); ``tat`` is a cable system, not a corridor. Used for the corridor
    views (``tests/backbone/test_corridors.py``) and, with ``demands``, the routed Gbps per corridor and class."""
    sites = [site("ny", -74.0, 40.7), site("wdc", -77.0, 38.9), site("la", -118.2, 34.0),
             site("lon", -0.1, 51.5, "EMEA", country="GB"), site("par", 2.35, 48.86, "EMEA", country="FR"),
             site("mrs", 5.37, 43.3, "EMEA", country="FR"), site("tyo", 139.7, 35.7, "APAC", country="JP"),
             site("sin", 103.8, 1.35, "APAC", country="SG")]
    links = [{"id": "ny-wdc", "site_a": "ny", "site_b": "wdc", "capacity_gbps": 1000},
             {"id": "wdc-la", "site_a": "wdc", "site_b": "la", "capacity_gbps": 1000},
             {"id": "lon-par", "site_a": "lon", "site_b": "par", "capacity_gbps": 1000},
             {"id": "par-mrs", "site_a": "par", "site_b": "mrs", "capacity_gbps": 1000},
             {"id": "tat-1", "site_a": "ny", "site_b": "lon", "kind": "submarine", "capacity_gbps": 400},
             {"id": "tat-2", "site_a": "par", "site_b": "wdc", "kind": "submarine", "capacity_gbps": 400},
             {"id": "tpc", "site_a": "la", "site_b": "tyo", "kind": "submarine", "capacity_gbps": 300},
             {"id": "tyo-sin", "site_a": "tyo", "site_b": "sin", "kind": "submarine", "capacity_gbps": 200},
             {"id": "sin-mrs", "site_a": "sin", "site_b": "mrs", "kind": "submarine", "capacity_gbps": 100}]
    srlgs = [{"id": "atlantic", "name": "North Atlantic", "kind": "corridor", "links": "tat-1;tat-2"},
             {"id": "red-sea", "name": "Red Sea", "kind": "corridor", "links": "sin-mrs"},
             {"id": "tat", "kind": "cable_system", "links": "tat-1"}]
    return make_network(sites, links, demands, srlgs=srlgs, name="two-oceans")
