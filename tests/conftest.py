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
