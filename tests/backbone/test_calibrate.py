"""Latency calibration: recovers known parameters, predicts held-out pairs, round-trips, drives every command."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from backbone.calibrate import (
    FITTED_PARAMETERS,
    apply_latency_parameters,
    calibrate,
    derived_links,
    load_measured,
    measured_frame,
)
from backbone.errors import ValidationError
from backbone.io import load_scenario, save_scenario
from backbone.model import DEFAULT_PARAMETERS, Network, link_latency_ms
from backbone.route import shortest_route
from tests.nets import make_network

TRUE = {"terrestrial_latency_factor": 1.35, "submarine_latency_factor": 1.08, "equipment_delay_ms": 0.7}


def _site(i: str, lon: float, lat: float) -> dict[str, object]:
    return {"id": i, "name": i, "lon": lon, "lat": lat, "region": "NA" if lon < -30 else "EMEA"}


@pytest.fixture(scope="module")
def two_continents() -> Network:
    """Two terrestrial meshes (North America, Europe) joined by three submarine cables, plus a
    terrestrial chain and a direct long link in parallel so the lowest-latency path depends on the
    parameters (many short hops against one long link)."""
    sites = [_site("nyc", -74.0, 40.7), _site("wdc", -77.0, 38.9), _site("chi", -87.6, 41.9),
             _site("atl", -84.4, 33.7), _site("dal", -96.8, 32.8), _site("den", -105.0, 39.7),
             _site("lax", -118.2, 34.1), _site("sea", -122.3, 47.6), _site("bos", -71.1, 42.4),
             _site("lon", -0.1, 51.5), _site("par", 2.35, 48.86), _site("ams", 4.9, 52.4),
             _site("fra", 8.7, 50.1), _site("mad", -3.7, 40.4), _site("mil", 9.2, 45.5), _site("dub", -6.3, 53.3)]
    t = [("nyc", "wdc"), ("nyc", "chi"), ("wdc", "atl"), ("chi", "den"), ("atl", "dal"), ("dal", "lax"),
         ("den", "lax"), ("den", "sea"), ("sea", "lax"), ("nyc", "bos"), ("chi", "dal"), ("wdc", "chi"),
         ("lon", "par"), ("lon", "ams"), ("ams", "fra"), ("par", "fra"), ("par", "mad"), ("fra", "mil"),
         ("mad", "mil"), ("lon", "dub"), ("par", "mil"), ("nyc", "lax")]
    links: list[dict[str, object]] = [{"id": f"{a}-{b}", "site_a": a, "site_b": b, "capacity_gbps": 1000}
                                      for a, b in t]
    links += [
        {"id": "sub-nyc-lon", "site_a": "nyc", "site_b": "lon", "kind": "submarine", "cable_system": "A",
         "capacity_gbps": 1000, "waypoints": "-60 42; -30 49; -10 51"},
        {"id": "sub-bos-dub", "site_a": "bos", "site_b": "dub", "kind": "submarine", "cable_system": "B",
         "capacity_gbps": 1000, "waypoints": "-55 46; -25 52"},
        {"id": "sub-wdc-mad", "site_a": "wdc", "site_b": "mad", "kind": "submarine", "cable_system": "C",
         "capacity_gbps": 1000, "waypoints": "-60 38; -30 39; -12 40"},
    ]
    return make_network(sites, links, name="two-continents")


def _measure(net: Network, params: dict[str, float], pairs: list[tuple[str, str]], noise: float,
             seed: int = 7) -> pd.DataFrame:
    """Round trips on ``net`` under ``params``, times log-normal noise of ``noise`` (relative)."""
    truth = apply_latency_parameters(net, params)
    rng = np.random.default_rng(seed)
    rtt = np.array([shortest_route(truth, a, b).rtt_ms for a, b in pairs])
    rtt = rtt * np.exp(rng.normal(0.0, noise, len(rtt)))
    return measured_frame([{"from": a, "to": b, "rtt_ms": r} for (a, b), r in zip(pairs, rtt, strict=True)])


def _all_pairs(net: Network) -> list[tuple[str, str]]:
    return list(itertools.combinations(net.sites.index, 2))


def test_link_latency_is_the_fibre_floor_by_default() -> None:
    lat = link_latency_ms(np.array([1000.0]), np.array(["terrestrial"]), DEFAULT_PARAMETERS)
    assert lat[0] == pytest.approx(1000 * 1.468 / 299.792458 + 0.05)


def test_recovers_known_parameters_from_noiseless_measurements(two_continents: Network) -> None:
    measured = _measure(two_continents, TRUE, _all_pairs(two_continents), noise=0.0)
    result = calibrate(two_continents, measured)
    for name in FITTED_PARAMETERS:
        assert result.parameters[name] == pytest.approx(TRUE[name], rel=1e-3, abs=1e-3), name
    assert result.after["worst_abs_pct"] < 0.1
    assert result.before["median_signed_pct"] < -10  # the uncalibrated model is optimistic
    assert result.converged


def test_recovers_parameters_under_noise_and_outliers(two_continents: Network) -> None:
    pairs = _all_pairs(two_continents)
    measured = _measure(two_continents, TRUE, pairs, noise=0.03)
    measured.loc[[3, 40, 77], "rtt_ms"] *= 1.8  # three congested, detoured measurements
    result = calibrate(two_continents, measured)
    assert result.parameters["terrestrial_latency_factor"] == pytest.approx(TRUE["terrestrial_latency_factor"],
                                                                            rel=0.05)
    assert result.parameters["submarine_latency_factor"] == pytest.approx(TRUE["submarine_latency_factor"], rel=0.05)
    assert result.parameters["equipment_delay_ms"] == pytest.approx(TRUE["equipment_delay_ms"], abs=0.25)
    assert result.after["median_abs_pct"] < 3.5
    assert result.leave_one_out["median_abs_pct"] < 4.0


def test_predicts_held_out_pairs(two_continents: Network) -> None:
    pairs = _all_pairs(two_continents)
    rng = np.random.default_rng(3)
    held = set(rng.choice(len(pairs), size=len(pairs) // 3, replace=False).tolist())
    train = [p for i, p in enumerate(pairs) if i not in held]
    test = [p for i, p in enumerate(pairs) if i in held]
    result = calibrate(two_continents, _measure(two_continents, TRUE, train, noise=0.02))
    truth = _measure(two_continents, TRUE, test, noise=0.0)
    before = np.array([shortest_route(two_continents, a, b).rtt_ms for a, b in test])
    after = np.array([shortest_route(result.network, a, b).rtt_ms for a, b in test])
    err_before = np.abs(before - truth["rtt_ms"].to_numpy()) / truth["rtt_ms"].to_numpy()
    err_after = np.abs(after - truth["rtt_ms"].to_numpy()) / truth["rtt_ms"].to_numpy()
    assert np.median(err_after) < 0.03
    assert np.median(err_after) < np.median(err_before) / 4


def test_never_below_the_fibre_floor(two_continents: Network) -> None:
    """Measurements faster than light in fibre cannot pull the factors below 1 or the overhead below 0."""
    measured = _measure(two_continents, {**TRUE, "terrestrial_latency_factor": 1.0, "submarine_latency_factor": 1.0,
                                         "equipment_delay_ms": 0.0}, _all_pairs(two_continents), noise=0.0)
    measured["rtt_ms"] *= 0.6
    result = calibrate(two_continents, measured)
    assert result.parameters["terrestrial_latency_factor"] >= 1.0
    assert result.parameters["submarine_latency_factor"] >= 1.0
    assert result.parameters["equipment_delay_ms"] >= 0.0


def test_fixed_parameters_and_explicit_latencies_are_kept(two_continents: Network) -> None:
    links = two_continents.links.copy()
    links.loc["nyc-wdc", "latency_ms"] = 9.0  # a measured link latency, not derived from its length
    net = two_continents.copy_with(links=links)
    assert not derived_links(net)[net.links.index.get_loc("nyc-wdc")]
    measured = _measure(two_continents, TRUE, _all_pairs(two_continents), noise=0.0)
    result = calibrate(net, measured, fit=("terrestrial_latency_factor", "submarine_latency_factor"))
    assert result.network.links.at["nyc-wdc", "latency_ms"] == 9.0
    assert result.parameters["equipment_delay_ms"] == net.parameters["equipment_delay_ms"]
    assert result.fitted == ("terrestrial_latency_factor", "submarine_latency_factor")


def test_calibrated_scenario_round_trips_and_route_uses_it(two_continents: Network, tmp_path: Path) -> None:
    measured = _measure(two_continents, TRUE, _all_pairs(two_continents), noise=0.01)
    result = calibrate(two_continents, measured, date="2026-01-02")
    save_scenario(result.network, tmp_path / "cal")
    again = load_scenario(tmp_path / "cal")
    assert again.equals(result.network)
    assert again.meta["calibration"]["date"] == "2026-01-02"
    assert again.meta["calibration"]["pairs"] == len(measured)
    assert again.meta["calibration"]["errors"]["after"] == result.after
    for name, value in result.parameters.items():
        assert again.parameters[name] == value
    # a link added later derives its latency with the calibrated parameters
    grown = again.add_links([{"id": "extra", "site_a": "sea", "site_b": "chi", "capacity_gbps": 10}])
    row = grown.links.loc["extra"]
    assert row["latency_ms"] == pytest.approx(
        float(link_latency_ms(np.array([row["length_km"]]), np.array(["terrestrial"]), again.parameters)[0]), abs=1e-4)
    from backbone.api.cli.main import app

    out = CliRunner().invoke(app, ["route", str(tmp_path / "cal"), "sea", "mad", "--json"])
    assert out.exit_code == 0, out.output
    row = result.pairs[(result.pairs["from"] == "sea") & (result.pairs["to"] == "mad")].iloc[0]
    assert json.loads(out.stdout)["rtt_ms"] == pytest.approx(row["after_rtt_ms"], abs=1e-3)
    assert json.loads(out.stdout)["rtt_ms"] > shortest_route(two_continents, "sea", "mad").rtt_ms


def test_points_snap_with_calibrated_access_fibre(two_continents: Network) -> None:
    net = apply_latency_parameters(two_continents, TRUE)
    r = shortest_route(net, "41.0,-74.5", "lon")
    base = shortest_route(net, "nyc", "lon")
    p = net.parameters
    expected = r.access_km * 1.468 / 299.792458 * p["terrestrial_latency_factor"]
    assert r.latency_ms - base.latency_ms == pytest.approx(expected, rel=1e-9)


def test_cli_calibrate_json_and_table(two_continents: Network, tmp_path: Path) -> None:
    from backbone.api.cli.main import app

    save_scenario(two_continents, tmp_path / "net")
    measured = _measure(two_continents, TRUE, _all_pairs(two_continents)[:40], noise=0.02)
    csv = tmp_path / "rtt.csv"
    measured[["from", "to", "rtt_ms"]].assign(source="synthetic").to_csv(csv, index=False)
    res = CliRunner().invoke(app, ["calibrate", str(tmp_path / "net"), "--measured", str(csv),
                                   "--out", str(tmp_path / "cal"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["pairs"] == 40 and set(doc["parameters"]) == set(FITTED_PARAMETERS)
    assert {"before", "after", "leave_one_out"} <= set(doc["errors"])
    assert doc["errors"]["after"]["median_abs_pct"] < doc["errors"]["before"]["median_abs_pct"]
    assert len(doc["pairs_table"]) == 40
    assert load_scenario(tmp_path / "cal").meta["calibration"]["measured"] == "rtt.csv"
    res = CliRunner().invoke(app, ["calibrate", str(tmp_path / "net"), "--measured", str(csv),
                                   "--out", str(tmp_path / "cal2")])
    assert res.exit_code == 0, res.output
    assert "leave-one-out" in res.output and "terrestrial_latency_factor" in res.output
    # every table on stdout, like every other command's; only notes and "wrote ..." on stderr (issue #32)
    assert "leave-one-out" in res.stdout and "terrestrial_latency_factor" in res.stdout
    assert "largest errors after calibration" in res.stdout and "wrote" in res.stderr and "wrote" not in res.stdout


def test_bad_measurements_name_line_and_field(two_continents: Network, tmp_path: Path) -> None:
    from backbone.api.cli.main import app

    save_scenario(two_continents, tmp_path / "net")
    csv = tmp_path / "bad.csv"
    csv.write_text("from,to,rtt_ms\nnyc,lon,70\n# comment\nnyc,atlantis,40\nlon,par,-3\nlon,par,abc\n")
    with pytest.raises(ValidationError) as info:
        load_measured(csv)
    fields = {(p.record, p.field) for p in info.value.problems}
    assert fields == {("line 5", "rtt_ms"), ("line 6", "rtt_ms")}
    csv.write_text("from,to,rtt_ms\nnyc,lon,70\nnyc,atlantis,40\n")
    res = CliRunner().invoke(app, ["calibrate", str(tmp_path / "net"), "--measured", str(csv),
                                   "--out", str(tmp_path / "cal")])
    assert res.exit_code == 2
    assert "line 3" in res.output and "atlantis" in res.output
    assert not (tmp_path / "cal").exists()
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(ValidationError, match="rtt_ms"):
        load_measured(csv)
    with pytest.raises(ValidationError, match="loss"):
        calibrate(two_continents, measured_frame([{"from": "nyc", "to": "lon", "rtt_ms": 70}]), loss="l3")


def test_shipped_scenario_is_calibrated(shipped: Network) -> None:
    """The shipped scenario carries its calibration against public RTTs and meets the ~10 % target."""
    from backbone.paths import public_rtt_path

    net = shipped
    record = net.meta["calibration"]
    assert record["pairs"] >= 100
    for name in FITTED_PARAMETERS:
        assert net.parameters[name] == record["parameters"][name]
    assert net.parameters["terrestrial_latency_factor"] >= 1 and net.parameters["submarine_latency_factor"] >= 1
    assert record["errors"]["after"]["median_abs_pct"] <= 10.0
    assert record["errors"]["leave_one_out"]["median_abs_pct"] <= 10.0
    assert derived_links(net).all()
    measured = load_measured(public_rtt_path())
    assert len(measured) == record["pairs"]
    assert measured["source"].str.len().gt(0).all()
    # the recorded errors are what the shipped latencies give today
    again = calibrate(net, measured, max_iterations=1)
    assert again.before["median_abs_pct"] == pytest.approx(record["errors"]["after"]["median_abs_pct"], abs=0.05)


@pytest.mark.slow
def test_builder_reproduces_the_shipped_scenario(tmp_path: Path) -> None:
    from backbone.datasets.build_global import build
    from backbone.paths import default_scenario_path

    build(tmp_path / "global")
    shipped = default_scenario_path()
    for f in sorted(p.name for p in shipped.iterdir()):
        assert (tmp_path / "global" / f).read_text() == (shipped / f).read_text(), f


@pytest.mark.slow
def test_cli_defaults_report_on_the_shipped_scenario(shipped: Network, tmp_path: Path) -> None:
    """`backbone calibrate` with no options: the shipped public set, nothing written, same errors as recorded."""
    from backbone.api.cli.main import app

    res = CliRunner().invoke(app, ["calibrate", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["out"] is None and doc["pairs"] == shipped.meta["calibration"]["pairs"]
    recorded = shipped.meta["calibration"]
    assert doc["errors"]["before"]["median_abs_pct"] == pytest.approx(recorded["errors"]["after"]["median_abs_pct"],
                                                                      abs=0.05)
    assert doc["parameters"] == pytest.approx(recorded["parameters"], rel=1e-3)


def test_latency_parameters_below_the_floor_are_rejected(two_continents: Network, tmp_path: Path) -> None:
    import yaml

    save_scenario(two_continents, tmp_path / "net")
    manifest = tmp_path / "net" / "scenario.yaml"
    doc = yaml.safe_load(manifest.read_text())
    doc["parameters"]["terrestrial_latency_factor"] = 0.7
    doc["parameters"]["equipment_delay_ms"] = "fast"
    manifest.write_text(yaml.safe_dump(doc))
    with pytest.raises(ValidationError) as info:
        load_scenario(tmp_path / "net")
    assert {p.field for p in info.value.problems} == {"terrestrial_latency_factor", "equipment_delay_ms"}


def test_a_plain_table_of_pairs_is_accepted(two_continents: Network) -> None:
    measured = _measure(two_continents, TRUE, _all_pairs(two_continents), noise=0.0)[["from", "to", "rtt_ms"]]
    result = calibrate(two_continents, measured)
    assert result.parameters["terrestrial_latency_factor"] == pytest.approx(TRUE["terrestrial_latency_factor"],
                                                                            rel=1e-3)
