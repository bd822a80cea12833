"""Shared fixtures: small hand-built networks and the shipped scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backbone.model import Network
from backbone.validate import build_network

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance"


def conformance_dir() -> Path:
    """../shared/conformance, or skip the calling test with a clear reason."""
    if not CONFORMANCE.exists():
        pytest.skip(f"conformance data not present at {CONFORMANCE}")
    return CONFORMANCE


def make_network(sites: list[dict[str, Any]], links: list[dict[str, Any]], demands: list[dict[str, Any]] | None = None,
                 srlgs: list[dict[str, Any]] | None = None, metros: list[dict[str, Any]] | None = None,
                 name: str = "test", **meta: Any) -> Network:
    """Build a validated network from records (defaults fill the rest)."""
    return build_network({"sites": sites, "links": links, "demands": demands or [], "srlgs": srlgs or [],
                          "metros": metros or []}, name=name, meta=meta)


def _site(i: str, lon: float, lat: float, region: str = "NA", **kw: Any) -> dict[str, Any]:
    return {"id": i, "name": i, "lon": lon, "lat": lat, "region": region, **kw}


@pytest.fixture
def triangle() -> Network:
    """Three sites A-B-C, unit latencies; A->C demand 15 with capacity 10 per link.

    Direct A-C carries 10 at 1 ms; the rest goes A-B-C (2 ms). Min-MLU optimum: split so
    that the A-C load x and the A-B-C load 15-x give max(x, 15-x)/10 minimal -> 0.75.
    """
    sites = [_site("A", 0, 0), _site("B", 1, 1), _site("C", 2, 0)]
    links = [
        {"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 10, "length_km": 100, "latency_ms": 1},
        {"id": "BC", "site_a": "B", "site_b": "C", "capacity_gbps": 10, "length_km": 100, "latency_ms": 1},
        {"id": "AC", "site_a": "A", "site_b": "C", "capacity_gbps": 10, "length_km": 100, "latency_ms": 1},
    ]
    demands = [{"id": "d1", "src": "A", "dst": "C", "demand_gbps": 15, "traffic_class": "bulk"}]
    srlgs = [{"id": "cut", "kind": "corridor", "links": "AC"}]
    return make_network(sites, links, demands, srlgs, name="triangle")


@pytest.fixture
def submarine_cut() -> Network:
    """Two continents joined by two cables; one SRLG holds both (a corridor cut partitions them)."""
    sites = [_site("NY", -74.0, 40.7), _site("WDC", -77.0, 38.9), _site("LON", -0.1, 51.5, "EMEA", country="GB"),
             _site("PAR", 2.35, 48.86, "EMEA", country="FR")]
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


def _world_site(i: str, lon: float, lat: float, region: str, country: str, kind: str = "pop", **kw: object) -> dict:
    metro = i if i in ("new-york", "los-angeles", "london", "frankfurt", "tokyo", "singapore") else ""
    return {"id": i, "name": i.title(), "lon": lon, "lat": lat, "region": region, "country": country,
            "metro": metro, "kind": kind, **kw}


def small_world_network() -> Network:
    """Eight sites on three continents, two transatlantic and two transpacific cables, metros
    with inference demand beyond the installed GPUs, and background traffic."""
    dc = {"kind": "datacenter", "gpus_max": 60000, "power_max_mw": 120.0}
    sites = [
        _world_site("ashburn", -77.49, 39.04, "NA", "US", gpus_installed=4096, power_available_mw=10, **dc),
        _world_site("new-york", -74.0, 40.71, "NA", "US"),
        _world_site("los-angeles", -118.24, 34.05, "NA", "US"),
        _world_site("london", -0.13, 51.51, "EMEA", "GB", gpus_installed=2048, power_available_mw=5, **dc),
        _world_site("frankfurt", 8.68, 50.11, "EMEA", "DE", gpus_installed=2048, power_available_mw=5, **dc),
        _world_site("tokyo", 139.69, 35.69, "APAC", "JP", gpus_installed=2048, power_available_mw=5, **dc),
        _world_site("singapore", 103.82, 1.35, "APAC", "SG", gpus_installed=1024, power_available_mw=3, **dc),
        _world_site("seattle", -122.33, 47.61, "NA", "US"),
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
