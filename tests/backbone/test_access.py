"""The one access rule (:mod:`backbone.access`): a site in the metro (PoP, then data center, then landing,
nearest first), else the nearest site; used alike by the demand generator and the placement."""

from __future__ import annotations

import pytest

from backbone import geo
from backbone.access import access_sites
from backbone.demand import home_sites
from backbone.model import Network
from tests.nets import make_network


def _net() -> Network:
    sites = [
        {"id": "lan", "lon": 0.0, "lat": 0.0, "region": "EMEA", "kind": "landing", "metro": "m"},
        {"id": "dc-far", "lon": 0.5, "lat": 0.0, "region": "EMEA", "kind": "datacenter", "metro": "m"},
        {"id": "pop-far", "lon": 0.4, "lat": 0.0, "region": "EMEA", "kind": "pop", "metro": "m"},
        {"id": "pop-near", "lon": 0.2, "lat": 0.0, "region": "EMEA", "kind": "pop", "metro": "m"},
        {"id": "dc-only", "lon": 5.0, "lat": 0.0, "region": "EMEA", "kind": "datacenter", "metro": "d"},
        {"id": "lan-only", "lon": 10.0, "lat": 0.0, "region": "EMEA", "kind": "landing", "metro": "l"},
        {"id": "x", "lon": 20.0, "lat": 0.0, "region": "EMEA", "kind": "pop"},
    ]
    links = [{"id": f"{a}-{b}", "site_a": a, "site_b": b, "capacity_gbps": 100.0}
             for a, b in (("lan", "dc-far"), ("dc-far", "pop-far"), ("pop-far", "pop-near"), ("pop-near", "dc-only"),
                          ("dc-only", "lan-only"), ("lan-only", "x"))]
    metros = [{"id": i, "lon": lon, "lat": 0.0, "region": "EMEA", "population_m": 1.0, "gdp_usd_bn": 10.0}
              for i, lon in (("m", 0.0), ("d", 5.5), ("l", 10.0), ("none", 19.0))]
    return make_network(sites, links, metros=metros)


def test_a_pop_in_the_metro_beats_a_nearer_landing_and_the_nearest_pop_wins() -> None:
    acc = access_sites(_net())
    assert acc.loc["m", "site"] == "pop-near"  # landing "lan" is at the metro's centre, but a PoP ranks first
    assert acc.loc["d", "site"] == "dc-only"
    assert acc.loc["l", "site"] == "lan-only"  # a landing when it is all the metro has
    assert acc.loc["none", "site"] == "x"  # no site in the metro: the nearest
    assert list(acc["in_metro"]) == [True, True, True, False]


def test_access_km_is_the_geodesic_times_the_route_factor() -> None:
    net = _net()
    acc = access_sites(net)
    want = geo.geodesic_km(0.0, 0.0, 0.2, 0.0) * net.parameters["route_factor"]
    assert acc.loc["m", "access_km"] == pytest.approx(want)


def test_the_demand_generator_uses_the_rule() -> None:
    net = _net()
    assert home_sites(net).to_dict() == access_sites(net)["site"].to_dict()
