"""Importers: Topology Zoo GraphML, networkx node-link JSON (TopoHub, Teal), Teal traffic matrices.

Small hand-written files in tests/data/importers/ pin the mapping rules; the conformance data
(../shared/conformance, skipped when absent) checks every real file loads, against the counts
its publishers list.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from backbone import geo
from backbone.errors import NotFoundError, ValidationError
from backbone.io import load_scenario, save_scenario
from backbone.io.graphml import country_code, load_graphml, region_from_lonlat
from backbone.io.nodelink import SYNTHETIC_RADIUS_DEG, load_node_link, load_traffic_matrix_csv
from tests.conftest import conformance_dir
from tests.nets import make_network

DATA = Path(__file__).resolve().parent.parent / "data" / "importers"


# ---------------------------------------------------------------------------------- region rule
CITIES = [  # (name, lon, lat, region)
    ("New York", -74.01, 40.71, "NA"), ("Miami", -80.19, 25.76, "NA"), ("Toronto", -79.38, 43.65, "NA"),
    ("San Diego", -117.16, 32.72, "NA"), ("El Paso", -106.49, 31.76, "NA"), ("San Antonio", -98.49, 29.42, "NA"),
    ("Honolulu", -157.86, 21.31, "NA"), ("Anchorage", -149.90, 61.22, "NA"), ("Nuuk", -51.72, 64.18, "NA"),
    ("Adak, Aleutians", 176.64, 51.88, "NA"),
    ("Tijuana", -117.04, 32.51, "LATAM"), ("Ciudad Juarez", -106.45, 31.69, "LATAM"),
    ("Monterrey", -100.32, 25.69, "LATAM"), ("Mexico City", -99.13, 19.43, "LATAM"),
    ("Havana", -82.37, 23.11, "LATAM"), ("Bogota", -74.07, 4.71, "LATAM"), ("Sao Paulo", -46.63, -23.55, "LATAM"),
    ("Fortaleza", -38.54, -3.72, "LATAM"), ("Santiago", -70.67, -33.45, "LATAM"),
    ("London", -0.13, 51.51, "EMEA"), ("Reykjavik", -21.94, 64.15, "EMEA"), ("Ponta Delgada", -25.67, 37.74, "EMEA"),
    ("Lisbon", -9.14, 38.72, "EMEA"), ("Gibraltar", -5.35, 36.14, "EMEA"), ("Marseille", 5.37, 43.30, "EMEA"),
    ("Palermo", 13.36, 38.12, "EMEA"), ("Valletta", 14.51, 35.90, "EMEA"), ("Heraklion", 25.13, 35.34, "EMEA"),
    ("Tel Aviv", 34.78, 32.09, "EMEA"), ("Jeddah", 39.17, 21.49, "EMEA"), ("Dubai", 55.27, 25.20, "EMEA"),
    ("Moscow", 37.62, 55.76, "EMEA"), ("Novosibirsk", 82.92, 55.03, "EMEA"),
    ("Tangier", -5.83, 35.77, "AFRICA"), ("Algiers", 3.06, 36.75, "AFRICA"), ("Tunis", 10.18, 36.81, "AFRICA"),
    ("Cairo", 31.24, 30.04, "AFRICA"), ("Lagos", 3.38, 6.52, "AFRICA"), ("Praia", -23.51, 14.93, "AFRICA"),
    ("Djibouti", 43.15, 11.59, "AFRICA"), ("Nairobi", 36.82, -1.29, "AFRICA"), ("Cape Town", 18.42, -33.92, "AFRICA"),
    ("Port Louis", 57.50, -20.16, "AFRICA"),
    ("Karachi", 67.01, 24.86, "APAC"), ("Mumbai", 72.88, 19.08, "APAC"), ("Singapore", 103.82, 1.35, "APAC"),
    ("Tokyo", 139.69, 35.69, "APAC"), ("Vladivostok", 131.89, 43.12, "APAC"), ("Sydney", 151.21, -33.87, "APAC"),
    ("Auckland", 174.76, -36.85, "APAC"), ("Suva", 178.44, -18.14, "APAC"), ("Papeete", -149.57, -17.53, "APAC"),
    ("Apia", -171.77, -13.83, "APAC"),
]


def test_region_rule_on_known_cities() -> None:
    lon = [c[1] for c in CITIES]
    lat = [c[2] for c in CITIES]
    got = region_from_lonlat(lon, lat)
    wrong = [(c[0], c[3], g) for c, g in zip(CITIES, got, strict=True) if c[3] != g]
    assert not wrong
    assert region_from_lonlat(2.35, 48.86).tolist() == ["EMEA"]  # scalars work too
    assert len(region_from_lonlat([], [])) == 0


def test_country_codes() -> None:
    assert country_code("United States") == "US"
    assert country_code("Czech Republic") == "CZ"
    assert country_code(" de ") == "DE"
    assert country_code("Atlantis") == ""
    assert country_code(None) == ""


# ---------------------------------------------------------------------------------- GraphML
def test_graphml_sites_links_and_capacities() -> None:
    net = load_graphml(DATA / "tiny.graphml")
    assert net.name == "tiny"
    s = net.sites
    assert list(s.index) == ["0", "1", "2", "3"]
    assert s["name"].tolist() == ["New York", "London", "Tokyo", "Sydney"]
    assert s["region"].tolist() == ["NA", "EMEA", "APAC", "APAC"]
    assert s["country"].tolist() == ["US", "GB", "JP", ""]  # 'Atlantis' is no country
    assert (s.at["2", "lon"], s.at["2", "lat"]) == (139.69171, 35.6895)
    links = net.links
    assert list(links.index) == ["0-1", "0-1~1", "1-2", "2-3"]  # parallel edges kept, self-loop dropped
    assert links["capacity_gbps"].tolist() == [10.0, 2.5, 0.155, 100.0]  # raw bps, speed+units, units M, default
    assert links.at["0-1", "name"] == "TAT-14"
    geodesic = float(geo.geodesic_km(-74.00597, 40.71427, -0.12574, 51.50853))
    assert links.at["0-1", "length_km"] == pytest.approx(geodesic * geo.DEFAULT_ROUTE_FACTOR, abs=1e-3)
    assert net.meta["import"]["self_loops_dropped"] == 1
    assert net.meta["import"]["links_with_default_capacity"] == 1
    assert len(net.demands) == 0
    assert load_scenario(DATA / "tiny.graphml").equals(net)


def test_graphml_uncoordinated_node_is_named_or_dropped() -> None:
    path = DATA / "uncoordinated.graphml"
    with pytest.raises(ValidationError) as err:
        load_graphml(path)
    (p,) = err.value.problems
    assert (p.file, p.record, p.field) == (str(path), "h", "lon")
    assert "Shared LAN" in p.message and "drop_uncoordinated" in p.message
    net = load_graphml(path, drop_uncoordinated=True)
    assert list(net.sites.index) == ["p", "f"]
    assert list(net.links.index) == ["p-f"]
    assert net.meta["import"]["dropped_nodes"] == ["h"]


def test_graphml_directed_arcs_make_one_link() -> None:
    net = load_graphml(DATA / "directed.graphml")
    links = net.links
    assert list(links.index) == ["ams-bru", "bru-lux", "lux-ams"]
    # 40G one way and 10G back: 10G per direction; an arc without a speed does not lower it
    assert links["capacity_gbps"].tolist() == [10.0, 100.0, 100.0]
    assert net.meta["import"]["links_with_default_capacity"] == 1
    assert net.sites["country"].tolist() == ["", "", ""]


def test_graphml_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as err:
        load_graphml(DATA / "not_graphml.graphml")
    assert err.value.problems[0].file.endswith("not_graphml.graphml")
    assert "not readable GraphML" in err.value.problems[0].message
    with pytest.raises(ValidationError):
        load_graphml(tmp_path / "missing.graphml")


# ---------------------------------------------------------------------------------- node-link
def test_node_link_topohub_style() -> None:
    net = load_node_link(DATA / "topohub_like.json")
    assert net.name == "tiny-topohub" and net.meta["coordinates"] == "geographic"
    s = net.sites
    assert s["kind"].tolist() == ["pop", "landing", "landing", "landing"]
    assert s["node_type"].tolist() == ["City", "Seacable Landing Point", "Seacable Waypoint",
                                       "Seacable Landing Point"]
    assert s["name"].tolist() == ["Lisbon", "Sesimbra", "2", "Fortaleza"]
    assert s["region"].tolist() == ["EMEA", "EMEA", "AFRICA", "LATAM"]
    links = net.links
    assert links["kind"].tolist() == ["terrestrial", "submarine", "submarine"]
    # submarine: the file's distance (the waypoints trace the cable); terrestrial: geodesic x route factor
    assert links.at["1-2", "length_km"] == 1466.2 and links.at["2-3", "length_km"] == 4170.9
    assert links.at["0-1", "length_km"] == pytest.approx(
        float(geo.geodesic_km(-9.14, 38.72, -9.1, 38.44)) * geo.DEFAULT_ROUTE_FACTOR, abs=1e-3)
    assert links.at["1-2", "latency_ms"] == pytest.approx(float(geo.latency_ms(1466.2)), abs=1e-4)
    assert (links["capacity_gbps"] == 100.0).all()
    assert net.meta["import"]["links_with_default_capacity"] == 3
    d = net.demands
    assert sorted(d.index) == ["0-1", "0-3", "1-0"]  # the 3 -> 3 self-demand is dropped
    assert d.at["0-1", "demand_gbps"] == 120.0 and (d.at["0-1", "src"], d.at["0-1", "dst"]) == ("0", "1")
    scaled = load_node_link(DATA / "topohub_like.json", demand_unit_gbps=0.001, default_capacity_gbps=400)
    assert scaled.demands.at["0-1", "demand_gbps"] == pytest.approx(0.12)
    assert (scaled.links["capacity_gbps"] == 400).all()
    assert load_scenario(DATA / "topohub_like.json").equals(net)


def test_node_link_links_or_edges_key(tmp_path: Path) -> None:
    doc = json.loads((DATA / "topohub_like.json").read_text())
    doc["links"] = doc.pop("edges")
    p = tmp_path / "links.json"
    p.write_text(json.dumps(doc))
    a, b = load_node_link(p), load_node_link(DATA / "topohub_like.json")
    assert a.links.equals(b.links) and a.sites.equals(b.sites)


def test_node_link_teal_style_needs_the_documented_rule() -> None:
    path = DATA / "teal_like.json"
    with pytest.raises(ValidationError) as err:
        load_node_link(path)
    assert [(p.record, p.field) for p in err.value.problems] == [(str(i), "lon") for i in range(4)]
    assert all(p.file == str(path) and "allow_missing_coordinates" in p.message for p in err.value.problems)
    net = load_node_link(path, allow_missing_coordinates=True, default_region="APAC")
    assert net.meta["coordinates"] == "circle"
    s = net.sites
    np.testing.assert_allclose(np.hypot(s["lon"], s["lat"]), SYNTHETIC_RADIUS_DEG)
    assert (s.at["0", "lon"], s.at["0", "lat"]) == (10.0, 0.0) and (s.at["1", "lon"], s.at["1", "lat"]) == (0.0, 10.0)
    assert (s["region"] == "APAC").all()
    links = net.links
    # arcs 0->1 / 1->0 merge into one full-duplex link; 1->2 (40) and 2->1 (60) keep the smaller
    assert list(links.index) == ["0-1", "1-2", "2-3", "3-0"]
    assert links["capacity_gbps"].tolist() == [100.0, 40.0, 10.0, 25.0]
    assert links["latency_ms"].tolist() == [1.0, 1.0, 7.5, 1.0]  # the file's weight, else 1 ms
    assert net.meta["import"]["asymmetric_capacity_pairs"] == 1
    assert net.meta["import"]["directed"] is True
    unit = load_node_link(path, allow_missing_coordinates=True, capacity_unit_gbps=10.0)
    assert unit.links["capacity_gbps"].tolist() == [1000.0, 400.0, 100.0, 250.0]


def test_node_link_planar_coordinates_are_scaled() -> None:
    path = DATA / "planar.json"
    with pytest.raises(ValidationError) as err:
        load_node_link(path)
    assert "latitude 200 is outside [-90, 90]" in err.value.problems[0].message
    net = load_node_link(path, allow_missing_coordinates=True)
    assert net.meta["coordinates"] == "scaled-planar"
    s = net.sites
    # a 400 x 200 drawing scaled into 20 x 10 degrees, centred on (0, 0), aspect kept
    assert s[["lon", "lat"]].to_numpy().tolist() == [[-10.0, -5.0], [10.0, -5.0], [0.0, 5.0]]
    links = net.links
    assert links.at["1-2", "length_km"] == 4447.8
    assert links.at["1-2", "latency_ms"] == pytest.approx(float(geo.latency_ms(4447.8)), abs=1e-4)
    assert links.at["3-1", "latency_ms"] == 12.0


@pytest.mark.parametrize(("text", "fragment"), [
    ("{not json", "not valid JSON"),
    ('{"nodes": []}', "no 'links' or 'edges'"),
    ('[1, 2]', "no 'nodes' list"),
    ('{"nodes": [{"name": "x"}], "links": []}', "node without an 'id'"),
    ('{"nodes": [{"id": 1, "pos": [0, 0]}], "links": [{"source": 1}]}', "edge without 'source' and 'target'"),
])
def test_node_link_malformed_documents(tmp_path: Path, text: str, fragment: str) -> None:
    p = tmp_path / "g.json"
    p.write_text(text)
    with pytest.raises(ValidationError) as err:
        load_node_link(p)
    assert fragment in str(err.value)
    assert err.value.problems[0].file == str(p)


def test_node_link_bad_values_go_through_validation(tmp_path: Path) -> None:
    doc = {"directed": False, "nodes": [{"id": "a", "lon": 0, "lat": 0}, {"id": "b", "lon": 1, "lat": 1}],
           "links": [{"source": "a", "target": "b", "capacity": "fast"}, {"source": "a", "target": "b", "capacity": 0},
                     {"source": "a", "target": "z", "capacity": 1}]}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as err:
        load_node_link(p)
    got = {(q.record, q.field) for q in err.value.problems}
    assert got == {("a-b", "capacity_gbps"), ("a-b~1", "capacity_gbps"), ("a-z", "site_b")}
    with pytest.raises(ValidationError, match="default_region"):
        load_node_link(p, default_region="MARS")


# ---------------------------------------------------------------------------------- traffic matrix
def test_traffic_matrix_csv() -> None:
    net = load_node_link(DATA / "teal_like.json", allow_missing_coordinates=True)
    tm = load_traffic_matrix_csv(DATA / "tm.csv", net)
    assert list(tm.index) == ["0-1", "0-2", "2-3", "3-0"]  # zeros and the diagonal dropped
    assert tm["demand_gbps"].tolist() == [12.5, 3.25, 7.0, 1.5]
    assert (tm["traffic_class"] == "bulk").all() and tm["slo_rtt_ms"].isna().all()
    te = net.copy_with(demands=tm)
    assert te.summary()["demand_gbps"] == 24.25
    kept = load_traffic_matrix_csv(DATA / "tm.csv", net, unit_gbps=2.0, traffic_class="training", keep_zero=True)
    assert list(kept.index) == ["0-1", "0-2", "1-0", "2-3", "3-0"]
    assert kept.at["0-1", "demand_gbps"] == 25.0 and (kept["traffic_class"] == "training").all()


def test_traffic_matrix_problems_name_row_and_field(tmp_path: Path) -> None:
    net = load_node_link(DATA / "teal_like.json", allow_missing_coordinates=True)
    p = tmp_path / "tm.csv"
    p.write_text("src,dst,demand\n0,1,1\n0,9,2\n2,2,3\n1,3,lots\n3,0,-1\n0,1,4\n")
    with pytest.raises(ValidationError) as err:
        load_traffic_matrix_csv(p, net)
    got = {(q.record, q.field, q.message.split(" ")[0]) for q in err.value.problems}
    assert got == {("row 3", "dst", "unknown"), ("row 4", "dst", "demand"), ("row 5", "demand", "expected"),
                   ("row 6", "demand", "must"), ("row 7", "dst", "pair")}
    assert all(q.file == str(p) for q in err.value.problems)
    p.write_text("from,to,demand\n0,1,1\n")
    with pytest.raises(ValidationError) as err:
        load_traffic_matrix_csv(p, net)
    assert {q.field for q in err.value.problems} == {"src", "dst"}
    with pytest.raises(NotFoundError):
        load_traffic_matrix_csv(tmp_path / "none.csv", net)


# ---------------------------------------------------------------------------------- CLI
def test_cli_info_reads_importer_formats() -> None:
    from backbone.api.cli.main import app

    for path, sites in ((DATA / "tiny.graphml", 4), (DATA / "topohub_like.json", 4)):
        result = CliRunner().invoke(app, ["info", str(path), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["sites"] == sites
    result = CliRunner().invoke(app, ["info", str(DATA / "uncoordinated.graphml")])
    assert result.exit_code == 2
    assert "uncoordinated.graphml:h:lon" in result.stderr and "Traceback" not in result.output


# ---------------------------------------------------------------------------------- conformance data
@pytest.mark.slow
def test_topology_zoo_every_fully_coordinated_graph_loads() -> None:
    zoo = conformance_dir() / "topologyzoo"
    index = pd.read_csv(zoo / "INDEX.csv").set_index("name")
    full = index.index[index["nodes"] == index["nodes_with_lat_lon"]]
    assert len(full) == 85
    for name in full:
        net = load_graphml(zoo / "graphml" / f"{name}.graphml")
        assert len(net.sites) == index.at[name, "nodes"], name
        assert len(net.links) + net.meta["import"]["self_loops_dropped"] == index.at[name, "edges"], name
        assert net.sites["lon"].between(-180, 180).all() and (net.links["capacity_gbps"] > 0).all()
        assert (net.sites["country"] != "").mean() > 0.9, name


@pytest.mark.slow
def test_topology_zoo_partially_coordinated_graphs_name_their_nodes() -> None:
    zoo = conformance_dir() / "topologyzoo"
    index = pd.read_csv(zoo / "INDEX.csv").set_index("name")
    partial = index.index[index["nodes"] != index["nodes_with_lat_lon"]]
    assert len(partial) == 191
    for name in partial[::8]:  # a spread sample keeps the test quick; every one loads in the benchmark
        path = zoo / "graphml" / f"{name}.graphml"
        with pytest.raises(ValidationError) as err:
            load_graphml(path)
        missing = index.at[name, "nodes"] - index.at[name, "nodes_with_lat_lon"]
        assert len(err.value.problems) == missing, name
        assert all(p.file == str(path) and p.field == "lon" and p.record for p in err.value.problems)
        net = load_graphml(path, drop_uncoordinated=True)
        assert len(net.sites) == index.at[name, "nodes_with_lat_lon"], name


@pytest.mark.slow
def test_topohub_every_file_loads_with_the_published_counts() -> None:
    hub = conformance_dir() / "topohub"
    stats = pd.read_csv(hub / "stats_table.csv")
    stats = stats.set_index(stats["set"] + "/" + stats["name"])
    files = sorted(hub.glob("*/*.json"))
    assert len(files) == 46
    planar = []
    for path in files:
        key = f"{path.parent.name}/{path.stem}"
        try:
            net = load_node_link(path)
        except ValidationError as err:
            assert all("is outside [" in p.message for p in err.problems), key
            planar.append(path.stem)
            net = load_node_link(path, allow_missing_coordinates=True)
            assert net.meta["coordinates"] == "scaled-planar"
        else:
            if path.parent.name == "sndlib" or path.stem == "north_america":
                # the door the CLI and the API use recognises the format (demands come before nodes)
                assert load_scenario(path).equals(net), key
        assert len(net.sites) == stats.at[key, "nodes"], key
        assert len(net.links) == stats.at[key, "links"], key
        if path.parent.name == "sndlib":
            assert len(net.demands) > 0, key
    # SNDlib networks published with drawing coordinates rather than lon/lat
    assert sorted(planar) == ["atlanta", "di-yuan", "france", "giul39", "newyork", "norway", "pioro40", "sun",
                              "ta1", "ta2", "zib54"]


def test_topohub_world_backbone() -> None:
    path = conformance_dir() / "topohub" / "backbone" / "world.json"
    raw = json.loads(path.read_text())
    net = load_node_link(path)
    assert len(net.sites) == 3815 and len(net.links) == 5189
    seacable = sum(e["type"] == "seacable" for e in raw["edges"])
    assert net.summary()["links_by_kind"] == {"submarine": seacable, "terrestrial": 5189 - seacable}
    assert set(net.sites["region"]) == {"NA", "LATAM", "EMEA", "AFRICA", "APAC"}
    # TopoHub's lengths are haversine (R = 6372.8 km) on unrounded positions, the file's positions are
    # rounded to 0.01 degree (~1 km): over 300 km the WGS84 geodesic agrees within 0.75 %
    dist = pd.Series({f"{e['source']}-{e['target']}": e["dist"] for e in raw["edges"]})
    sub = net.links[net.links["kind"] == "submarine"]
    np.testing.assert_array_equal(sub["length_km"].to_numpy(), dist.loc[sub.index].to_numpy())
    ter = net.links[net.links["kind"] == "terrestrial"]
    ratio = ter["length_km"] / (dist.loc[ter.index] * geo.DEFAULT_ROUTE_FACTOR)
    long_enough = dist.loc[ter.index] > 300
    assert long_enough.sum() > 400
    assert ratio[long_enough].between(0.9925, 1.0075).all()


@pytest.mark.slow
def test_teal_topologies_and_b4_traffic_matrices() -> None:
    teal = conformance_dir() / "teal"
    for name in ("B4", "UsCarrier", "Kdl"):
        path = teal / "topologies" / f"{name}.json"
        raw = json.loads(path.read_text())
        with pytest.raises(ValidationError):
            load_node_link(path)
        net = load_node_link(path, allow_missing_coordinates=True)
        pairs = {frozenset((e["source"], e["target"])) for e in raw["links"]}
        assert len(net.sites) == len(raw["nodes"]) and len(net.links) == len(pairs), name
        caps = {(str(e["source"]), str(e["target"])): e["capacity"] for e in raw["links"]}
        expected = [min(caps.get((a, b), math.inf), caps.get((b, a), math.inf))
                    for a, b in zip(net.links["site_a"], net.links["site_b"], strict=True)]
        assert net.links["capacity_gbps"].tolist() == expected, name
        assert (net.links["latency_ms"] == 1.0).all()
    b4 = load_node_link(teal / "topologies" / "B4.json", allow_missing_coordinates=True)
    index = pd.read_csv(teal / "TM_INDEX.csv")
    index = index[index["source_pkl"].str.startswith("B4.json_real_")]  # the B4 matrices ship as CSV
    assert len(index) == 36
    for row in index.itertuples():
        csv = teal / "traffic-matrices" / row.source_pkl.replace("_traffic-matrix.pkl", ".tm.csv")
        tm = load_traffic_matrix_csv(csv, b4)
        assert len(tm) == row.nonzeros
        assert tm["demand_gbps"].sum() == pytest.approx(row.total, rel=1e-12)
        assert tm["demand_gbps"].max() == pytest.approx(row.max, rel=1e-12)


# ---------------------------------------------------------------------------------- robustness
@pytest.mark.slow
def test_node_link_never_fails_with_anything_but_a_validation_error(tmp_path: Path) -> None:
    """Arbitrary JSON shaped roughly like node-link: the loader returns a network or raises
    ValidationError (the API maps that to 422), never KeyError/TypeError/AttributeError."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    scalar = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.floats(allow_nan=True),
                       st.text(max_size=4))
    value = st.one_of(scalar, st.lists(scalar, max_size=3), st.dictionaries(st.text(max_size=3), scalar, max_size=2))
    ids = st.one_of(st.integers(0, 4), st.text("abc", min_size=1, max_size=1))
    node = st.fixed_dictionaries({"id": ids}, optional={
        "pos": st.one_of(st.lists(st.floats(-200, 200), min_size=2, max_size=2), value),
        "lon": value, "lat": value, "name": value, "type": value, "region": value, "country": value})
    edge = st.fixed_dictionaries({"source": ids, "target": ids}, optional={
        "capacity": value, "capacity_gbps": value, "dist": value, "type": value, "kind": value,
        "latency_ms": value, "weight": value, "key": value, "length_km": value})
    graph = st.one_of(value, st.fixed_dictionaries(
        {"demands": st.dictionaries(ids.map(str), st.dictionaries(ids.map(str), value, max_size=3), max_size=3)}))
    noisy = st.builds(
        lambda nodes, key, edges, directed, g: {"nodes": nodes, key: edges, "directed": directed, "graph": g},
        st.lists(st.one_of(node, value), max_size=5), st.sampled_from(["links", "edges"]),
        st.lists(st.one_of(edge, value), max_size=6), value, graph)
    # mostly well-formed documents with the odd bad value, so that loads also succeed
    lonlat = st.tuples(st.floats(-180, 180), st.floats(-90, 90)).map(list)
    # endpoints always distinct (a self-loop is rightly rejected) and capacities mostly valid, so that a fair
    # share of these documents loads whatever hypothesis version draws them
    tidy_ends = st.tuples(st.integers(0, 3), st.integers(1, 3)).map(lambda t: {"source": t[0], "target": (t[0] + t[1]) % 4})
    tidy_edge = st.builds(lambda ends, extra: {**ends, **extra}, tidy_ends, st.fixed_dictionaries({},
        optional={"capacity": st.floats(0.5, 1e4), "dist": st.floats(1, 2e4),
                  "type": st.sampled_from(["seacable", "normal", "x"]), "weight": st.floats(0.1, 100)}))
    tidy = st.builds(
        lambda pos, edges, directed, g: {"nodes": [{"id": i, "pos": p} for i, p in enumerate(pos)], "links": edges,
                                         "directed": directed, "graph": g},
        st.lists(lonlat, min_size=4, max_size=4),
        st.lists(tidy_edge, max_size=8), st.booleans(),
        st.one_of(st.just({}), st.fixed_dictionaries({"demands": st.dictionaries(
            st.integers(0, 3).map(str), st.dictionaries(st.integers(0, 3).map(str), st.floats(0, 1e3)))}), graph))
    doc = st.one_of(noisy, tidy, tidy)  # the noisy documents test the errors, the tidy ones the loads
    loaded: list[int] = []

    @settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(doc=doc, allow=st.booleans())
    def check(doc: dict, allow: bool) -> None:  # type: ignore[type-arg]
        p = tmp_path / "g.json"
        p.write_text(json.dumps(doc))
        try:
            net = load_node_link(p, allow_missing_coordinates=allow)
        except ValidationError as err:
            assert err.problems and all(q.file for q in err.problems)
            return
        assert net.sites["lon"].between(-180, 180).all() and (net.links["capacity_gbps"] > 0).all()
        loaded.append(len(net.links))

    check()
    assert sum(n > 0 for n in loaded) >= 10, "the strategy should also produce loadable networks"


# ---------------------------------------------------------------------------------- cable waypoints
def test_collapse_waypoints_folds_cable_chains() -> None:
    net = load_node_link(DATA / "topohub_like.json", collapse_waypoints=True)
    assert list(net.sites.index) == ["0", "1", "3"]
    assert list(net.links.index) == ["0-1", "1-3"]
    cable = net.links.loc["1-3"]
    assert (cable["kind"], cable["waypoints"]) == ("submarine", "-20.0000 30.0000")
    assert cable["length_km"] == pytest.approx(1466.2 + 4170.9)
    # one cable, one equipment delay (the waypoint was never a hop)
    assert cable["latency_ms"] == pytest.approx(float(geo.latency_ms(1466.2 + 4170.9)), abs=1e-4)
    assert net.meta["import"]["waypoint_nodes_folded"] == 1 and net.meta["import"]["cable_chains_merged"] == 1


def test_collapse_waypoints_keeps_branches_and_drops_loops(tmp_path: Path) -> None:
    def node(i: int, lon: float, lat: float, kind: str = "Seacable Waypoint") -> dict[str, object]:
        return {"id": i, "pos": [lon, lat], "type": kind, "name": f"n{i}"}

    def edge(a: int, b: int, dist: float = 100.0) -> dict[str, object]:
        return {"source": a, "target": b, "type": "seacable", "dist": dist}

    nodes = [node(0, 0, 0, "Seacable Landing Point"), node(1, 5, 0, "Seacable Landing Point"),
             node(2, 2, 1, "Seacable Landing Point"),
             node(10, 1, -1), node(11, 3, -1),  # chain 0 - 10 - 11 - 1
             node(20, 2.5, 2),  # branching unit: 20 joins 2, 30 and 31
             node(30, 2.2, 3), node(31, 3, 3),  # 20 - 30 - 2 and 20 - 31 - 1
             node(40, 0, 2), node(41, -1, 2),  # festoon 0 - 40 - 41 - 0 (back to its start)
             node(50, 10, 10), node(51, 11, 10), node(52, 10.5, 11)]  # a closed ring of waypoints
    edges = [edge(0, 10), edge(10, 11), edge(11, 1), edge(2, 20, 50), edge(20, 30), edge(30, 2), edge(20, 31),
             edge(31, 1), edge(0, 40), edge(40, 41), edge(41, 0), edge(50, 51), edge(51, 52), edge(52, 50),
             {"source": 0, "target": 2, "type": "normal", "dist": 250.0}]
    p = tmp_path / "cables.json"
    p.write_text(json.dumps({"directed": False, "nodes": nodes, "edges": edges}))
    net = load_node_link(p, collapse_waypoints=True)
    assert sorted(net.sites.index) == ["0", "1", "2", "20"]
    links = net.links
    assert sorted(links.index) == ["0-1", "0-2", "2-20", "20-1", "20-2"]
    assert links.at["0-1", "waypoints"] == "1.0000 -1.0000; 3.0000 -1.0000" and links.at["0-1", "length_km"] == 300
    assert links.at["20-2", "waypoints"] == "2.2000 3.0000"  # walked from the branching unit
    assert links.at["2-20", "waypoints"] == "" and links.at["0-2", "kind"] == "terrestrial"
    info = net.meta["import"]
    assert (info["waypoint_nodes_folded"], info["cable_chains_merged"], info["waypoint_loops_dropped"],
            info["ring_links_dropped"]) == (9, 3, 1, 3)


@pytest.mark.slow
def test_topohub_world_with_collapsed_cables() -> None:
    path = conformance_dir() / "topohub" / "backbone" / "world.json"
    plain = load_node_link(path)
    net = load_node_link(path, collapse_waypoints=True)
    folded = net.meta["import"]["waypoint_nodes_folded"]
    assert folded == 1736  # the degree-2 waypoints; 213 branching ones stay
    assert len(net.sites) == 3815 - folded and len(net.links) == 5189 - folded
    assert (net.sites["node_type"] == "Seacable Waypoint").sum() == 213
    sub = lambda n: n.links.loc[n.links["kind"] == "submarine", "length_km"].sum()  # noqa: E731
    assert sub(net) == pytest.approx(sub(plain), rel=1e-9)  # every kilometre of cable kept
    assert net.links.loc[net.links["kind"] == "terrestrial"].equals(
        plain.links.loc[plain.links["kind"] == "terrestrial"])


def test_colocated_sites_get_the_minimum_length_and_round_trip(tmp_path: Path) -> None:
    from backbone.model import MIN_LINK_LENGTH_KM

    sites = [dict(id=i, lon=4.9, lat=52.37, region="EMEA") for i in ("a", "b")] + [
        dict(id="c", lon=4.35, lat=50.85, region="EMEA")]
    links = [dict(id="ab", site_a="a", site_b="b", capacity_gbps=10.0),
             dict(id="bc", site_a="b", site_b="c", capacity_gbps=10.0)]
    net = make_network(sites, links)
    assert net.links.at["ab", "length_km"] == MIN_LINK_LENGTH_KM == 0.1
    assert net.links.at["ab", "latency_ms"] > 0
    again = load_scenario(save_scenario(net, tmp_path / "x.json"))
    assert again.links.at["ab", "length_km"] == pytest.approx(0.1)


@pytest.mark.parametrize("name", ["Quest", "TataNld"])
def test_convert_output_of_colocated_zoo_graphs_loads_again(name: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app

    src = conformance_dir() / "topologyzoo" / "graphml" / f"{name}.graphml"
    out = tmp_path / f"{name}.json"
    r = CliRunner().invoke(app, ["convert", str(src), "--drop-uncoordinated", "--out", str(out)])
    assert r.exit_code == 0, r.output
    info = CliRunner().invoke(app, ["info", str(out), "--json"])
    assert info.exit_code == 0, info.output
    assert (load_scenario(out).links["length_km"] >= 0.1).all()
