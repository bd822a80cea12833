"""The model's CLI commands: ``backbone info``, ``route`` and ``export`` (via typer's CliRunner).

``CliRunner`` in this click version keeps stdout and stderr apart (``result.stdout`` /
``result.stderr``; ``mix_stderr`` is gone), which is what the ``--json`` contract needs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backbone import geo
from backbone.api.cli.main import app
from backbone.io import save_scenario
from backbone.model import Network
from tests.nets import make_network

INFO_KEYS = {"sites", "sites_by_region", "links", "links_by_kind", "cable_systems", "srlgs", "demands",
             "total_capacity_gbps", "gpus", "power_mw"}
ROUTE_KEYS = {"from_site", "from_snap_km", "to_site", "to_snap_km", "path", "length_km", "latency_ms", "rtt_ms"}


def run(*args: str) -> object:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})


@pytest.fixture
def scenario(submarine_cut: Network, tmp_path: Path) -> Path:
    return save_scenario(submarine_cut, tmp_path / "scenario")


@pytest.fixture
def pacific(tmp_path: Path) -> Path:
    """Tokyo - Los Angeles across the antimeridian, plus Tokyo - Osaka and LA - Seattle."""
    sites = [{"id": "TYO", "lon": 139.69, "lat": 35.69, "region": "APAC", "gpus_installed": 5000,
              "power_available_mw": 12.5},
             {"id": "OSA", "lon": 135.50, "lat": 34.69, "region": "APAC"},
             {"id": "LAX", "lon": -118.24, "lat": 34.05, "region": "NA", "gpus_installed": 7000,
              "power_available_mw": 20.0},
             {"id": "SEA", "lon": -122.33, "lat": 47.61, "region": "NA"}]
    links = [{"id": "pacific", "site_a": "TYO", "site_b": "LAX", "kind": "submarine", "cable_system": "Unity",
              "capacity_gbps": 800, "waypoints": "160 40; -160 38"},
             {"id": "tyo-osa", "site_a": "TYO", "site_b": "OSA", "capacity_gbps": 1000},
             {"id": "lax-sea", "site_a": "LAX", "site_b": "SEA", "capacity_gbps": 1000}]
    srlgs = [{"id": "unity", "kind": "cable_system", "links": "pacific"}]
    net = make_network(sites, links, srlgs=srlgs, name="pacific")
    return save_scenario(net, tmp_path / "pacific")


# ---------------------------------------------------------------------------------- info
def test_info_json(scenario: Path, submarine_cut: Network) -> None:
    result = run("info", str(scenario), "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    doc = json.loads(result.stdout)  # stdout is nothing but JSON
    assert doc.keys() >= INFO_KEYS
    assert doc["sites"] == 4 and doc["links"] == 4 and doc["srlgs"] == 2 and doc["demands"] == 2
    assert doc["sites_by_region"] == {"EMEA": 2, "NA": 2}
    assert doc["links_by_kind"] == {"submarine": 2, "terrestrial": 2}
    assert doc["cable_systems"] == 2
    assert doc["total_capacity_gbps"] == 2800.0
    assert doc["gpus"] == 0 and doc["power_mw"] == 0.0
    assert doc == json.loads(json.dumps(submarine_cut.summary()))


@pytest.mark.slow
def test_info_table(pacific: Path) -> None:
    result = run("info", str(pacific))
    assert result.exit_code == 0
    assert "pacific" in result.stdout and "12,000" in result.stdout  # GPUs
    assert "Traceback" not in result.output


def test_info_missing_scenario(tmp_path: Path) -> None:
    result = run("info", str(tmp_path / "nope"), "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope'}: no such file or folder"]


# ---------------------------------------------------------------------------------- route
def test_route_between_sites(scenario: Path, submarine_cut: Network) -> None:
    result = run("route", str(scenario), "NY", "PAR", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc.keys() >= ROUTE_KEYS
    assert (doc["from_site"], doc["to_site"], doc["from_snap_km"], doc["to_snap_km"]) == ("NY", "PAR", 0.0, 0.0)
    links = submarine_cut.links
    candidates = {  # every simple path NY -> PAR and its one-way latency
        ("NY", "LON", "PAR"): links.at["tat-1", "latency_ms"] + links.at["lon-par", "latency_ms"],
        ("NY", "WDC", "PAR"): links.at["ny-wdc", "latency_ms"] + links.at["tat-2", "latency_ms"],
    }
    best = min(candidates, key=candidates.__getitem__)
    assert tuple(doc["path"]) == best
    assert doc["latency_ms"] == pytest.approx(candidates[best], abs=1e-4)
    assert doc["rtt_ms"] == pytest.approx(2 * doc["latency_ms"], abs=1e-4)
    ids = doc["links"]
    assert doc["length_km"] == pytest.approx(float(links.loc[ids, "length_km"].sum()), abs=1e-3)


def test_route_from_points_counts_access_with_the_route_factor(scenario: Path, submarine_cut: Network) -> None:
    near_ny, near_par = (40.75, -73.9), (48.80, 2.25)  # lat,lon as the CLI takes them
    result = run("route", str(scenario), f"{near_ny[0]},{near_ny[1]}", f"{near_par[0]}, {near_par[1]}", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["from_site"], doc["to_site"]) == ("NY", "PAR")
    snap_a = float(geo.geodesic_km(near_ny[1], near_ny[0], -74.0, 40.7))
    snap_b = float(geo.geodesic_km(near_par[1], near_par[0], 2.35, 48.86))
    assert doc["from_snap_km"] == pytest.approx(snap_a, abs=1e-3)
    assert doc["to_snap_km"] == pytest.approx(snap_b, abs=1e-3)
    sites_only = json.loads(run("route", str(scenario), "NY", "PAR", "--json").stdout)
    access_km = (snap_a + snap_b) * geo.DEFAULT_ROUTE_FACTOR
    assert doc["length_km"] == pytest.approx(sites_only["length_km"] + access_km, abs=2e-3)
    assert doc["latency_ms"] == pytest.approx(
        sites_only["latency_ms"] + access_km * geo.fibre_delay_ms_per_km(), abs=2e-4)
    assert doc["path"] == sites_only["path"]


def test_route_human_output(scenario: Path) -> None:
    result = run("route", str(scenario), "40.75,-73.9", "LON")
    assert result.exit_code == 0
    assert "NY -> LON" in result.stdout and "RTT" in result.stdout and "access" in result.stdout


@pytest.mark.parametrize(("a", "b", "message"), [
    ("NY", "TOKYO", ["error: 'TOKYO' is neither a site id nor a 'lat,lon' point"]),
    ("[NY]", "LON", ["error: '[NY]' is neither a site id nor a 'lat,lon' point"]),
    # a validation error: its header, then one line per problem
    ("95,10", "LON", ["error: 1 problem(s) in the input", "  point '95,10' is out of range (expected 'lat,lon')"]),
])
def test_route_bad_endpoint_is_one_message_exit_2(scenario: Path, a: str, b: str, message: list[str]) -> None:
    result = run("route", str(scenario), a, b, "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.rstrip("\n").splitlines() == message
    assert "Traceback" not in result.output


def test_route_disconnected_and_argument_count(tmp_path: Path) -> None:
    net = make_network([{"id": "A", "lon": 0, "lat": 0, "region": "AFRICA"},
                        {"id": "B", "lon": 1, "lat": 1, "region": "AFRICA"}], [])
    path = save_scenario(net, tmp_path / "islands")
    result = run("route", str(path), "A", "B")
    assert result.exit_code == 2 and "no path from 'A' to 'B'" in result.stderr
    result = run("route", "A")
    assert result.exit_code == 2 and "route takes [SCENARIO] FROM TO" in result.stderr


# ---------------------------------------------------------------------------------- export
def test_export_geojson(pacific: Path, tmp_path: Path) -> None:
    out = tmp_path / "maps" / "pacific.geojson"
    result = run("export", str(pacific), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"out": str(out), "sites": 4, "links": 3, "candidates": 0, "link_values": [],
                                         "site_values": []}
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["type"] == "FeatureCollection"
    kinds = [(f["properties"]["feature_type"], f["geometry"]["type"]) for f in doc["features"]]
    assert kinds.count(("site", "Point")) == 4
    by_id = {f["properties"]["id"]: f for f in doc["features"] if f["properties"]["feature_type"] == "link"}
    assert by_id["pacific"]["geometry"]["type"] == "MultiLineString"
    assert by_id["tyo-osa"]["geometry"]["type"] == "LineString"
    assert by_id["pacific"]["properties"]["srlgs"] == "unity"
    assert by_id["pacific"]["properties"]["cable_system"] == "Unity"


def test_export_with_result_values(pacific: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"kind": "te", "summary": {"map": {
        "link_values": {"utilisation": {"pacific": 0.93, "tyo-osa": 0.2}},
        "site_values": {"gpus_added": {"LAX": 1024}}}}}))
    out = tmp_path / "u.geojson"
    result = run("export", str(pacific), "-o", str(out), "--result", str(summary))
    assert result.exit_code == 0, result.output
    assert "wrote 4 sites and 3 links" in result.stderr and result.stdout == ""
    props = {f["properties"]["id"]: f["properties"] for f in json.loads(out.read_text())["features"]}
    assert props["pacific"]["utilisation"] == 0.93 and props["lax-sea"]["utilisation"] is None
    assert props["LAX"]["gpus_added"] == 1024 and props["TYO"]["gpus_added"] is None


def test_export_errors(pacific: Path, tmp_path: Path) -> None:
    result = run("export", str(pacific), "--out", str(tmp_path / "x.kml"))
    assert result.exit_code == 2 and "--out must end in .geojson or .json" in result.stderr
    no_map = tmp_path / "r.json"
    no_map.write_text("{}")
    result = run("export", str(pacific), "--out", str(tmp_path / "x.geojson"), "--result", str(no_map))
    assert result.exit_code == 2 and 'no "map" object' in result.stderr
    assert not (tmp_path / "x.geojson").exists() and not (tmp_path / "x.kml").exists()


def test_help_lists_the_model_commands() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("info", "validate", "route", "export"):
        assert command in result.stdout


# ---------------------------------------------------------------------------------- convert
IMPORTERS = Path(__file__).resolve().parent.parent / "data" / "importers"


def test_convert_node_link_with_options_and_a_traffic_matrix(tmp_path: Path) -> None:
    from backbone.io import load_scenario
    from backbone.io.nodelink import load_node_link, load_traffic_matrix_csv

    source, tm = IMPORTERS / "teal_like.json", IMPORTERS / "tm.csv"
    strict = run("convert", str(source), "--out", str(tmp_path / "strict"))
    assert strict.exit_code == 2 and "--allow-missing-coordinates" in strict.stderr
    assert not (tmp_path / "strict").exists()
    out = tmp_path / "teal"
    result = run("convert", str(source), "--out", str(out), "--allow-missing-coordinates", "--traffic-matrix",
                 str(tm), "--default-capacity-gbps", "10", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["format"], doc["sites"], doc["links"], doc["demands"]) == ("node-link", 4, 4, 4)
    expected = load_node_link(source, allow_missing_coordinates=True, default_capacity_gbps=10)
    expected = expected.copy_with(demands=load_traffic_matrix_csv(tm, expected))
    assert load_scenario(out).equals(expected)
    again = run("convert", str(source), "--out", str(out), "--allow-missing-coordinates")
    assert again.exit_code == 2 and "destination exists" in again.stderr
    assert run("convert", str(source), "--out", str(out), "--allow-missing-coordinates", "--overwrite").exit_code == 0


def test_convert_graphml_and_topohub_cables(tmp_path: Path) -> None:
    from backbone.io import load_scenario

    result = run("convert", str(IMPORTERS / "uncoordinated.graphml"), "-o", str(tmp_path / "zoo.json"),
                 "--drop-uncoordinated")
    assert result.exit_code == 0, result.output
    assert "wrote" in result.stderr and "2 sites, 1 link," in result.stderr  # one link, not "1 links"
    assert list(load_scenario(tmp_path / "zoo.json").sites.index) == ["p", "f"]
    result = run("convert", str(IMPORTERS / "topohub_like.json"), "-o", str(tmp_path / "hub"), "--collapse-waypoints",
                 "--json")
    assert json.loads(result.stdout)["import"]["waypoint_nodes_folded"] == 1
    assert load_scenario(tmp_path / "hub").links.at["1-3", "waypoints"] == "-20.0000 30.0000"


def test_convert_rejects_importer_options_for_other_formats(scenario: Path, tmp_path: Path) -> None:
    result = run("convert", str(scenario), "-o", str(tmp_path / "x"), "--collapse-waypoints")
    assert result.exit_code == 2 and "only apply to GraphML and node-link files, not folder" in result.stderr
    plain = run("convert", str(scenario), "-o", str(tmp_path / "copy.json"))
    assert plain.exit_code == 0
    assert run("convert", str(tmp_path / "none.graphml"), "-o", str(tmp_path / "y")).exit_code == 2


def test_route_with_negative_coordinates_as_written_in_the_readme() -> None:
    r = run("route", "35.68,139.69", "-33.87,151.21", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["to"] == [-33.87, 151.21] and d["to_site"].startswith("sydney")
    assert d["from_site"] == "tokyo"
    flipped = run("route", "--json", "-33.87,151.21", "-23.55,-46.63")
    assert flipped.exit_code == 0, flipped.output
    assert json.loads(flipped.stdout)["to_site"] in ("sao-paulo", "praia-grande")
    bad = run("route", "new-york", "london", "--bogus")
    assert bad.exit_code == 2 and "no such option: --bogus" in bad.stderr


def test_version() -> None:
    from backbone import __version__

    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"backbone {__version__}"


def test_flags_show_no_bool_placeholder_and_validate_help_says_what_it_does() -> None:
    for command in ("te", "place", "validate", "design", "plan", "failures"):
        r = run(command, "--help")
        assert r.exit_code == 0 and "<bool>" not in r.stdout, command
        assert "--json" in r.stdout or command == "failures"
    text = " ".join(run("validate", "--help").stdout.split())
    assert "without solving or writing anything" in text and "exit 2" in text
    assert run("validate").exit_code == 0  # the help's "default: shipped global scenario" holds


@pytest.mark.slow
def test_tables_written_to_a_pipe_keep_whole_rows(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run([sys.executable, "-m", "backbone.api", "info"], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if "sites_by_region" in line)
    from backbone.io import load_scenario

    by_region = load_scenario().sites["region"].value_counts().sort_index()
    expected = ", ".join(f"{region}: {count}" for region, count in by_region.items())
    assert expected in row  # one line, not wrapped at 80 columns
    assert max(len(line) for line in proc.stdout.splitlines()) > 80
