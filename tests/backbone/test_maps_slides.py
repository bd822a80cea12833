"""Charts and maps for slides: units, one number format, names not ids, labels that fit and sit by their dots."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from backbone.maps import charts, make_view
from backbone.maps.values import map_values
from backbone.model import Network


def _texts(fig: object) -> list[str]:
    return [t.get_text() for t in fig.texts]  # type: ignore[attr-defined]


def test_impact_chart_names_unit_one_format_and_no_total(shipped: Network) -> None:
    doc = {"scenarios": [
        {"scenario": "srlg:corridor-ny-nj-landings", "unmet_gbps": 24312.4},
        {"scenario": "srlg:cable-marea", "unmet_gbps": 9387.0},
        {"scenario": "site:ashburn", "unmet_gbps": 12.5},
        {"scenario": "srlg:cable-marea+srlg:cable-dunant", "unmet_gbps": 30000.0},
        {"scenario": "srlg:unknown-id", "unmet_gbps": 5.0},
    ]}
    series, label = charts._impact_series(doc)
    label, unit = charts._label_and_unit(label)
    assert (label, unit) == ("Unmet demand", "Gbps")
    fig = charts.impact_bars(series, value_label=label, unit=unit, names=charts.failure_names(series.index, shipped),
                             size=(1600, 900))
    ax = fig.axes[0]
    ylabels = [t.get_text() for t in ax.get_yticklabels()]
    assert shipped.srlgs.at["cable-marea", "name"] in ylabels
    assert shipped.sites.at["ashburn", "name"] in ylabels
    assert f"{shipped.srlgs.at['cable-marea', 'name']} + {shipped.srlgs.at['cable-dunant', 'name']}"[:47] in \
        " ".join(ylabels)
    assert "srlg:unknown-id" in ylabels  # unknown ids keep their text
    assert ax.get_xlabel() == "Unmet demand (Gbps)"
    fig.canvas.draw()
    values = [t.get_text().strip() for t in ax.texts]
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    for text in values + ticks:  # one format: thousands separators, no decimals, no exponent
        assert re.fullmatch(r"\d{1,3}(,\d{3})*", text), text
    subtitle = " ".join(_texts(fig))
    assert "total" not in subtitle and "worst 30,000 Gbps" in subtitle and "not a sum" in subtitle


def test_cost_chart_labels_fit_inside_the_figure() -> None:
    costs = pd.DataFrame({"capex_usd": np.linspace(2e9, 1e8, 11), "opex_usd": np.linspace(2e8, 1e7, 11)},
                         index=[f"A rather long site name number {i} (campus)" for i in range(11)])
    fig = charts.cost_breakdown(costs, size=(1600, 900))
    renderer = fig.canvas.get_renderer()
    for t in fig.axes[0].get_xticklabels():
        box = t.get_window_extent(renderer)
        assert box.y0 >= 0 and box.x1 <= fig.get_figwidth() * fig.dpi + 1, t.get_text()


def test_latency_chart_subtitle_says_what_the_weights_are(shipped: Network) -> None:
    fig = charts.latency_cdf(charts.demand_latency_table(shipped), size=(1600, 900))
    subtitle = _texts(fig)[1]
    assert "weighted by its volume (Gbps)" in subtitle and "calibrated" in subtitle
    renderer = fig.canvas.get_renderer()
    assert fig.texts[1].get_window_extent(renderer).x1 <= fig.get_figwidth() * fig.dpi  # not cut off


@pytest.mark.parametrize("center", [0.0, 150.0])
def test_largest_sites_are_labelled_beside_their_own_dot(shipped: Network, center: float) -> None:
    import matplotlib as mpl

    from backbone.maps.labels import label_candidates, site_sizes
    from backbone.maps.static import RC_PARAMS, StaticOptions, build_figure

    with mpl.rc_context(RC_PARAMS):
        fig = build_figure(shipped, map_values(shipped), make_view(center), StaticOptions(size=(1920, 1080)))
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        labels = {t.get_text(): t for t in ax.texts}
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
    cands = label_candidates(shipped, 36).set_index("name")
    for name in ("Ashburn VA", "London", "Amsterdam", "Paris", "Singapore", "Frankfurt am Main", "Tokyo"):
        assert name in labels, (name, sorted(labels))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)
    radius_px = np.sqrt(site_sizes(shipped)) / 2.0 * fig.dpi / 72.0
    for name, text in labels.items():
        row = cands.loc[name]
        if row["kind"] != "site":
            continue
        dot = ax.transData.transform(np.asarray(text.xy, dtype=float).reshape(1, 2))[0]
        box = text.get_window_extent(renderer)
        # the nearest point of the label's box is within a few points of its own dot's edge
        dx = max(box.x0 - dot[0], 0.0, dot[0] - box.x1)
        dy = max(box.y0 - dot[1], 0.0, dot[1] - box.y1)
        assert np.hypot(dx, dy) <= radius_px[int(row["pos"])] + 6.0 * fig.dpi / 72.0, name


def test_world_view_draws_only_the_largest_metro_arcs(shipped: Network) -> None:
    from backbone.maps.static import WORLD_ARC_SHARE, _shown_assignments

    rows = [{"metro": m, "site": s, "gpus": g} for m, s, g in zip(
        shipped.metros.index[:20], ["ashburn", "london", "tokyo", "singapore"] * 5, np.geomspace(10, 10000, 20),
        strict=True)]
    values = map_values(shipped, {"assignments": rows})
    world = _shown_assignments(values, make_view(0.0))
    region = _shown_assignments(values, make_view(0.0, "emea"))
    assert len(region) == 20 and 0 < len(world) < 20
    gpus = values.assignments["gpus"].to_numpy()
    assert gpus[world].sum() >= WORLD_ARC_SHARE * gpus.sum()
    assert gpus[world].min() >= np.delete(gpus, world).max()  # the largest ones


def test_result_charts_carry_their_labels(shipped: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's charts: the impact label and unit, and what the latency weights and paths are."""
    seen: dict[str, object] = {}
    monkeypatch.setattr(charts, "chart_bytes", lambda fig, fmt="png": seen.setdefault("fig", fig) and b"")
    charts.chart_from_result("impact", {"impact": {"srlg:cable-marea": 1234.5}, "impact_label": "Unmet demand (Gbps)"},
                             shipped)
    ax = seen.pop("fig").axes[0]  # type: ignore[attr-defined]
    assert ax.get_xlabel() == "Unmet demand (Gbps)"
    assert [t.get_text() for t in ax.get_yticklabels()] == [shipped.srlgs.at["cable-marea", "name"]]
    records = [{"region_pair": "NA–NA", "latency_ms": 10.0, "weight": 5.0}]
    charts.chart_from_result("latency", {"latency": records, "latency_weight_name": "carried Gbps",
                                         "latency_path": "routed paths"}, shipped)
    subtitle = seen.pop("fig").texts[1].get_text()  # type: ignore[attr-defined]
    assert "weighted by its volume (carried Gbps)" in subtitle and "routed paths" in subtitle
