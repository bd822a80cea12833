"""The demand generator on small hand-built networks: formulas, SLOs, determinism, CLI."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from backbone import geo
from backbone.demand import (
    DemandParameters,
    generate_metro_inference,
    generate_traffic,
    home_sites,
    regenerate,
    rtt_matrix_ms,
    slo_violations,
)
from backbone.errors import ValidationError
from backbone.io import load_scenario, save_scenario
from backbone.model import Network
from tests.nets import make_network

NO_NOISE = DemandParameters(noise_sigma=0.0, min_gbps=0.0)


def _dc(i: str, lon: float, lat: float, gpus: int, region: str = "NA", metro: str = "") -> dict:
    return {"id": i, "name": i, "lon": lon, "lat": lat, "region": region, "kind": "datacenter", "metro": metro,
            "gpus_installed": gpus, "gpus_max": 2 * gpus, "power_available_mw": gpus / 250, "power_max_mw": gpus / 125}


@pytest.fixture
def small() -> Network:
    """Three US campuses, a PoP in Chicago, a European campus; metros in and outside the sites."""
    sites = [
        _dc("ash", -77.49, 39.04, 40_000, metro="dc"),
        _dc("dfw", -96.80, 32.78, 20_000),
        _dc("phx", -112.07, 33.45, 10_000),
        _dc("fra", 8.68, 50.11, 30_000, region="EMEA"),
        {"id": "chi", "lon": -87.63, "lat": 41.88, "region": "NA", "kind": "pop", "metro": "chicago"},
        {"id": "chi-lan", "lon": -87.6, "lat": 41.9, "region": "NA", "kind": "landing", "metro": "chicago"},
    ]
    links = [
        {"id": "ash-dfw", "site_a": "ash", "site_b": "dfw", "capacity_gbps": 4000},
        {"id": "dfw-phx", "site_a": "dfw", "site_b": "phx", "capacity_gbps": 4000},
        {"id": "ash-chi", "site_a": "ash", "site_b": "chi", "capacity_gbps": 4000},
        {"id": "chi-dfw", "site_a": "chi", "site_b": "dfw", "capacity_gbps": 4000},
        {"id": "chi-lan", "site_a": "chi", "site_b": "chi-lan", "capacity_gbps": 4000},
        {"id": "tat", "site_a": "ash", "site_b": "fra", "kind": "submarine", "cable_system": "T",
         "capacity_gbps": 4000, "waypoints": "-60 40; -20 46"},
    ]
    metros = [
        {"id": "chicago", "lon": -87.63, "lat": 41.88, "region": "NA", "population_m": 9.4, "gdp_usd_bn": 830},
        {"id": "dc", "lon": -77.04, "lat": 38.91, "region": "NA", "population_m": 6.4, "gdp_usd_bn": 710},
        {"id": "houston", "lon": -95.37, "lat": 29.76, "region": "NA", "population_m": 7.3, "gdp_usd_bn": 630},
        {"id": "berlin", "lon": 13.40, "lat": 52.52, "region": "EMEA", "population_m": 4.7, "gdp_usd_bn": 230},
    ]
    return make_network(sites, links, metros=metros, name="small")


def test_metro_inference_follows_population_and_gdp(small: Network) -> None:
    p = DemandParameters(total_inference_gpus=10_000, population_exponent=0.4, gdp_exponent=0.6)
    table = generate_metro_inference(small, p)
    m = small.metros
    w = m["population_m"] ** 0.4 * m["gdp_usd_bn"] ** 0.6
    expected = np.round(w / w.sum() * 10_000)
    assert table["inference_gpus"].to_numpy() == pytest.approx(expected.to_numpy())
    assert table["weight"].sum() == pytest.approx(1.0)
    assert table["inference_gpus"].sum() == pytest.approx(10_000, abs=len(m))
    # GDP-only weights: Chicago's share equals its GDP share
    gdp_only = generate_metro_inference(small, DemandParameters(population_exponent=0.0, gdp_exponent=1.0))
    assert gdp_only.at["chicago", "weight"] == pytest.approx(830 / (830 + 710 + 630 + 230))


def test_home_sites_prefer_a_pop_in_the_metro_then_the_nearest_site(small: Network) -> None:
    home = home_sites(small)
    assert home["chicago"] == "chi"  # a PoP beats the landing in the same metro
    assert home["dc"] == "ash"  # the data center named in the metro
    assert home["houston"] == "dfw"  # no site in Houston: nearest
    assert home["berlin"] == "fra"


def test_class_totals_are_the_shares_of_the_total(small: Network) -> None:
    p = DemandParameters(total_gbps=12_000, training_pairs=10, replication_pairs=10, bulk_pairs=10, min_gbps=0.0)
    d = generate_traffic(small, p)
    by_class = d.groupby("traffic_class")["demand_gbps"].sum()
    for cls, share in p.class_shares().items():
        assert by_class[cls] == pytest.approx(share * 12_000, abs=0.05 * len(d))
    assert (d["src"] != d["dst"]).all()
    assert d.index.is_unique
    assert list(d.index[:1]) == [f"training-{d['src'].iloc[0]}-{d['dst'].iloc[0]}"]


def test_training_gravity_ratio_without_noise(small: Network) -> None:
    p = replace(NO_NOISE, training_gamma=1.0, distance_offset_km=500.0)
    d = generate_traffic(small, p)
    t = d[d["traffic_class"] == "training"].set_index(["src", "dst"])["demand_gbps"]
    s = small.sites

    def gravity(a: str, b: str) -> float:
        km = float(geo.geodesic_km(s.at[a, "lon"], s.at[a, "lat"], s.at[b, "lon"], s.at[b, "lat"]))
        return s.at[a, "gpus_installed"] * s.at[b, "gpus_installed"] / ((km + 500.0) / 1000.0)

    ratio = t[("ash", "dfw")] / t[("dfw", "phx")]
    assert ratio == pytest.approx(gravity("ash", "dfw") / gravity("dfw", "phx"), rel=2e-3)
    assert t[("ash", "dfw")] == t[("dfw", "ash")]  # symmetric


def test_slos_are_met_by_the_shortest_path_and_follow_the_rules(small: Network) -> None:
    d = generate_traffic(small, NO_NOISE)
    rtt = rtt_matrix_ms(small)
    r = np.array([rtt.at[a, b] for a, b in zip(d["src"], d["dst"], strict=True)])
    has = d["slo_rtt_ms"].notna().to_numpy()
    assert (r[has] <= d["slo_rtt_ms"].to_numpy()[has]).all()
    tr = d["traffic_class"].to_numpy() == "training"
    same_region = (small.sites.loc[d["src"], "region"].to_numpy() == small.sites.loc[d["dst"], "region"].to_numpy())
    intra = tr & same_region
    assert np.array_equal(d["slo_rtt_ms"].to_numpy()[intra], np.ceil(1.25 * r[intra] + 2.0))
    cross = tr & ~same_region
    assert cross.any()
    assert (d["slo_rtt_ms"].to_numpy()[cross] % 10 == 0).all()
    inf = d["traffic_class"].to_numpy() == "inference"
    assert d["slo_rtt_ms"].to_numpy()[inf] == pytest.approx(np.clip(10 * np.ceil((1.3 * r[inf] + 20) / 10), 50, 150))
    assert d.loc[~(tr | inf), "slo_rtt_ms"].isna().all()
    assert slo_violations(regenerate(small, NO_NOISE)).empty


def test_inference_is_served_locally_or_within_reach(small: Network) -> None:
    p = replace(NO_NOISE, serving_sites=2, inference_max_rtt_ms=60.0)
    d = generate_traffic(small, p)
    inf = d[d["traffic_class"] == "inference"]
    rtt = rtt_matrix_ms(small)
    assert all(rtt.at[a, b] <= 60.0 for a, b in zip(inf["src"], inf["dst"], strict=True))
    # responses (campus -> PoP) carry 3x the request bytes
    pair = inf.set_index(["src", "dst"])["demand_gbps"]
    assert pair[("ash", "chi")] == pytest.approx(3.0 * pair[("chi", "ash")], rel=1e-3)
    # Berlin's only campus within reach is Frankfurt, its own home site: no WAN inference to or from it
    assert not ((inf["src"] == "fra") | (inf["dst"] == "fra")).any()


def test_unserved_metro_is_a_validation_error(small: Network) -> None:
    with pytest.raises(ValidationError, match="no data center within"):
        generate_traffic(small, replace(NO_NOISE, inference_max_rtt_ms=1.0))


def test_network_without_datacenter_gets_site_gravity_unless_nothing_is_connected() -> None:
    sites = [{"id": "a", "lon": 0, "lat": 0, "region": "EMEA"}, {"id": "b", "lon": 1, "lat": 0, "region": "EMEA"},
             {"id": "c", "lon": 2, "lat": 0, "region": "EMEA"}]
    net = make_network(sites, [{"id": "ab", "site_a": "a", "site_b": "b", "capacity_gbps": 10}])
    d = generate_traffic(net, replace(NO_NOISE, total_gbps=2.0))
    assert sorted(d.index) == ["bulk-a-b", "bulk-b-a"] and d["demand_gbps"].tolist() == [1.0, 1.0]
    alone = make_network(sites[:1], [])
    with pytest.raises(ValidationError, match="at least two sites connected"):
        generate_traffic(alone)


def test_seeded_noise_is_deterministic(small: Network) -> None:
    a = generate_traffic(small, DemandParameters(seed=1, noise_sigma=0.3))
    b = generate_traffic(small, DemandParameters(seed=1, noise_sigma=0.3))
    c = generate_traffic(small, DemandParameters(seed=2, noise_sigma=0.3))
    assert a.equals(b)
    assert not a["demand_gbps"].equals(c["demand_gbps"])


def test_parameters_are_validated() -> None:
    with pytest.raises(ValidationError):
        DemandParameters(total_gbps=-1.0)
    with pytest.raises(ValidationError):
        DemandParameters(gdp_exponent=math.nan)
    with pytest.raises(ValidationError, match="unknown demand parameter"):
        DemandParameters.from_meta({"demand_parameters": {"bogus": 1}})
    p = DemandParameters.from_meta({"demand_parameters": {"total_gbps": "1000", "seed": "5"}}, seed=None)
    assert p.total_gbps == 1000.0 and p.seed == 5 and isinstance(p.seed, int)


def test_regenerate_returns_a_new_network_and_records_parameters(small: Network, tmp_path: Path) -> None:
    p = DemandParameters(total_gbps=5_000, total_inference_gpus=1_000)
    out = regenerate(small, p)
    assert small.demands.empty and (small.metros["inference_gpus"] == 0).all()  # input unchanged
    assert out.demands["demand_gbps"].sum() == pytest.approx(5_000, rel=1e-3)
    assert out.metros["inference_gpus"].sum() == pytest.approx(1_000, abs=4)
    assert out.meta["demand_parameters"]["total_gbps"] == 5_000
    back = load_scenario(save_scenario(out, tmp_path / "s"))
    again = regenerate(back)  # parameters read back from the manifest
    assert np.allclose(again.demands["demand_gbps"], out.demands["demand_gbps"])


def test_cli_demand_writes_a_scenario_and_prints_json(small: Network, tmp_path: Path) -> None:
    from backbone.api.cli.main import app

    src = save_scenario(small, tmp_path / "in")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["demand", str(src), "--out", str(out), "--total-gbps", "8000", "--seed", "3",
                                      "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["demand_gbps"] == pytest.approx(8000, rel=1e-3)
    assert doc["slo_violations"] == 0
    assert doc["parameters"]["seed"] == 3
    net = load_scenario(out)
    assert len(net.demands) == doc["demands"]
    assert sum(c["demands"] for c in doc["by_class"].values()) == doc["demands"]
    bad = CliRunner().invoke(app, ["demand", str(src), "--out", str(tmp_path / "x"), "--total-gbps", "-1"])
    assert bad.exit_code == 2
    assert not (tmp_path / "x").exists()


def test_any_topology_gets_a_site_gravity_matrix(tmp_path: Path) -> None:
    """A Topology-Zoo-like graph (PoPs only, no metros): every connected ordered pair, class bulk,
    scaled to the total, volumes falling with distance (noise off)."""
    from backbone.demand import DemandParameters, generate_traffic, site_gravity_total_gbps

    sites = [dict(id=i, lon=lon, lat=lat, region="EMEA", kind="pop") for i, lon, lat in
             (("AMS", 4.9, 52.4), ("BRU", 4.35, 50.85), ("LUX", 6.13, 49.61), ("LIS", -9.14, 38.72))]
    links = [dict(id=f"{a}-{b}", site_a=a, site_b=b, capacity_gbps=100.0)
             for a, b in (("AMS", "BRU"), ("BRU", "LUX"), ("LUX", "AMS"))]  # LIS is not connected
    net = make_network(sites, links)
    assert site_gravity_total_gbps(net) == pytest.approx(30.0)
    d = generate_traffic(net, DemandParameters(total_gbps=30.0, noise_sigma=0.0))
    assert len(d) == 6 and set(d["traffic_class"]) == {"bulk"} and d["slo_rtt_ms"].isna().all()
    assert d["demand_gbps"].sum() == pytest.approx(30.0, abs=0.01)
    near, far = d.loc["bulk-AMS-BRU", "demand_gbps"], d.loc["bulk-AMS-LUX", "demand_gbps"]
    assert near > far > 0
    save_scenario(net, tmp_path / "zoo")
    from backbone.api.cli.main import app

    r = CliRunner().invoke(app, ["demand", str(tmp_path / "zoo"), "--out", str(tmp_path / "zoo-demand"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["demand_gbps"] == pytest.approx(30.0, abs=0.01)
    te = CliRunner().invoke(app, ["te", str(tmp_path / "zoo-demand"), "--json"])
    assert te.exit_code == 0, te.output
    assert json.loads(te.stdout)["mlu"] > 0 and not json.loads(te.stdout)["notes"]
    bare = CliRunner().invoke(app, ["te", str(tmp_path / "zoo"), "--json"])
    doc = json.loads(bare.stdout)
    assert bare.exit_code == 0 and doc["mlu"] == 0 and doc["notes"][0].startswith("no demand")
