"""Maps draw candidate routes apart (dotted grey), highlight built ones, and colour links by failure impact."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from backbone.maps import render_map_bytes, style
from backbone.maps.values import impact_by_link, map_values
from backbone.model import Network
from backbone.validate import build_network

SITES = [
    {"id": "NY", "name": "New York", "lon": -74.0, "lat": 40.7, "region": "NA"},
    {"id": "WDC", "name": "Washington", "lon": -77.0, "lat": 38.9, "region": "NA"},
    {"id": "LON", "name": "London", "lon": -0.1, "lat": 51.5, "region": "EMEA"},
    {"id": "PAR", "name": "Paris", "lon": 2.35, "lat": 48.86, "region": "EMEA"},
]
LINKS = [
    {"id": "ny-wdc", "site_a": "NY", "site_b": "WDC", "capacity_gbps": 1000},
    {"id": "lon-par", "site_a": "LON", "site_b": "PAR", "capacity_gbps": 1000},
    {"id": "tat-1", "site_a": "NY", "site_b": "LON", "kind": "submarine", "cable_system": "TAT",
     "capacity_gbps": 400, "waypoints": "-50 45; -20 50"},
]
SRLGS = [{"id": "atlantic", "kind": "corridor", "links": "tat-1"},
         {"id": "us-east", "kind": "conduit", "links": "ny-wdc"}]
CANDIDATES = [
    {"id": "c-south", "name": "Southern cable", "site_a": "WDC", "site_b": "PAR", "kind": "cable",
     "link_kind": "submarine", "cable_system": "Nova", "waypoints": "-60 38; -10 46", "module_gbps": 20000,
     "module_cost_usd": 3e7, "fixed_cost_usd": 1.5e8, "max_modules": 2, "lead_time_quarters": 8,
     "available_from": "2027Q3", "srlgs": "atlantic"},
    {"id": "c-ny-wdc-2", "site_a": "NY", "site_b": "WDC", "kind": "backhaul", "link_kind": "terrestrial",
     "module_gbps": 400, "module_cost_usd": 8e4, "max_modules": 16, "lead_time_quarters": 3},
]


@pytest.fixture(scope="module")
def net() -> Network:
    return build_network({"sites": SITES, "links": LINKS, "srlgs": SRLGS, "candidates": CANDIDATES}, name="cands")


@pytest.fixture(scope="module")
def after(net: Network) -> Network:
    return net.with_candidates_built({"c-south": 1})


BUILT = {"map": {"built_candidates": ["c-south"]}}


def svg_text(data: bytes) -> str:
    return " ".join(t.text or "" for t in ET.fromstring(data).iter() if t.tag.endswith("text"))


def test_static_map_draws_candidates_dotted_grey_with_a_legend_entry(net: Network) -> None:
    svg = render_map_bytes(net, "svg", size="960x540")
    assert "Candidate route (not built)" in svg_text(svg)
    assert "New route (built candidate)" not in svg_text(svg)
    assert style.CANDIDATE.lower() in svg.decode().lower()
    bare = render_map_bytes(net, "svg", size="960x540", candidates=False)
    assert "Candidate route (not built)" not in svg_text(bare)


def test_static_map_highlights_built_candidates(after: Network) -> None:
    import matplotlib.image as mpimg

    text = svg_text(render_map_bytes(after, "svg", BUILT, size="960x540"))
    assert "New route (built candidate)" in text
    assert "Candidate route (not built)" in text  # c-ny-wdc-2 is still a candidate
    def greenish(png: bytes) -> int:  # the glow (BUILT at alpha 0.55 over land or sea) is clearly green
        img = mpimg.imread(io.BytesIO(png), format="png")[..., :3] * 255.0
        r, g, b = img[..., 0], img[..., 1], img[..., 2]
        return int(((g - r > 50) & (g - b > 35)).sum())

    glow = greenish(render_map_bytes(after, "png", BUILT, size="960x540"))
    assert glow > 200
    assert greenish(render_map_bytes(after, "png", size="960x540")) < glow / 10


def test_html_map_carries_candidates_and_built_flags(after: Network) -> None:
    page = render_map_bytes(after, "html", BUILT).decode()
    data = json.loads(re.search(r'<script id="map-data" type="application/json">(.*?)</script>', page, re.S)
                      .group(1).replace("<\\/", "</"))
    assert [c["id"] for c in data["candidates"]] == ["c-ny-wdc-2"]
    assert all(len(v["candidates"]) == 1 for v in data["views"])
    built = {r["id"]: r["built"] for r in data["links"]}
    assert built["c-south"] is True and built["tat-1"] is False
    assert "Candidate routes (not built)" in page and "New route (built candidate)" in page
    off = json.loads(re.search(r'<script id="map-data" type="application/json">(.*?)</script>',
                               render_map_bytes(after, "html", candidates=False).decode(), re.S).group(1)
                     .replace("<\\/", "</"))
    assert off["candidates"] == [] and all(v["candidates"] == [] for v in off["views"])


def test_geojson_has_candidate_features_and_built_property(net: Network, after: Network) -> None:
    doc = json.loads(render_map_bytes(net, "geojson"))
    cands = [f for f in doc["features"] if f["properties"]["feature_type"] == "candidate"]
    assert sorted(f["properties"]["id"] for f in cands) == ["c-ny-wdc-2", "c-south"]
    south = next(f for f in cands if f["properties"]["id"] == "c-south")
    assert south["properties"]["srlgs"] == "atlantic" and south["properties"]["available_from"] == "2027Q3"
    assert south["geometry"]["type"] in ("LineString", "MultiLineString")
    doc2 = json.loads(render_map_bytes(after, "geojson", BUILT))
    links = {f["properties"]["id"]: f["properties"] for f in doc2["features"] if f["properties"]["feature_type"] == "link"}
    assert links["c-south"]["built_candidate"] == 1 and links["tat-1"].get("built_candidate") is None
    assert not [f for f in json.loads(render_map_bytes(net, "geojson", candidates=False))["features"]
                if f["properties"]["feature_type"] == "candidate"]


def test_kml_has_a_candidate_folder_and_a_built_style(after: Network) -> None:
    root = ET.fromstring(render_map_bytes(after, "kml", BUILT))
    ns = {"k": "http://www.opengis.net/kml/2.2"}
    folders = {f.findtext("k:name", namespaces=ns): f for f in root.iter("{http://www.opengis.net/kml/2.2}Folder")}
    assert len(folders["Candidate routes (not built)"].findall("k:Placemark", ns)) == 1
    south = next(p for p in folders["Links"].findall("k:Placemark", ns)
                 if any(d.findtext("k:value", namespaces=ns) == "c-south" for d in p.iter("{http://www.opengis.net/kml/2.2}Data")))
    assert south.findtext("k:styleUrl", namespaces=ns) == "#link-built"


def test_unknown_built_candidates_are_ignored(net: Network) -> None:
    mv = map_values(net, {"built_candidates": ["c-south", "tat-1"]})
    assert mv.built_candidates == ("tat-1",)  # c-south is not a link of this (unbuilt) network


# ---------------------------------------------------------------------- impact from a failures result
def _failures_result() -> dict[str, Any]:
    return {"scenarios": [
        {"scenario": "srlg:atlantic", "kind": "srlg", "failed": ["atlantic"], "impact_gbps": 700.0},
        {"scenario": "link:tat-1", "kind": "link", "failed": ["tat-1"], "impact_gbps": 500.0},
        {"scenario": "site:WDC", "kind": "site", "failed": ["WDC"], "impact_gbps": 300.0},
        {"scenario": "srlg:us-east", "kind": "srlg", "failed": ["us-east"], "impact_gbps": 0.0},
    ], "map": {"link_values": {"utilisation": {"tat-1": 0.5}}, "failed_links": ["tat-1"],
               "title": "Worst utilisation over 4 failure scenarios"}}


def test_impact_by_link_is_the_worst_impact_of_the_failures_taking_it_down(net: Network) -> None:
    impact = impact_by_link(net, _failures_result())
    assert impact is not None
    assert impact.to_dict() == {"tat-1": 700.0, "ny-wdc": 300.0}
    assert impact_by_link(net, {"summary": _failures_result()}).to_dict() == impact.to_dict()
    assert impact_by_link(net, {"map": {}}) is None


def test_map_colour_by_impact_from_a_failures_result(net: Network) -> None:
    svg = render_map_bytes(net, "svg", _failures_result(), color_by="impact", size="960x540")
    text = svg_text(svg)
    assert "failure impact" in text and "Impact (Gbps)" in text
    assert "Worst utilisation" not in text  # the result's title describes its utilisation values
    assert "Failed link" not in text  # per-link impact over all scenarios, not the worst one's failed link


@pytest.mark.slow
def test_cli_map_colour_by_impact_with_a_failures_result(tmp_path: Path) -> None:
    """End to end: ``backbone failures`` writes failures.json; ``backbone map --color-by impact`` draws it."""
    from typer.testing import CliRunner

    from backbone.api.cli.main import app

    small = Path(__file__).resolve().parent.parent / "data" / "small"
    runner = CliRunner()
    r = runner.invoke(app, ["failures", str(small), "--kind", "link", "--out", str(tmp_path / "f")])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "f" / "failures.json").read_text())
    assert any(s["impact_gbps"] > 0 for s in doc["scenarios"])
    for suffix in ("svg", "html", "geojson", "kml"):
        out = tmp_path / f"impact.{suffix}"
        r = runner.invoke(app, ["map", str(small), "--color-by", "impact", "--result", str(tmp_path / "f" / "failures.json"),
                                "--out", str(out), "--size", "960x540", "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["bytes"] == out.stat().st_size
    assert "Impact (Gbps)" in svg_text((tmp_path / "impact.svg").read_bytes())
    props = {f["properties"]["id"]: f["properties"] for f in json.loads((tmp_path / "impact.geojson").read_text())["features"]
             if f["properties"]["feature_type"] == "link"}
    expected = {s["failed"][0]: s["impact_gbps"] for s in doc["scenarios"]}
    assert {k: v["impact_gbps"] for k, v in props.items()} == pytest.approx(expected)


@pytest.mark.slow
@pytest.mark.browser
def test_html_with_candidates_draws_in_chromium_without_console_errors(after: Network, tmp_path: Path) -> None:
    from backbone.maps import export_map
    from tests.backbone.test_maps_html import console_messages, run_chromium

    html_file = export_map(after, tmp_path / "map.html", result=BUILT)
    dom = run_chromium(html_file, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    assert 'data-ready="1"' in dom.stdout
    assert dom.stdout.count('class="candidate"') == 1
    assert dom.stdout.count('class="link"') == len(after.links)
    assert "Candidate route (not built)" in dom.stdout and "New route (built candidate)" in dom.stdout
