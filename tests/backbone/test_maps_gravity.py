"""The data-gravity layer of maps (issue #29 item 4): workload flow arcs by class and Gbps, training sites labelled with
their jobs' GPUs, dataset homes; parsed from a result's ``map`` object and drawn on static maps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.colors import to_hex

from backbone.errors import ValidationError
from backbone.maps import export_map, make_view, map_values, render_map_bytes
from backbone.maps import style as map_style
from backbone.maps.gravity import flow_widths
from backbone.maps.layers import FLOW_BOW_MAX_DEG, build_layers, workload_arcs
from backbone.maps.static import RC_PARAMS, StaticOptions, build_figure
from backbone.model import Network

FLOWS = [{"src": "ashburn", "dst": "london", "traffic_class": "training-sync", "gbps": 120.0},
         {"src": "london", "dst": "ashburn", "traffic_class": "training-sync", "gbps": 120.0},
         {"src": "ashburn", "dst": "new-york", "traffic_class": "checkpoint", "gbps": 15.0},
         {"src": "frankfurt", "dst": "london", "traffic_class": "dataset", "gbps": 60.0},
         {"src": "london", "dst": "frankfurt", "traffic_class": "replication", "gbps": 0.5}]
TRAINING = [{"job": "llm", "site": "ashburn", "gpus": 4096}, {"job": "llm", "site": "london", "gpus": 4096}]
HOMES = [{"dataset": "corpus", "site": "frankfurt", "new": False}, {"dataset": "corpus", "site": "london", "new": True}]


def gravity_doc() -> dict[str, Any]:
    return {"map": {"workload_flows": FLOWS, "training_sites": TRAINING, "dataset_homes": HOMES}}


def test_map_values_read_the_gravity_tables(small_world: Network) -> None:
    mv = map_values(small_world, gravity_doc())
    assert len(mv.workload_flows) == 5 and mv.has_workloads and not mv.empty
    assert mv.workload_flows["gbps"].sum() == pytest.approx(315.5)
    assert mv.dataset_homes["new"].tolist() == [False, True]
    unknown = map_values(small_world, workload_flows=[*FLOWS, {"src": "nowhere", "dst": "london",
                                                                 "traffic_class": "dataset", "gbps": 1.0}])
    assert len(unknown.workload_flows) == 5  # a site the network does not have is dropped (with a warning)
    assert not map_values(small_world).has_workloads


@pytest.mark.parametrize(("rows", "field"), [
    ([{"src": "ashburn", "dst": "london", "traffic_class": "dataset", "gbps": "lots"}], "workload_flows.gbps"),
    ([{"src": "ashburn", "dst": "london", "gbps": 1.0}], "workload_flows"),
    ("ashburn", "workload_flows"),
])
def test_bad_gravity_tables_name_the_field(small_world: Network, rows: Any, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        map_values(small_world, workload_flows=rows)
    assert [p.field for p in err.value.problems] == [field]


def test_flow_arcs_bow_apart_and_widths_follow_gbps(small_world: Network) -> None:
    mv = map_values(small_world, gravity_doc())
    there, back = workload_arcs(small_world, mv.workload_flows.iloc[:2])
    # both ends at the sites, the two directions of the sync flow on opposite sides of the great circle
    np.testing.assert_allclose(there[0], small_world.sites.loc["ashburn", ["lon", "lat"]].to_numpy(float), atol=1e-9)
    np.testing.assert_allclose(there[-1], back[0], atol=1e-9)
    mid_there, mid_back = there[len(there) // 2], back[len(back) // 2]
    assert mid_there[1] - mid_back[1] > 1.0 and abs(mid_there[1] - mid_back[1]) <= 2 * FLOW_BOW_MAX_DEG + 1.0
    w = flow_widths(np.array([0.0, 30.0, 120.0]))
    assert w[0] == pytest.approx(1.0) and w[2] == pytest.approx(6.0) and w[1] == pytest.approx(1.0 + 5.0 * 0.5)


def test_static_map_draws_one_arc_per_flow_and_a_legend_entry_per_class(small_world: Network) -> None:
    mv = map_values(small_world, gravity_doc())
    view = make_view(0.0)  # world, centred 0: no flow crosses the seam, so each arc is one part
    layers = build_layers(small_world, mv, view)
    assert [len(p) for p in layers.flow_parts] == [1] * len(FLOWS)
    with mpl.rc_context(RC_PARAMS):  # type: ignore[arg-type]
        fig = build_figure(small_world, mv, view, StaticOptions(size=(1280, 720), color_by="kind"))
        ax = fig.axes[0]
        class_colors = {to_hex(c) for c in map_style.WORKLOAD_CLASS_COLORS.values()}
        arcs = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_zorder() == 5.8
                and {to_hex(x) for x in c.get_colors()} <= class_colors]
        assert sum(len(c.get_segments()) for c in arcs) == len(FLOWS)  # one arc per flow
        assert len({to_hex(c.get_colors()[0]) for c in arcs}) == 4  # one colour per class
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        labels = [t.get_text() for t in ax.texts]
    for cls, total, n in (("training-sync", "240 Gbps", "2 flows"), ("checkpoint", "15 Gbps", "1 flow"),
                          ("dataset", "60 Gbps", "1 flow"), ("replication", "0.5 Gbps", "1 flow")):
        assert f"{cls}: {total} ({n})" in legend
    assert "Dataset home" in legend and "New dataset replica (placed)" in legend
    assert "Training job site (labelled with job GPUs)" in legend
    assert any("llm 4,096 GPUs" in t for t in labels)  # the training sites are labelled with the job's GPUs


def test_png_without_workloads_has_no_gravity_legend(small_world: Network) -> None:
    png = render_map_bytes(small_world, "png", gravity_doc(), size="640x360", color_by="kind")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    mv = map_values(small_world)
    with mpl.rc_context(RC_PARAMS):  # type: ignore[arg-type]
        fig = build_figure(small_world, mv, make_view(0.0), StaticOptions(size=(640, 360)))
        legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert not any("flow" in t or "Dataset" in t or "Training" in t for t in legend)


def test_interactive_page_carries_the_flows(small_world: Network) -> None:
    from tests.backbone.test_maps_html import map_data

    data = map_data(render_map_bytes(small_world, "html", gravity_doc()).decode("utf-8"))
    assert [(f["src"], f["dst"], f["cls"], f["gbps"]) for f in data["flows"]] == [
        (r["src"], r["dst"], r["traffic_class"], r["gbps"]) for r in FLOWS]
    assert all(len(v["flows"]) == len(FLOWS) and all(v["flows"]) for v in data["views"])
    assert data["palette"]["flows"] == map_style.WORKLOAD_CLASS_COLORS


@pytest.mark.slow
@pytest.mark.browser
def test_interactive_page_draws_the_flows_in_chromium(small_world: Network, tmp_path: Path) -> None:
    from tests.backbone.test_maps_html import console_messages, run_chromium

    html_file = export_map(small_world, tmp_path / "map.html", result=gravity_doc())
    dom = run_chromium(html_file, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    assert 'data-ready="1"' in dom.stdout  # the script ran to the end
    assert dom.stdout.count('class="arc flow"') == len(FLOWS)
    assert "training-sync: 240 Gbps" in dom.stdout  # the legend names each class with its Gbps


def test_a_regional_view_says_which_flows_are_out_of_view(small_world: Network) -> None:
    mv = map_values(small_world, gravity_doc())
    with mpl.rc_context(RC_PARAMS):  # type: ignore[arg-type]
        fig = build_figure(small_world, mv, make_view(0.0, "na"), StaticOptions(size=(1280, 720), color_by="kind"))
        legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # the Frankfurt -> London dataset read is out of the North American view; the sync arcs reach into it
    assert "dataset: 60 Gbps (0 of 1 flows in view)" in legend
    assert "training-sync: 240 Gbps (2 flows)" in legend


def test_geojson_has_a_feature_per_flow(small_world: Network) -> None:
    import json

    doc = json.loads(render_map_bytes(small_world, "geojson", gravity_doc()))
    flows = [f for f in doc["features"] if f["properties"].get("feature_type") == "workload_flow"]
    assert [(f["properties"]["src"], f["properties"]["dst"], f["properties"]["traffic_class"],
             f["properties"]["gbps"]) for f in flows] == [(r["src"], r["dst"], r["traffic_class"], r["gbps"])
                                                          for r in FLOWS]
    first = flows[0]["geometry"]["coordinates"]
    assert first[0] == pytest.approx(small_world.sites.loc["ashburn", ["lon", "lat"]].tolist(), abs=1e-5)
    assert first[-1] == pytest.approx(small_world.sites.loc["london", ["lon", "lat"]].tolist(), abs=1e-5)
    plain = json.loads(render_map_bytes(small_world, "geojson"))
    assert len(doc["features"]) == len(plain["features"]) + len(FLOWS)
