"""Canonical scenario I/O: folder and JSON round-trips, format detection, loader errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from backbone import geo
from backbone.errors import NotFoundError, ValidationError
from backbone.io import detect_format, load_scenario, network_from_dict, network_to_dict, save_scenario
from backbone.model import Network
from tests.nets import make_network

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture
def rich_network() -> Network:
    """Everything a round trip can trip on: unicode, commas and quotes in names, NaN and explicit
    derived values, extra columns, id lists (one empty after a failure), integer columns,
    numeric-looking ids and names, tiny and huge floats."""
    sites = [
        {"id": "ZRH", "name": "Zürich – Rümlang", "lon": 8.5417, "lat": 47.3769, "region": "EMEA", "country": "CH",
         "kind": "datacenter", "gpus_installed": 12000, "gpus_max": 40000, "power_available_mw": 30.5,
         "power_max_mw": 95.25, "tier": "gold", "operator": "Ö-Net, \"the\" operator"},
        {"id": "007", "name": "東京 (Tokyo)", "lon": 139.6917, "lat": 35.6895, "region": "APAC", "country": "JP",
         "tier": "", "operator": "NTT"},
        {"id": "SAO", "name": "São Paulo", "lon": -46.6333, "lat": -23.5505, "region": "LATAM", "country": "BR",
         "metro": "sao", "tier": "silver", "operator": "1e3"},
        {"id": "SUV", "name": "Suva, Fiji", "lon": 178.4419, "lat": -18.1416, "region": "APAC", "kind": "landing",
         "tier": "bronze", "operator": ""},
    ]
    links = [
        {"id": "zrh-tyo", "name": "Zürich – 東京", "site_a": "ZRH", "site_b": "007", "capacity_gbps": 1234.5678,
         "module_gbps": 800, "routing_cost_per_gbps": 1e-7},
        {"id": "tyo-suv", "site_a": "007", "site_b": "SUV", "kind": "submarine", "cable_system": "Southern Cross",
         "capacity_gbps": 400, "waypoints": "150.0 20.0; 175.0 -5.0", "latency_ms": 38.123456789},
        {"id": "suv-sao", "site_a": "SUV", "site_b": "SAO", "kind": "submarine", "cable_system": "Pacific–Andes",
         "capacity_gbps": 100, "waypoints": "-170.0 -25.0; -100.0 -35.0", "length_km": 14000.0,
         "max_capacity_gbps": 1e6},
        {"id": "zrh-sao", "site_a": "ZRH", "site_b": "SAO", "capacity_gbps": 0.001, "preinstalled_cost_usd": 5e9},
    ]
    srlgs = [{"id": "pacific", "name": "Pacific ⚓", "kind": "corridor", "links": "tyo-suv;suv-sao"},
             {"id": "zrh", "kind": "landing", "links": ["zrh-tyo", "zrh-sao"]},
             {"id": "solo", "kind": "cable_system", "links": "zrh-sao"}]
    metros = [{"id": "sao", "name": "São Paulo", "lon": -46.63, "lat": -23.55, "region": "LATAM",
               "population_m": 22.4, "gdp_usd_bn": 430.0, "inference_gpus": 1500.5, "interactive_share": 0.75}]
    demands = [{"id": "d1", "src": "ZRH", "dst": "007", "demand_gbps": 100.125, "traffic_class": "inference",
                "slo_rtt_ms": 250},
               {"id": "d2", "src": "SAO", "dst": "ZRH", "demand_gbps": 0.0, "traffic_class": "replication"},
               {"id": "d3", "src": "007", "dst": "SAO", "demand_gbps": 3e-3}]
    net = make_network(sites, links, demands, srlgs, metros, name="round-trip ü",
                       description="all the awkward bits", version="2.1",
                       sources=[{"name": "hand-made", "url": "https://example.org/ü"}],
                       parameters={"route_factor": 1.3})
    return net


def test_rich_network_has_what_the_round_trip_must_keep(rich_network: Network) -> None:
    n = rich_network
    assert math.isnan(n.demands.at["d2", "slo_rtt_ms"])
    assert n.links.at["tyo-suv", "latency_ms"] == 38.123456789
    assert n.links.at["suv-sao", "length_km"] == 14000.0
    assert n.srlgs.at["zrh", "links"] == ("zrh-tyo", "zrh-sao")
    assert list(n.sites.columns[-2:]) == ["tier", "operator"]
    assert n.parameters["route_factor"] == 1.3


def _round_trips(net: Network, tmp_path: Path) -> list[Network]:
    folder = save_scenario(net, tmp_path / "folder")
    doc = save_scenario(net, tmp_path / "net.json")
    canonical_yaml = tmp_path / "net.yaml"
    canonical_yaml.write_text(yaml.safe_dump(network_to_dict(net), allow_unicode=True, sort_keys=False), encoding="utf-8")
    return [load_scenario(folder), load_scenario(doc), load_scenario(canonical_yaml),
            network_from_dict(json.loads(json.dumps(network_to_dict(net))))]


def test_folder_json_and_yaml_round_trip_exactly(rich_network: Network, tmp_path: Path) -> None:
    for back in _round_trips(rich_network, tmp_path):
        assert back.equals(rich_network)
        assert back.fingerprint() == rich_network.fingerprint()
        assert back.srlgs.at["pacific", "links"] == ("tyo-suv", "suv-sao")
        assert back.sites.at["007", "name"] == "東京 (Tokyo)"
        assert back.sites.at["ZRH", "operator"] == 'Ö-Net, "the" operator'
        assert back.sites.at["SAO", "operator"] == "1e3"  # extra columns stay text
        assert back.sites["gpus_installed"].dtype == np.int64
        assert math.isnan(back.demands.at["d2", "slo_rtt_ms"])
        assert back.meta["sources"][0]["url"].endswith("ü")


def test_round_trip_is_a_fixed_point(rich_network: Network, tmp_path: Path) -> None:
    once = load_scenario(save_scenario(rich_network, tmp_path / "a"))
    twice = load_scenario(save_scenario(once, tmp_path / "b"))
    assert twice.equals(once)
    for t in ("sites", "links", "srlgs", "metros", "demands"):
        assert (tmp_path / "a" / f"{t}.csv").read_bytes() == (tmp_path / "b" / f"{t}.csv").read_bytes()
    assert save_scenario(once, tmp_path / "x.json").read_text() == save_scenario(twice, tmp_path / "y.json").read_text()


def test_transformed_networks_round_trip(submarine_cut: Network, tmp_path: Path) -> None:
    for variant in (submarine_cut.scale_demand(1.5), submarine_cut.upgrade_links({"tat-1": 400}),
                    submarine_cut.derate_srlgs(["atlantic"], 0.5), submarine_cut.fail_sites(["PAR"]).scale_demand(2)):
        assert load_scenario(save_scenario(variant, tmp_path / "v")).equals(variant)
        assert load_scenario(save_scenario(variant, tmp_path / "v.json")).equals(variant)


def test_empty_tables_round_trip(tmp_path: Path) -> None:
    net = make_network([{"id": "A", "lon": 0, "lat": 0, "region": "AFRICA"}], [])
    assert len(net.links) == len(net.demands) == len(net.srlgs) == 0
    for back in _round_trips(net, tmp_path):
        assert back.equals(net)
        assert back.summary()["links"] == 0


def test_saved_folder_layout(rich_network: Network, tmp_path: Path) -> None:
    folder = save_scenario(rich_network, tmp_path / "s")
    assert sorted(p.name for p in folder.iterdir()) == ["demands.csv", "links.csv", "metros.csv", "scenario.yaml",
                                                       "sites.csv", "srlgs.csv"]
    manifest = yaml.safe_load((folder / "scenario.yaml").read_text(encoding="utf-8"))
    assert manifest["name"] == "round-trip ü" and manifest["format_version"] == 1
    assert manifest["tables"]["sites"] == "sites.csv"
    assert "tyo-suv;suv-sao" in (folder / "srlgs.csv").read_text(encoding="utf-8")
    header = (folder / "links.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:4] == ["id", "name", "site_a", "site_b"]
    # overwriting replaces the folder and leaves no temporary folders behind
    save_scenario(rich_network.scale_demand(2), folder)
    assert [p.name for p in tmp_path.iterdir()] == ["s"]
    assert load_scenario(folder).demands.at["d1", "demand_gbps"] == 200.25


def test_saved_folder_has_the_users_permissions(rich_network: Network, tmp_path: Path) -> None:
    """A saved scenario folder (plan's scenario_after/ among them) is made like any folder of the user's:
    mode 0777 less the umask, not mkdtemp's 0700 (issue #32)."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        folder = save_scenario(rich_network, tmp_path / "s")
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_saved_json_is_strict_json(rich_network: Network, tmp_path: Path) -> None:
    path = save_scenario(rich_network, tmp_path / "n.json")
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text
    doc = json.loads(text)
    assert [r["id"] for r in doc["sites"]] == ["ZRH", "007", "SAO", "SUV"]
    assert doc["demands"][1]["slo_rtt_ms"] is None
    assert doc["srlgs"][0]["links"] == ["tyo-suv", "suv-sao"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_detect_format(tmp_path: Path, rich_network: Network) -> None:
    folder = save_scenario(rich_network, tmp_path / "f")
    assert detect_format(folder) == "folder"
    assert detect_format(folder / "scenario.yaml") == "folder"
    other = tmp_path / "other.yml"
    other.write_text("name: x\ntables: {sites: f/sites.csv}\n")
    assert detect_format(other) == "folder"
    doc = tmp_path / "doc.yaml"
    doc.write_text(yaml.safe_dump(network_to_dict(rich_network), allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert detect_format(doc) == "canonical-yaml"
    assert detect_format(save_scenario(rich_network, tmp_path / "c.json")) == "canonical-json"
    node_link = tmp_path / "g.json"
    node_link.write_text(json.dumps({"directed": False, "nodes": [], "links": []}))
    assert detect_format(node_link) == "node-link"
    node_link.write_text(json.dumps({"directed": False, "nodes": [], "edges": []}))
    assert detect_format(node_link) == "node-link"
    # TopoHub writes a large "graph" object (its demands) before "nodes"
    big_graph = {"directed": False, "graph": {"demands": {str(i): {"0": 1.0} for i in range(2000)}},
                 "nodes": [], "edges": []}
    node_link.write_text(json.dumps(big_graph))
    assert node_link.stat().st_size > 20_000
    assert detect_format(node_link) == "node-link"
    broken = tmp_path / "broken.json"
    broken.write_text('{"nodes": [], "links": [')
    assert detect_format(broken) == "canonical-json"  # whose loader reports the syntax error
    assert detect_format(tmp_path / "x.txt") == "sndlib"
    assert detect_format(tmp_path / "Abilene.GraphML") == "graphml"
    with pytest.raises(ValidationError, match=r"unknown scenario format '\.csv'"):
        detect_format(tmp_path / "sites.csv")


def test_load_scenario_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        load_scenario(tmp_path / "missing")
    with pytest.raises(NotFoundError):
        load_scenario(tmp_path)  # a folder without scenario.yaml
    not_a_doc = tmp_path / "list.json"
    not_a_doc.write_text("[1, 2]")
    with pytest.raises(ValidationError, match="must be an object"):
        load_scenario(not_a_doc)
    bad_meta = tmp_path / "meta.json"
    bad_meta.write_text(json.dumps({"sites": [], "meta": [1]}))
    with pytest.raises(ValidationError, match="'meta' must be an object"):
        load_scenario(bad_meta)
    not_csv = tmp_path / "bin"
    not_csv.mkdir()
    (not_csv / "scenario.yaml").write_text("name: bin\ntables: {sites: sites.csv}\n")
    (not_csv / "sites.csv").write_bytes(b"id,lon\n\xff\xfe,\x00\n")
    with pytest.raises(ValidationError) as err:
        load_scenario(not_csv)
    assert err.value.problems[0].file.endswith("sites.csv")


def test_the_small_test_scenario_loads_through_every_entry_point() -> None:
    a = load_scenario(DATA / "small")
    b = load_scenario(DATA / "small" / "scenario.yaml")
    assert a.equals(b)
    assert a.name == "small" and a.meta["description"].startswith("Four sites")


# ---------------------------------------------------------------------------------- GeoJSON export
@pytest.fixture
def pacific() -> Network:
    """Trans-Pacific cables both ways round, a terrestrial link and SRLGs."""
    sites = [{"id": "TYO", "name": "東京", "lon": 139.69, "lat": 35.69, "region": "APAC", "tier": "a"},
             {"id": "LAX", "lon": -118.24, "lat": 34.05, "region": "NA", "tier": "b"},
             {"id": "SEA", "lon": -122.33, "lat": 47.61, "region": "NA", "tier": ""}]
    links = [{"id": "east", "site_a": "TYO", "site_b": "LAX", "kind": "submarine", "cable_system": "Unity",
              "capacity_gbps": 800, "waypoints": "160 40; -160 38"},
             {"id": "west", "site_a": "SEA", "site_b": "TYO", "kind": "submarine", "cable_system": "PC-1",
              "capacity_gbps": 400},
             {"id": "land", "site_a": "LAX", "site_b": "SEA", "capacity_gbps": 1000}]
    srlgs = [{"id": "pacific", "kind": "corridor", "links": "east;west"},
             {"id": "unity", "kind": "cable_system", "links": "east"}]
    return make_network(sites, links, srlgs=srlgs, name="pacific")


def _parts(geom: object) -> list[np.ndarray]:
    if geom.geom_type == "LineString":  # type: ignore[attr-defined]
        return [np.asarray(geom.coords)]  # type: ignore[attr-defined]
    return [np.asarray(g.coords) for g in geom.geoms]  # type: ignore[attr-defined]


def test_geodataframes_sites_and_links(pacific: Network) -> None:
    from backbone.io.geojson import LINK_PROPERTIES, network_to_geodataframes

    sites, links = network_to_geodataframes(pacific)
    assert sites.crs.to_epsg() == 4326 and links.crs.to_epsg() == 4326
    assert list(sites["id"]) == ["TYO", "LAX", "SEA"]
    assert {"name", "region", "gpus_installed", "tier"} <= set(sites.columns)
    assert (sites.geometry.x.tolist(), sites.geometry.y.tolist()) == ([139.69, -118.24, -122.33], [35.69, 34.05, 47.61])
    assert list(links.columns) == [*LINK_PROPERTIES, "srlgs", "geometry"]
    assert links.set_index("id")["srlgs"].to_dict() == {"east": "pacific;unity", "west": "pacific", "land": ""}
    geoms = dict(zip(links["id"], links.geometry, strict=True))
    assert geoms["land"].geom_type == "LineString"
    for link_id, start, end in (("east", (139.69, 35.69), (-118.24, 34.05)), ("west", (-122.33, 47.61), (139.69, 35.69))):
        g = geoms[link_id]
        assert g.geom_type == "MultiLineString", link_id
        parts = _parts(g)
        assert len(parts) == 2
        assert tuple(parts[0][0]) == start and tuple(parts[-1][-1]) == end
        for p in parts:
            assert (np.abs(p[:, 0]) <= 180).all() and (np.abs(np.diff(p[:, 0])) < 180).all()
        assert abs(parts[0][-1, 0]) == 180 and parts[1][0, 0] == -parts[0][-1, 0]
        assert parts[0][-1, 1] == parts[1][0, 1]
    # the drawn route is as long as the model's length for a waypointed link
    east = np.vstack(_parts(geoms["east"]))
    drawn = geo.polyline_km([tuple(p) for p in east])
    assert drawn == pytest.approx(pacific.links.at["east", "length_km"], rel=1e-4)


def test_geodataframes_join_values(pacific: Network) -> None:
    import pandas as pd

    from backbone.io.geojson import network_to_geodataframes

    sites, links = network_to_geodataframes(
        pacific, link_values={"utilisation": {"east": 0.9, "land": 0.1, "gone": 5.0}},
        site_values=pd.DataFrame({"gpus_added": [512.0]}, index=["LAX"]))
    util = links.set_index("id")["utilisation"]
    assert util["east"] == 0.9 and util["land"] == 0.1 and math.isnan(util["west"])
    assert "gone" not in set(links["id"])
    assert sites.set_index("id")["gpus_added"].fillna(-1).to_dict() == {"TYO": -1, "LAX": 512.0, "SEA": -1}
    with pytest.raises(ValidationError, match="would overwrite"):
        network_to_geodataframes(pacific, link_values={"capacity_gbps": {"east": 1.0}})


def test_save_geojson_is_one_rfc7946_feature_collection(pacific: Network, tmp_path: Path) -> None:
    import geopandas as gpd

    from backbone.io.geojson import save_geojson

    path = save_geojson(pacific, tmp_path / "out" / "p.geojson", link_values={"utilisation": {"east": 0.5}})
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text and "東京" in text
    doc = json.loads(text)
    assert doc["type"] == "FeatureCollection" and "crs" not in doc
    features = doc["features"]
    assert [f["properties"]["feature_type"] for f in features] == ["site"] * 3 + ["link"] * 3
    assert all("id" not in f for f in features)  # site and link ids may collide: kept as properties only
    for f in features:
        coords = np.asarray(_flatten(f["geometry"]["coordinates"]))
        assert (np.abs(coords[:, 0]) <= 180).all() and (np.abs(coords[:, 1]) <= 90).all()
        assert np.array_equal(coords, np.round(coords, 5))
    link_props = {f["properties"]["id"]: f["properties"] for f in features if f["properties"]["feature_type"] == "link"}
    assert link_props["east"]["utilisation"] == 0.5 and link_props["west"]["utilisation"] is None
    assert link_props["east"]["latency_ms"] == pacific.links.at["east", "latency_ms"]
    # GDAL (what QGIS uses) reads it back: every feature, in EPSG:4326
    back = gpd.read_file(path)
    assert len(back) == 6 and back.crs.to_epsg() == 4326
    assert sorted(back["feature_type"]) == ["link"] * 3 + ["site"] * 3
    assert not list(path.parent.glob(".*.tmp"))


def _flatten(coords: list) -> list[list[float]]:  # type: ignore[type-arg]
    if coords and isinstance(coords[0], int | float):
        return [coords]
    return [c for item in coords for c in _flatten(item)]


def test_save_geojson_without_links(tmp_path: Path) -> None:
    from backbone.io.geojson import save_geojson

    net = make_network([{"id": "A", "lon": 179.9, "lat": -16.0, "region": "APAC"}], [])
    doc = json.loads(save_geojson(net, tmp_path / "a.geojson").read_text())
    assert len(doc["features"]) == 1 and doc["features"][0]["geometry"] == {"type": "Point",
                                                                           "coordinates": [179.9, -16.0]}


def _folder(net: Network, tmp_path: Path) -> Path:
    return save_scenario(net, tmp_path / "scen")


def test_a_zero_byte_table_is_an_error_naming_the_file_a_header_only_one_is_not(submarine_cut: Network, tmp_path: Path) -> None:
    folder = _folder(submarine_cut, tmp_path)
    header = (folder / "demands.csv").read_text(encoding="utf-8").splitlines()[0]
    (folder / "demands.csv").write_bytes(b"")
    with pytest.raises(ValidationError) as err:
        load_scenario(folder)
    [problem] = err.value.problems
    assert problem.file.endswith("demands.csv")
    assert problem.message == "the file is empty: a table needs at least its header row"
    # its header alone is a valid table of no rows
    (folder / "demands.csv").write_text(header + "\n", encoding="utf-8")
    assert len(load_scenario(folder).demands) == 0


def test_an_empty_links_file_is_one_problem_not_a_cascade(submarine_cut: Network, tmp_path: Path) -> None:
    """Without its links every SRLG member would be an unknown link; the one problem is the empty file."""
    folder = _folder(submarine_cut, tmp_path)
    (folder / "links.csv").write_bytes(b"")
    with pytest.raises(ValidationError) as err:
        load_scenario(folder)
    assert [(p.file.endswith("links.csv"), p.message) for p in err.value.problems] == [
        (True, "the file is empty: a table needs at least its header row")]


def test_a_byte_that_is_not_utf8_is_named_by_line_and_column(submarine_cut: Network, tmp_path: Path) -> None:
    folder = _folder(submarine_cut, tmp_path)
    lines = (folder / "sites.csv").read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b",", b",\xe9", 1)  # line 3: a Latin-1 byte after the first comma
    (folder / "sites.csv").write_bytes(b"\n".join(lines))
    column = lines[2].index(b"\xe9") + 1
    with pytest.raises(ValidationError) as err:
        load_scenario(folder)
    [problem] = err.value.problems
    assert problem.file.endswith("sites.csv") and problem.record == "line 3"
    assert f"byte 0xe9 at line 3, column {column}" in problem.message


def test_the_cli_reports_an_empty_table_with_the_validation_exit_code(submarine_cut: Network, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app

    folder = _folder(submarine_cut, tmp_path)
    (folder / "links.csv").write_bytes(b"")
    r = CliRunner().invoke(app, ["info", str(folder)])
    assert r.exit_code == 2
    assert "1 problem(s)" in r.output and "links.csv" in r.output and "the file is empty" in r.output
    assert "unknown link" not in r.output and "Traceback" not in r.output
