"""Maps: seam cutting, static PNG/SVG/PDF looked at like a person would, GeoJSON, KML, values, CLI."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backbone.errors import ValidationError
from backbone.maps import export_map, make_view, map_values, render_map_bytes
from backbone.maps import style as map_style
from backbone.maps.basemap import load_countries, projected_basemap
from backbone.maps.layers import build_layers
from backbone.model import Network
from backbone.paths import basemap_path, default_scenario_path
from tests import nets
from tests.nets import make_network, pacific_network

SMALL = "640x360"
TRANS_PACIFIC = ("lax-tyo", "sea-tyo", "hnl-syd")


@pytest.fixture(scope="module")
def pacific() -> Network:
    return pacific_network()


def result_for(net: Network) -> dict[str, Any]:
    util = dict(zip(net.links.index, np.linspace(0.05, 1.3, len(net.links)).round(3).tolist(), strict=True))
    return {"status": "optimal", "map": {
        "link_values": {"utilisation": util, "delta_utilisation": {"lax-tyo": 0.3, "lax-sea": -0.1}},
        "site_values": {"gpus_added": {"TYO": 5000.0, "DFW": 0.0}},
        "failed_links": ["sea-tyo"],
        "assignments": [{"metro": "m-sf", "site": "DFW", "gpus": 100}, {"metro": "m-osa", "site": "TYO", "gpus": 300}],
    }}


def rgb(hex_color: str) -> np.ndarray:
    h = hex_color.lstrip("#")
    return np.array([int(h[i:i + 2], 16) for i in (0, 2, 4)], dtype=float)


def png_pixels(data: bytes) -> np.ndarray:
    import matplotlib.image as mpimg

    img = mpimg.imread(io.BytesIO(data), format="png")
    return (img[..., :3] * 255.0).round()


def near(img: np.ndarray, hex_color: str, tol: float = 7.0) -> np.ndarray:
    return np.abs(img - rgb(hex_color)).max(axis=-1) <= tol


# ---------------------------------------------------------------------- basemap and seams
def test_basemap_ships_every_country_in_lon_lat() -> None:
    assert basemap_path().is_file()
    geoms, names = load_countries()
    assert len(names) == 177 and {"Fiji", "Russia", "United States of America", "Antarctica"} <= set(names)
    import shapely

    bounds = shapely.total_bounds(geoms)
    assert bounds[0] >= -180 and bounds[2] <= 180 and bounds[1] >= -90 and bounds[3] <= 90


@pytest.mark.parametrize("center", [0.0, 150.0, -100.0])
def test_no_projected_line_jumps_across_the_map(pacific: Network, center: float) -> None:
    view = make_view(center)
    xmin, xmax, _, _ = view.extent()
    limit = (xmax - xmin) / 3.0
    layers = build_layers(pacific, map_values(pacific, result_for(pacific)), view)
    lines = [p for parts in layers.link_parts for p in parts] + [p for parts in layers.assignment_parts for p in parts]
    base = projected_basemap(view)
    for part in lines + base.country_rings + base.coast_rings:
        assert np.abs(np.diff(part[:, 0])).max(initial=0.0) < limit
    # every link is drawn, and its parts stay inside the map
    assert all(layers.link_parts)
    allx = np.concatenate([p[:, 0] for p in lines])
    assert allx.min() >= xmin - 1.0 and allx.max() <= xmax + 1.0


def test_pacific_view_keeps_trans_pacific_cables_whole(pacific: Network) -> None:
    pos = {lid: i for i, lid in enumerate(pacific.links.index)}
    world = build_layers(pacific, map_values(pacific), make_view(0.0))
    pacific_view = build_layers(pacific, map_values(pacific), make_view(150.0))
    for lid in TRANS_PACIFIC:
        assert len(world.link_parts[pos[lid]]) == 2, lid  # cut at the antimeridian (the seam at 0E)
        assert len(pacific_view.link_parts[pos[lid]]) == 1, lid  # continuous across the Pacific
    # a cable that does not cross the seam is one piece in both
    assert len(world.link_parts[pos["nyc-lon"]]) == 1
    # in the Pacific view Tokyo is left of Los Angeles; in the Atlantic view it is right of it
    sites = list(pacific.sites.index)
    t, la = sites.index("TYO"), sites.index("LAX")
    assert pacific_view.site_xy[t, 0] < pacific_view.site_xy[la, 0]
    assert world.site_xy[t, 0] > world.site_xy[la, 0]


def test_pacific_view_cuts_the_atlantic_instead(pacific: Network) -> None:
    pos = list(pacific.links.index).index("nyc-lon")
    layers = build_layers(pacific, map_values(pacific), make_view(150.0))
    # the seam of a 150E view is at 30W: the Atlantic cable (waypoints 50W, 20W) crosses it
    assert len(layers.link_parts[pos]) == 2


def test_basemap_polygons_are_cut_at_the_seam() -> None:
    import shapely

    view = make_view(150.0)
    xmin, xmax, _, _ = view.extent()
    base = projected_basemap(view)
    xs = np.concatenate([r[:, 0] for r in base.country_rings])
    assert xs.min() >= xmin - 1 and xs.max() <= xmax + 1
    # Greenland (73W-12W) straddles the 30W seam of a 150E view: one piece on each edge of the map
    geoms, names = load_countries()
    greenland = view.project_polygons(geoms[[names.index("Greenland")]])[0]
    pieces = shapely.get_parts(greenland)
    assert len(pieces) >= 2
    centroids = shapely.get_x(shapely.centroid(pieces))
    assert centroids.min() < 0.3 * xmin and centroids.max() > 0.3 * xmax
    # the same country is whole when the seam is elsewhere
    assert len(shapely.get_parts(make_view(0.0).project_polygons(geoms[[names.index("Greenland")]])[0])) == 1


# ---------------------------------------------------------------------- static maps
@pytest.mark.parametrize("center", [0.0, 150.0])
def test_png_shows_land_sea_and_links(pacific: Network, center: float) -> None:
    data = render_map_bytes(pacific, "png", color_by="kind", center_lon=center, size=SMALL)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = png_pixels(data)
    assert img.shape[:2] == (360, 640)
    land, ocean = near(img, map_style.LAND).sum(), near(img, map_style.OCEAN).sum()
    globe = land + ocean
    assert 0.35 < globe / img[..., 0].size < 0.85
    # about 29 % of the Earth is land; Equal Earth is equal-area, borders and links eat a little
    assert 0.18 < land / globe < 0.36
    for kind in ("terrestrial", "submarine"):
        assert near(img, map_style.KIND_COLORS[kind], tol=30).sum() > 15, kind


def test_png_colours_links_by_utilisation_with_overload_distinct(pacific: Network) -> None:
    res = result_for(pacific)
    img = png_pixels(render_map_bytes(pacific, "png", res, size="960x540", labels=False))
    assert near(img, map_style.OVERLOAD, tol=25).sum() > 10  # the link above 100 %
    assert near(img, map_style.FAILED, tol=30).sum() > 5  # the dashed failed cable
    assert near(img, map_style.ADDED, tol=30).sum() > 5  # the GPUs-added ring at Tokyo


def test_sizes_are_exact_pixels(pacific: Network) -> None:
    for size, shape in (("480x270", (270, 480)), ("800x600", (600, 800))):
        assert png_pixels(render_map_bytes(pacific, "png", size=size, labels=False)).shape[:2] == shape


def test_svg_parses_and_has_paths_and_labels(pacific: Network) -> None:
    data = render_map_bytes(pacific, "svg", result_for(pacific), size=SMALL)
    root = ET.fromstring(data)
    ns = "{http://www.w3.org/2000/svg}"
    paths = root.findall(f".//{ns}path")
    assert len(paths) > 20
    texts = "".join("".join(t.itertext()) for t in root.iter(f"{ns}text"))
    assert "Tokyo" in texts and "pacific-test" in texts


@pytest.mark.slow
def test_pdf_is_a_pdf(pacific: Network, tmp_path: Path) -> None:
    out = export_map(pacific, tmp_path / "m.pdf", center_lon=150, size=SMALL)
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")


@pytest.mark.slow
def test_regional_views_and_bbox(pacific: Network) -> None:
    for region in ("na", "emea", "apac", "100,-50,-120,60"):
        img = png_pixels(render_map_bytes(pacific, "png", region=region, size=SMALL, labels=False))
        assert near(img, map_style.LAND).sum() > 0.05 * img[..., 0].size, region
        assert near(img, map_style.OCEAN).sum() > 0.05 * img[..., 0].size, region
    # a box across the antimeridian is centred on the Pacific
    assert make_view(0, "100,-50,-120,60").center_lon == pytest.approx(170.0)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"size": "big"}, "size"), ({"size": "10x10"}, "size"), ({"region": "mars"}, "region"),
    ({"region": "10,20,30"}, "region"), ({"region": "0,50,10,40"}, "region"), ({"center_lon": float("nan")}, "center_lon"),
    ({"color_by": "nope"}, "color_by"), ({"fmt": "bmp"}, "fmt"),
])
def test_bad_options_name_the_option(pacific: Network, tmp_path: Path, kwargs: dict[str, Any], field: str) -> None:
    out = tmp_path / "m.png"
    with pytest.raises(ValidationError) as err:
        export_map(pacific, out, **kwargs)
    assert err.value.problems[0].field == field
    assert not out.exists() and not list(tmp_path.iterdir())


def test_unknown_suffix_is_rejected(pacific: Network, tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as err:
        export_map(pacific, tmp_path / "m.bmp")
    assert err.value.problems[0].field == "out"


def test_values_from_top_level_and_unknown_ids(pacific: Network, caplog: pytest.LogCaptureFixture) -> None:
    top = map_values(pacific, {"link_values": {"utilisation": {"lax-tyo": 0.5, "ghost": 2.0}}})
    assert top.link_values["utilisation"].to_dict() == {"lax-tyo": 0.5}
    assert "ghost" in caplog.text
    with pytest.raises(ValidationError):
        map_values(pacific, {"map": {"link_values": {"utilisation": {"lax-tyo": "high"}}}})
    with pytest.raises(ValidationError):
        map_values(pacific, {"map": {"assignments": [{"gpus": 3}]}})


def test_colour_by_utilisation_and_fallback(pacific: Network) -> None:
    values = map_values(pacific, result_for(pacific))
    c = map_style.color_links(pacific.links, values.link_values, "utilisation")
    i_over = int(np.argmax(c.values))
    assert c.values[i_over] > 1.0 and c.colors[i_over] == map_style.OVERLOAD
    assert c.order[-1] == i_over  # the hottest link is drawn on top
    c0 = map_style.color_links(pacific.links, {}, "utilisation")
    assert c0.mode == "kind"
    d = map_style.color_links(pacific.links, values.link_values, "delta_utilisation")
    assert d.mode == "diverging" and d.norm.vcenter == 0.0


def test_colour_by_impact_and_size_by_power(pacific: Network) -> None:
    from backbone.maps.labels import site_sizes

    impact = {"impact_unmet_gbps": {"lax-tyo": 300.0, "nyc-lon": 100.0, "lax-sea": 0.0}}
    c = map_style.color_links(pacific.links, map_values(pacific, {"link_values": impact}).link_values, "impact")
    assert c.mode == "impact" and c.value_name == "impact_unmet_gbps" and c.label == "Impact unmet (Gbps)"
    pos = list(pacific.links.index)
    assert c.order[-1] == pos.index("lax-tyo") and c.colors[pos.index("lon-fra")] == map_style.NO_VALUE
    img = png_pixels(render_map_bytes(pacific, "png", {"link_values": impact}, color_by="impact", size=SMALL))
    assert near(img, map_style.IMPACT_STOPS[-1], tol=40).sum() > 5  # the worst link in the darkest colour
    by_mw, by_gpu = site_sizes(pacific, "mw"), site_sizes(pacific, "gpus")
    sites = list(pacific.sites.index)
    assert by_mw.argmax() == sites.index("IAD") and by_gpu.argmax() == sites.index("IAD")
    assert by_mw[sites.index("LON")] < by_gpu[sites.index("LON")]  # London has GPUs but no MW given
    # a placement result's gpus_after sizes the sites as built
    after = map_values(pacific, {"site_values": {"gpus_after": {"SIN": 80000.0}}})
    assert site_sizes(pacific, "gpus", after).argmax() == sites.index("SIN")


def test_result_map_title_is_used(pacific: Network) -> None:
    svg = render_map_bytes(pacific, "svg", {"map": {"title": "Worst utilisation over 9 failure scenarios"}},
                           size=SMALL)
    assert b"Worst utilisation over 9 failure scenarios" in svg
    assert b"explicit" in render_map_bytes(pacific, "svg", {"map": {"title": "x"}}, title="explicit", size=SMALL)


@pytest.mark.parametrize("center", [0.0, 150.0])
def test_labels_do_not_collide(center: float) -> None:
    import matplotlib as mpl

    from backbone.maps.static import RC_PARAMS, StaticOptions, build_figure

    # a crowded network: 40 data centres on a grid over Europe and the US east coast
    lon = np.r_[np.linspace(-10, 25, 5).repeat(4), np.linspace(-90, -70, 5).repeat(4)]
    lat = np.r_[np.tile(np.linspace(40, 55, 4), 5), np.tile(np.linspace(30, 45, 4), 5)]
    sites = [nets.site(f"s{i}", float(x), float(y), "EMEA" if x > -30 else "NA", name=f"Data centre {i}",
                   kind="datacenter", gpus_installed=1000 * (i + 1)) for i, (x, y) in enumerate(zip(lon, lat, strict=True))]
    links = [{"id": f"l{i}", "site_a": f"s{i}", "site_b": f"s{i + 1}", "capacity_gbps": 400} for i in range(39)]
    net = make_network(sites, links)
    with mpl.rc_context(RC_PARAMS):
        fig = build_figure(net, map_values(net), make_view(center), StaticOptions(size=(1280, 720)))
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
        axbox = ax.get_window_extent(renderer)
    assert 5 <= len(boxes) <= 28  # some labels fit, the crowd is thinned
    for i, a in enumerate(boxes):
        assert axbox.x0 <= a.x0 and a.x1 <= axbox.x1 and axbox.y0 <= a.y0 and a.y1 <= axbox.y1
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)
    shown = {t.get_text() for t in ax.texts}
    assert "Data centre 39" in shown  # the biggest site is always labelled


def test_label_candidates_point_at_their_places(pacific: Network) -> None:
    from backbone.maps.labels import label_candidates

    # a metro with a site in it is named by the site; the others keep their own label
    net = pacific.copy_with(sites=pacific.sites.assign(metro=np.where(pacific.sites.index == "LAX", "m-sf", "")))
    cands = label_candidates(net, 20)
    assert "San Francisco" not in set(cands["name"]) and "Osaka" in set(cands["name"])
    for row in cands.itertuples():
        table = net.sites if row.kind == "site" else net.metros
        assert (table.iloc[row.pos]["lon"], table.iloc[row.pos]["lat"]) == (row.lon, row.lat), row.name
    assert cands.iloc[0]["name"] == "Ashburn DC"  # the largest data centre comes first


def test_capacity_width_is_log_scaled() -> None:
    w = map_style.link_widths(np.array([100.0, 1000.0, 10000.0]))
    assert w[1] - w[0] == pytest.approx(w[2] - w[1])
    assert map_style.format_gbps(12000) == "12 Tbps" and map_style.format_gbps(400) == "400 Gbps"


# ---------------------------------------------------------------------- GeoJSON and KML
def test_geojson_splits_at_antimeridian(pacific: Network, tmp_path: Path) -> None:
    import geopandas as gpd

    out = export_map(pacific, tmp_path / "net.geojson", result=result_for(pacific))
    gdf = gpd.read_file(out)
    links = gdf[gdf["feature_type"] == "link"].set_index("id")
    assert len(links) == len(pacific.links) and (gdf["feature_type"] == "site").sum() == len(pacific.sites)
    for lid in TRANS_PACIFIC:
        geom = links.loc[lid, "geometry"]
        assert geom.geom_type == "MultiLineString", lid
        parts = list(geom.geoms)
        ends = [abs(p.coords[-1][0]) for p in parts[:-1]] + [abs(p.coords[0][0]) for p in parts[1:]]
        assert np.allclose(ends, 180.0), lid
    minx, _, maxx, _ = gdf.total_bounds
    assert minx >= -180 and maxx <= 180
    assert links.loc["lax-tyo", "utilisation"] == pytest.approx(result_for(pacific)["map"]["link_values"]
                                                               ["utilisation"]["lax-tyo"])
    assert links.loc["sea-tyo", "failed"] == 1


@pytest.mark.slow
def test_kml_is_valid_and_split(pacific: Network, tmp_path: Path) -> None:
    out = export_map(pacific, tmp_path / "net.kml", result=result_for(pacific))
    root = ET.parse(out).getroot()
    ns = {"k": "http://www.opengis.net/kml/2.2"}
    marks = root.findall(".//k:Placemark", ns)
    assert len(marks) == len(pacific.links) + len(pacific.sites)
    by_id = {}
    for m in marks:
        data = {d.get("name"): d.findtext("k:value", namespaces=ns) for d in m.findall(".//k:Data", ns)}
        by_id[data["id"]] = (m, data)
    mark, data = by_id["lax-tyo"]
    lines = mark.findall(".//k:MultiGeometry/k:LineString", ns)
    assert len(lines) == 2
    lons = [float(c.split(",")[0]) for ln in lines for c in ln.findtext("k:coordinates", namespaces=ns).split()]
    assert max(abs(x) for x in lons) <= 180.0 and max(lons) == pytest.approx(180.0) and min(lons) == pytest.approx(-180)
    assert data["kind"] == "submarine" and data["cable_system"] == "Pacific-1"
    assert float(data["utilisation"]) == pytest.approx(result_for(pacific)["map"]["link_values"]["utilisation"]["lax-tyo"])
    assert float(data["capacity_gbps"]) == 2400
    assert by_id["sea-tyo"][1].get("failed") == "1"
    assert by_id["TYO"][0].find(".//k:Point", ns) is not None


# ---------------------------------------------------------------------- CLI
def test_cli_map_writes_file_and_json_only_on_stdout(pacific: Network, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    scen = tmp_path / "scen"
    save_scenario(pacific, scen)
    res_file = tmp_path / "r.json"
    res_file.write_text(json.dumps(result_for(pacific)["map"]))  # values at top level are accepted
    runner = CliRunner()
    out = tmp_path / "world.png"
    r = runner.invoke(app, ["map", str(scen), "--out", str(out), "--result", str(res_file), "--size", "480x270",
                            "--center-lon", "150", "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    assert info["format"] == "png" and Path(info["out"]) == out and out.stat().st_size == info["bytes"]
    for args, code in ((["--out", str(tmp_path / "x.bmp")], 2), (["--out", str(out), "--size", "0x0"], 2),
                       (["--out", str(out), "--region", "atlantis"], 2),
                       (["--out", str(out), "--result", str(tmp_path / "missing.json")], 2)):
        r = runner.invoke(app, ["map", str(scen), *args])
        assert r.exit_code == code, (args, r.output)
    r = runner.invoke(app, ["map", str(scen), "--out", str(tmp_path / "m.kml")])
    assert r.exit_code == 0 and ET.parse(tmp_path / "m.kml").getroot().tag.endswith("kml")


@pytest.mark.slow
def test_shipped_scenario_maps(shipped: Network) -> None:
    # the shipped scenario is part of the repository: its absence is a failure, not a skip
    assert (default_scenario_path() / "scenario.yaml").exists(), f"shipped scenario missing at {default_scenario_path()}"
    net = shipped
    for center in (0.0, 150.0):
        view = make_view(center)
        xmin, xmax, _, _ = view.extent()
        layers = build_layers(net, map_values(net), view)
        for parts in layers.link_parts:
            for p in parts:
                assert np.abs(np.diff(p[:, 0])).max(initial=0.0) < (xmax - xmin) / 3.0
    img = png_pixels(render_map_bytes(net, "png", center_lon=150, size=SMALL))
    assert near(img, map_style.LAND).sum() > 0.1 * img[..., 0].size
