"""The Network model: immutable transformations, graph view, summary, fingerprint, lookups."""

from __future__ import annotations

import copy
from collections.abc import Callable

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from backbone.errors import NotFoundError, ValidationError
from backbone.model import Network
from tests.nets import make_network


def _unchanged(net: Network, op: Callable[[Network], Network]) -> Network:
    """Run ``op`` and check it returned a new network and left ``net`` exactly as it was."""
    before = copy.deepcopy(net)
    fp = net.fingerprint()
    out = op(net)
    assert isinstance(out, Network)
    assert out is not net
    assert net.equals(before), "the input network was modified"
    assert net.fingerprint() == fp
    # a table the output shares with the input must hold the same values (sharing is allowed, change is not)
    for t, df in out.tables().items():
        if df is getattr(net, t):
            pd.testing.assert_frame_equal(df, getattr(before, t))
    return out


def test_fail_links_drops_links_and_trims_srlgs(triangle: Network) -> None:
    out = _unchanged(triangle, lambda n: n.fail_links(["AC"]))
    assert list(out.links.index) == ["AB", "BC"]
    assert "cut" not in out.srlgs.index  # emptied SRLGs are dropped
    assert triangle.srlgs.at["cut", "links"] == ("AC",)
    assert out.fingerprint() != triangle.fingerprint()
    with pytest.raises(NotFoundError, match="nope"):
        triangle.fail_links(["nope"])


def test_fail_srlgs_drops_every_member(submarine_cut: Network) -> None:
    out = _unchanged(submarine_cut, lambda n: n.fail_srlgs(["atlantic"]))
    assert sorted(out.links.index) == ["lon-par", "ny-wdc"]
    assert "tat" not in out.srlgs.index  # emptied SRLGs are dropped
    assert submarine_cut.srlg_links(["tat", "atlantic"]) == ["tat-1", "tat-2"]
    with pytest.raises(NotFoundError):
        submarine_cut.fail_srlgs(["pacific"])


def test_fail_sites_drops_sites_links_and_their_demands(triangle: Network) -> None:
    out = _unchanged(triangle, lambda n: n.fail_sites(["B"]))
    assert list(out.sites.index) == ["A", "C"]
    assert list(out.links.index) == ["AC"]
    assert list(out.demands.index) == ["d1"]  # A -> C survives
    gone = _unchanged(triangle, lambda n: n.fail_sites(["C"]))
    assert len(gone.demands) == 0
    assert list(gone.links.index) == ["AB"]
    assert "cut" not in gone.srlgs.index  # emptied SRLGs are dropped


def test_derate_links_and_srlgs(triangle: Network, submarine_cut: Network) -> None:
    out = _unchanged(triangle, lambda n: n.derate_links(["AB"], 0.25))
    assert out.links.at["AB", "capacity_gbps"] == 2.5
    assert out.links.at["BC", "capacity_gbps"] == 10
    assert triangle.links.at["AB", "capacity_gbps"] == 10
    sub = _unchanged(submarine_cut, lambda n: n.derate_srlgs(["atlantic"], 0.5))
    assert sub.links.loc[["tat-1", "tat-2"], "capacity_gbps"].tolist() == [200, 200]
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValidationError):
            triangle.derate_links(["AB"], bad)
    with pytest.raises(NotFoundError):
        triangle.derate_links(["XX"], 0.5)


def test_scale_demand_all_or_one_class(submarine_cut: Network) -> None:
    out = _unchanged(submarine_cut, lambda n: n.scale_demand(2.0))
    assert out.demands["demand_gbps"].tolist() == [600, 600]
    one = _unchanged(submarine_cut, lambda n: n.scale_demand(3.0, traffic_class="inference"))
    assert one.demands.at["ny-lon", "demand_gbps"] == 900
    assert one.demands.at["wdc-par", "demand_gbps"] == 300
    zero = submarine_cut.scale_demand(0.0)
    assert zero.demands["demand_gbps"].sum() == 0
    with pytest.raises(ValidationError):
        submarine_cut.scale_demand(-1.0)
    with pytest.raises(ValidationError):
        submarine_cut.scale_demand(2.0, traffic_class="gaming")


def test_upgrade_links(triangle: Network) -> None:
    out = _unchanged(triangle, lambda n: n.upgrade_links({"AB": 5.0, "AC": 400}))
    assert out.links["capacity_gbps"].tolist() == [15, 10, 410]
    assert out.summary()["total_capacity_gbps"] == triangle.summary()["total_capacity_gbps"] + 405
    with pytest.raises(NotFoundError):
        triangle.upgrade_links({"ZZ": 1.0})
    with pytest.raises(ValidationError) as err:
        triangle.upgrade_links({"AB": -20.0, "BC": float("nan"), "AC": 1.0})
    assert [(p.record, p.field) for p in err.value.problems] == [("AB", "capacity_gbps"), ("BC", "capacity_gbps")]


def test_add_site(triangle: Network) -> None:
    out = _unchanged(triangle, lambda n: n.add_site("D", lon=3.0, lat=1.0, region="EMEA", gpus_max=1000))
    assert list(out.sites.index) == ["A", "B", "C", "D"]
    d = out.sites.loc["D"]
    assert (d["region"], d["gpus_max"], d["kind"], d["gpus_installed"]) == ("EMEA", 1000, "pop", 0)
    assert out.sites.dtypes.equals(triangle.sites.dtypes)
    with pytest.raises(ValidationError, match="already exists"):
        triangle.add_site("A", lon=0, lat=0, region="NA")
    with pytest.raises(ValidationError) as err:
        triangle.add_site("E", lon=300, lat=0, region="MARS")
    assert {p.field for p in err.value.problems} == {"lon", "region"}


def test_add_links_validates_and_fills_derived_columns(triangle: Network) -> None:
    out = _unchanged(triangle, lambda n: n.add_links([{"id": "CA2", "site_a": "C", "site_b": "A",
                                                       "capacity_gbps": 40}]))
    assert list(out.links.index) == ["AB", "BC", "AC", "CA2"]
    row = out.links.loc["CA2"]
    assert row["length_km"] > 0 and row["latency_ms"] > 0 and row["max_capacity_gbps"] == 160
    assert row["module_cost_usd"] > 0
    # existing explicit values are kept
    assert out.links.at["AB", "latency_ms"] == 1
    with pytest.raises(ValidationError) as err:
        triangle.add_links([{"id": "AX", "site_a": "A", "site_b": "X", "capacity_gbps": 1},
                            {"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 1}])
    found = {(p.record, p.field) for p in err.value.problems}
    assert ("AX", "site_b") in found and ("AB", "id") in found


def test_networkx_view(submarine_cut: Network) -> None:
    g = submarine_cut.to_networkx()
    assert isinstance(g, nx.MultiGraph)
    assert set(g.nodes) == set(submarine_cut.sites.index)
    assert g.number_of_edges() == len(submarine_cut.links)
    assert g.nodes["LON"]["country"] == "GB"
    edge = g.edges["NY", "LON", "tat-1"]
    assert edge["kind"] == "submarine" and edge["cable_system"] == "TAT"
    assert edge["weight"] == submarine_cut.links.at["tat-1", "latency_ms"]
    by_length = submarine_cut.to_networkx(weight="length_km")
    assert by_length.edges["NY", "LON", "tat-1"]["weight"] == submarine_cut.links.at["tat-1", "length_km"]
    # parallel links stay separate edges
    twin = submarine_cut.add_links([{"id": "tat-1b", "site_a": "LON", "site_b": "NY", "capacity_gbps": 100,
                                     "kind": "submarine"}])
    assert twin.to_networkx().number_of_edges("NY", "LON") == 2
    # an extra column called "weight" neither clashes with nor overrides the chosen weight
    extra = submarine_cut.copy_with(links=submarine_cut.links.assign(weight="heavy"))
    assert extra.to_networkx().edges["NY", "LON", "tat-1"]["weight"] == edge["weight"]
    # shortest path by latency agrees with the lowest-latency route
    path = nx.shortest_path(g, "NY", "PAR", weight="weight")
    assert path[0] == "NY" and path[-1] == "PAR"


def test_summary(triangle: Network, submarine_cut: Network) -> None:
    s = triangle.summary()
    assert s["name"] == "triangle"
    assert (s["sites"], s["links"], s["srlgs"], s["demands"], s["metros"]) == (3, 3, 1, 1, 0)
    assert s["sites_by_region"] == {"NA": 3}
    assert s["links_by_kind"] == {"terrestrial": 3}
    assert s["cable_systems"] == 0
    assert s["demand_gbps"] == 15 and s["demand_gbps_by_class"] == {"bulk": 15}
    assert s["total_capacity_gbps"] == 30 and s["total_length_km"] == 300
    t = submarine_cut.summary()
    assert t["sites_by_region"] == {"EMEA": 2, "NA": 2}
    assert t["links_by_kind"] == {"submarine": 2, "terrestrial": 2}
    assert t["cable_systems"] == 2 and submarine_cut.cable_systems() == ["TAT", "TAT2"]
    assert t["srlgs_by_kind"] == {"cable_system": 1, "corridor": 1}
    assert t["total_length_km"] == pytest.approx(submarine_cut.links["length_km"].sum())
    import json

    json.dumps(t)  # plain types only


def test_fingerprint_is_stable_and_tracks_data(triangle: Network) -> None:
    fp = triangle.fingerprint()
    assert len(fp) == 16
    assert copy.deepcopy(triangle).fingerprint() == fp
    same = make_network(triangle.sites.reset_index().to_dict("records"),
                        [{"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 10, "length_km": 100,
                          "latency_ms": 1},
                         {"id": "BC", "site_a": "B", "site_b": "C", "capacity_gbps": 10, "length_km": 100,
                          "latency_ms": 1},
                         {"id": "AC", "site_a": "A", "site_b": "C", "capacity_gbps": 10, "length_km": 100,
                          "latency_ms": 1}],
                        [{"id": "d1", "src": "A", "dst": "C", "demand_gbps": 15}],
                        [{"id": "cut", "kind": "corridor", "links": "AC"}], name="other name")
    assert same.fingerprint() == fp  # the fingerprint covers the tables, not the name
    changed = {
        "capacity": triangle.upgrade_links({"AB": 1e-6}),
        "demand": triangle.scale_demand(1.0000001),
        "site": triangle.add_site("D", lon=0, lat=0, region="NA"),
        "failure": triangle.fail_links(["AB"]),
    }
    prints = {k: n.fingerprint() for k, n in changed.items()}
    assert fp not in prints.values()
    assert len(set(prints.values())) == len(prints)


def test_lookups(submarine_cut: Network) -> None:
    assert submarine_cut.site("LON")["name"] == "LON"
    with pytest.raises(NotFoundError):
        submarine_cut.site("TYO")
    a, b = submarine_cut.link_endpoints()
    sites = submarine_cut.sites.index
    assert list(sites[a]) == submarine_cut.links["site_a"].tolist()
    assert list(sites[b]) == submarine_cut.links["site_b"].tolist()
    members = submarine_cut.srlg_members()
    assert sorted(map(tuple, members.to_numpy().tolist())) == [("atlantic", "tat-1"), ("atlantic", "tat-2"),
                                                               ("tat", "tat-1")]
    coords = submarine_cut.link_coords("tat-1")
    assert coords[0].tolist() == [-74.0, 40.7] and coords[-1].tolist() == [-0.1, 51.5]
    assert np.any(np.isclose(coords, [-50, 45]).all(axis=1))


def test_equals_compares_tables_name_and_meta(triangle: Network) -> None:
    assert triangle.equals(copy.deepcopy(triangle))
    assert not triangle.equals(triangle.upgrade_links({"AB": 1}))
    from dataclasses import replace

    assert not triangle.equals(replace(triangle, name="other"))
    assert not triangle.equals(replace(triangle, meta={**triangle.meta, "description": "x"}))


def test_failed_network_round_trips(tmp_path) -> None:
    """Cutting every link of an SRLG drops the emptied SRLG, so the failed network saves and loads."""
    from backbone.io import load_scenario, save_scenario
    from tests.nets import make_network

    net = make_network(
        [{"id": "A", "lon": 0, "lat": 0, "region": "EMEA"}, {"id": "B", "lon": 1, "lat": 0, "region": "EMEA"},
         {"id": "C", "lon": 1, "lat": 1, "region": "EMEA"}],
        [{"id": "ab", "site_a": "A", "site_b": "B", "capacity_gbps": 10},
         {"id": "bc", "site_a": "B", "site_b": "C", "capacity_gbps": 10}],
        srlgs=[{"id": "s1", "links": "ab"}, {"id": "s2", "links": "ab;bc"}])
    failed = net.fail_srlgs(["s1"])
    assert list(failed.srlgs.index) == ["s2"] and failed.srlgs.at["s2", "links"] == ("bc",)
    assert load_scenario(save_scenario(failed, tmp_path / "failed")).equals(failed)
