"""The report's charts are legible: full width, text sized for it, and long failure names whole (wrapped, never
cut)."""

from __future__ import annotations

import re

from backbone.maps import charts
from backbone.report import render_report

LONG = "Los Angeles South Bay landings (Hermosa/Redondo/El Segundo) (landing station)"


def test_long_failure_names_are_wrapped_not_cut() -> None:
    names = {"srlg:a": LONG, "srlg:b": "North Atlantic"}
    fig = charts.impact_bars({"srlg:a": 1500.0, "srlg:b": 900.0}, unit="Gbps", names=names, size=(1200, 675))
    svg = charts.chart_bytes(fig, "svg").decode()
    assert "…" not in svg
    text = " ".join(re.findall(r">([^<>]+)</text>", svg))
    for word in LONG.split():
        assert word in text, word
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert LONG.replace("\n", " ") in [t.replace("\n", " ") for t in labels]
    assert all(t.get_fontsize() >= charts.TICK_PT for t in ax.get_yticklabels())
    # the labels fit in the figure (the margin widens to them)
    renderer = fig.canvas.get_renderer()
    assert min(t.get_window_extent(renderer).x0 for t in ax.get_yticklabels()) >= 0


def test_many_wrapped_names_get_the_height_they_need() -> None:
    impact = {f"srlg:{i}": 100.0 + i for i in range(15)}
    names = {k: f"{LONG} {i}" for i, k in enumerate(impact)}
    fig = charts.impact_bars(impact, names=names, size=(1200, 675))
    assert fig.get_figheight() * fig.dpi > 675  # two-line labels: taller than the default, rows do not overlap
    renderer = fig.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in fig.axes[0].get_yticklabels()), key=lambda b: b.y0)
    assert all(a.y1 <= b.y0 + 1 for a, b in zip(boxes, boxes[1:], strict=False))


def test_the_report_shows_charts_at_full_width() -> None:
    png = charts.chart_bytes(charts.utilisation_histogram({"a": 0.5, "b": 1.2}, size=(1200, 675)), "png")
    html = render_report({"title": "t"}, {k: (png, "png") for k in ("utilisation", "latency", "cost")})
    assert html.count('<img class="chart"') == 3
    assert "img.chart { display: block; width: 100%" in html
    assert '<div class="grid2">' not in html
