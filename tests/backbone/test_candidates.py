"""The candidates table: derived geometry, building candidates, round trips and validation."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backbone import geo
from backbone.errors import NotFoundError, ValidationError
from backbone.io import load_scenario, network_from_dict, network_to_dict, save_scenario
from backbone.model import Network
from backbone.validate import build_network

SITES = [
    {"id": "NY", "lon": -74.0, "lat": 40.7, "region": "NA"},
    {"id": "WDC", "lon": -77.0, "lat": 38.9, "region": "NA"},
    {"id": "LON", "lon": -0.1, "lat": 51.5, "region": "EMEA"},
    {"id": "PAR", "lon": 2.35, "lat": 48.86, "region": "EMEA"},
]
LINKS = [
    {"id": "ny-wdc", "site_a": "NY", "site_b": "WDC", "capacity_gbps": 1000},
    {"id": "lon-par", "site_a": "LON", "site_b": "PAR", "capacity_gbps": 1000},
    {"id": "tat-1", "site_a": "NY", "site_b": "LON", "kind": "submarine", "cable_system": "TAT",
     "capacity_gbps": 400, "waypoints": "-50 45; -20 50"},
]
SRLGS = [{"id": "atlantic", "kind": "corridor", "links": "tat-1"},
         {"id": "tat", "kind": "cable_system", "links": "tat-1"},
         {"id": "ny-landing", "kind": "landing", "links": "tat-1;ny-wdc"}]
CANDIDATES = [
    {"id": "tat-spectrum", "name": "TAT: 400G waves", "site_a": "NY", "site_b": "LON", "kind": "spectrum",
     "link_kind": "submarine", "cable_system": "TAT", "waypoints": "-50 45; -20 50", "module_gbps": 400,
     "module_cost_usd": 1_500_000, "max_modules": 10, "lead_time_quarters": 1, "srlgs": "tat;atlantic;ny-landing",
     "source": "estimate"},
    {"id": "new-cable", "name": "New cable WDC-PAR", "site_a": "WDC", "site_b": "PAR", "kind": "cable",
     "link_kind": "submarine", "cable_system": "Nova", "waypoints": "-60 40; -10 47", "module_gbps": 20000,
     "module_cost_usd": 30_000_000, "fixed_cost_usd": 150_000_000, "max_modules": 4, "lead_time_quarters": 8,
     "available_from": "2027Q3", "srlgs": "atlantic"},
    {"id": "ny-wdc-2", "site_a": "NY", "site_b": "WDC", "kind": "terrestrial", "link_kind": "terrestrial",
     "module_gbps": 400, "module_cost_usd": 80_000, "fixed_cost_usd": 5_000_000, "max_modules": 16,
     "lead_time_quarters": 4},
]


def _tables(**override: Any) -> dict[str, Any]:
    tables = {"sites": SITES, "links": LINKS, "srlgs": SRLGS, "candidates": CANDIDATES}
    tables.update(override)
    return {k: [dict(r) for r in v] for k, v in tables.items()}


@pytest.fixture
def net() -> Network:
    return build_network(_tables(), name="cands", meta={"parameters": {"route_factor": 1.3}})


def test_candidates_default_to_an_empty_table() -> None:
    plain = build_network(_tables(candidates=[]))
    assert len(plain.candidates) == 0
    assert list(plain.candidates.columns) == list(net_columns())
    assert plain.candidates.index.name == "id"
    direct = Network(plain.sites, plain.links, plain.srlgs, plain.metros, plain.demands)
    assert len(direct.candidates) == 0 and list(direct.candidates.columns) == list(net_columns())


def net_columns() -> list[str]:
    from backbone.schema import CANDIDATES as SPEC

    return SPEC.names


def test_derived_length_and_latency_use_the_link_functions(net: Network) -> None:
    c = net.candidates
    params = net.parameters
    # with waypoints: polyline through them, as for the link on the same route
    assert c.at["tat-spectrum", "length_km"] == pytest.approx(net.links.at["tat-1", "length_km"])
    assert c.at["tat-spectrum", "latency_ms"] == pytest.approx(net.links.at["tat-1", "latency_ms"])
    # without: geodesic x route factor, then the same latency function
    ny, wdc = net.sites.loc["NY"], net.sites.loc["WDC"]
    length = float(geo.geodesic_km(ny["lon"], ny["lat"], wdc["lon"], wdc["lat"])) * 1.3
    assert c.at["ny-wdc-2", "length_km"] == pytest.approx(length, abs=1e-3)
    latency = float(geo.latency_ms(np.array([length]), params["group_index"], params["equipment_delay_ms"])[0])
    assert c.at["ny-wdc-2", "latency_ms"] == pytest.approx(latency, abs=1e-3)
    assert c.at["ny-wdc-2", "length_km"] == pytest.approx(net.links.at["ny-wdc", "length_km"])


def test_explicit_length_and_latency_are_kept() -> None:
    cands = [dict(CANDIDATES[2], length_km=321.0, latency_ms=2.5)]
    n = build_network(_tables(candidates=cands))
    assert (n.candidates.at["ny-wdc-2", "length_km"], n.candidates.at["ny-wdc-2", "latency_ms"]) == (321.0, 2.5)


def test_with_candidates_built_adds_links_and_srlg_memberships(net: Network) -> None:
    after = net.with_candidates_built({"tat-spectrum": 3, "new-cable": 1, "ny-wdc-2": 0})
    assert "tat-spectrum" in after.links.index and "new-cable" in after.links.index
    assert "ny-wdc-2" not in after.links.index
    assert list(after.candidates.index) == ["ny-wdc-2"]
    row = after.links.loc["tat-spectrum"]
    assert row["capacity_gbps"] == 1200.0
    assert (row["site_a"], row["site_b"], row["kind"], row["cable_system"]) == ("NY", "LON", "submarine", "TAT")
    assert row["max_capacity_gbps"] == 4000.0 and row["module_gbps"] == 400.0
    assert row["module_cost_usd"] == 1_500_000
    assert row["latency_ms"] == net.candidates.at["tat-spectrum", "latency_ms"]
    assert row["length_km"] == net.candidates.at["tat-spectrum", "length_km"]
    assert after.links.at["new-cable", "capacity_gbps"] == 20000.0
    assert set(after.srlgs.at["tat", "links"]) == {"tat-1", "tat-spectrum"}
    assert set(after.srlgs.at["atlantic", "links"]) == {"tat-1", "tat-spectrum", "new-cable"}
    assert set(after.srlgs.at["ny-landing", "links"]) == {"tat-1", "ny-wdc", "tat-spectrum"}
    # the original is untouched
    assert "tat-spectrum" not in net.links.index and len(net.candidates) == 3
    # a failure of the SRLG now takes the built link with it
    assert "tat-spectrum" not in after.fail_srlgs(["tat"]).links.index
    assert net.candidate_cost_usd({"tat-spectrum": 3, "new-cable": 1}) == 3 * 1_500_000 + 150_000_000 + 30_000_000


def test_built_network_is_a_canonical_scenario(net: Network, tmp_path: Path) -> None:
    after = net.with_candidates_built({"tat-spectrum": 2})
    back = load_scenario(save_scenario(after, tmp_path / "after"))
    assert back.equals(after)
    assert network_from_dict(network_to_dict(after)).equals(after)


def test_with_candidates_built_rejects_bad_counts(net: Network) -> None:
    with pytest.raises(NotFoundError):
        net.with_candidates_built({"nope": 1})
    for bad in (11, -1, 1.5, "x"):
        with pytest.raises(ValidationError) as err:
            net.with_candidates_built({"tat-spectrum": bad})
        assert err.value.problems[0].record == "tat-spectrum"
    assert net.with_candidates_built({}) is net


def test_failures_drop_candidates_that_share_the_risk(net: Network) -> None:
    failed = net.fail_srlgs(["tat"])
    assert "tat-spectrum" not in failed.candidates.index
    assert {"new-cable", "ny-wdc-2"} <= set(failed.candidates.index)
    # "atlantic" is left empty by losing tat-1 and is dropped; its candidate stays (the corridor did not fail)
    assert failed.candidates.at["new-cable", "srlgs"] == ()
    assert "new-cable" not in net.fail_srlgs(["atlantic"]).candidates.index
    assert "new-cable" in net.fail_links(["tat-1"]).candidates.index
    gone = net.fail_sites(["WDC"])
    assert set(gone.candidates.index) == {"tat-spectrum"}
    assert net.candidates_in_srlgs(["atlantic"]) == ["tat-spectrum", "new-cable"]


def test_folder_round_trip_is_exact(net: Network, tmp_path: Path) -> None:
    path = save_scenario(net, tmp_path / "scn")
    assert (path / "candidates.csv").exists()
    back = load_scenario(path)
    assert back.equals(net)
    assert back.candidates.at["tat-spectrum", "srlgs"] == ("tat", "atlantic", "ny-landing")
    assert back.candidates.at["new-cable", "available_from"] == "2027Q3"
    assert back.candidates["max_modules"].dtype == np.int64
    assert math.isclose(back.candidates.at["new-cable", "fixed_cost_usd"], 150_000_000)


def test_a_scenario_without_candidates_writes_no_candidates_file(tmp_path: Path) -> None:
    plain = build_network(_tables(candidates=[]))
    path = save_scenario(plain, tmp_path / "plain")
    assert not (path / "candidates.csv").exists()
    assert "candidates" not in (path / "scenario.yaml").read_text()
    assert load_scenario(path).equals(plain)


def test_a_folder_without_a_tables_list_picks_up_candidates_csv(net: Network, tmp_path: Path) -> None:
    import yaml

    path = save_scenario(net, tmp_path / "scn")
    manifest = yaml.safe_load((path / "scenario.yaml").read_text())
    del manifest["tables"]
    (path / "scenario.yaml").write_text(yaml.safe_dump(manifest))
    assert load_scenario(path).equals(net)
    (path / "candidates.csv").unlink()
    assert len(load_scenario(path).candidates) == 0


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_document_round_trip_is_exact(net: Network, tmp_path: Path, suffix: str) -> None:
    import json

    import yaml

    doc = network_to_dict(net)
    assert [r["id"] for r in doc["candidates"]] == ["tat-spectrum", "new-cable", "ny-wdc-2"]
    assert doc["candidates"][0]["srlgs"] == ["tat", "atlantic", "ny-landing"]
    p = tmp_path / f"scn{suffix}"
    p.write_text(json.dumps(doc) if suffix == ".json" else yaml.safe_dump(doc))
    assert load_scenario(p).equals(net)


def test_summary_counts_candidates(net: Network) -> None:
    s = net.summary()
    assert s["candidates"] == 3
    assert s["candidates_by_kind"] == {"cable": 1, "spectrum": 1, "terrestrial": 1}


def _problems(**override: Any) -> set[tuple[str, str, str]]:
    with pytest.raises(ValidationError) as err:
        build_network(_tables(**override), files={"candidates": "candidates.csv"})
    return {(p.file, p.record, p.field) for p in err.value.problems}


def test_validation_names_file_record_and_field() -> None:
    bad = [
        dict(CANDIDATES[0], site_b="ATL"),  # unknown endpoint
        dict(CANDIDATES[1], srlgs="atlantic;pacific"),  # unknown SRLG
        dict(CANDIDATES[2], id="ny-wdc"),  # collides with a link id
    ]
    assert _problems(candidates=bad) == {("candidates.csv", "tat-spectrum", "site_b"),
                                         ("candidates.csv", "new-cable", "srlgs"),
                                         ("candidates.csv", "ny-wdc", "id")}


@pytest.mark.parametrize(("field", "value"), [
    ("module_gbps", 0), ("module_gbps", "x"), ("module_cost_usd", -1), ("fixed_cost_usd", "inf"),
    ("max_modules", 0), ("max_modules", 2.5), ("lead_time_quarters", -1), ("kind", "wormhole"),
    ("link_kind", "satellite"), ("available_from", "2027-07"), ("site_b", "NY"), ("waypoints", "1 2 3"),
])
def test_bad_values_are_rejected(field: str, value: Any) -> None:
    assert _problems(candidates=[dict(CANDIDATES[2], **{field: value})]) == {("candidates.csv", "ny-wdc-2", field)}


@pytest.mark.parametrize("field", ["site_a", "site_b", "kind", "link_kind", "module_gbps", "module_cost_usd",
                                   "max_modules", "lead_time_quarters"])
def test_required_values(field: str) -> None:
    assert _problems(candidates=[dict(CANDIDATES[2], **{field: ""})]) == {("candidates.csv", "ny-wdc-2", field)}
