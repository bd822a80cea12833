"""Charts: the drawn bars and curves match the input tables; the CLI pulls inputs out of results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from backbone.errors import ValidationError
from backbone.maps import charts
from backbone.model import Network
from tests.backbone.test_maps import png_pixels


def bar_heights(fig: object) -> np.ndarray:
    ax = fig.axes[0]  # type: ignore[attr-defined]
    return np.array([p.get_height() for p in ax.patches])


def test_utilisation_histogram_counts_every_link() -> None:
    u = pd.Series({"a": 0.05, "b": 0.15, "c": 0.16, "d": 0.95, "e": 1.0, "f": 1.25, "g": np.nan})
    fig = charts.utilisation_histogram(u, size=(800, 450))
    h = bar_heights(fig)
    assert h.sum() == 6  # NaN dropped, everything else in exactly one band
    assert h[0] == 1 and h[1] == 2 and h[9] == 2 and h[12] == 1  # 0-10, 10-20, 90-100 (incl. 100 %), 120-130
    png = charts.chart_bytes(fig, "png")
    img = png_pixels(png)
    assert img.shape[:2] == (450, 800) and (img.std(axis=(0, 1)) > 5).all()
    with pytest.raises(ValidationError):
        charts.utilisation_histogram(pd.Series(dtype=float))


def test_latency_table_uses_shortest_paths(triangle: Network) -> None:
    table = charts.demand_latency_table(triangle)
    # A->C: direct link of 1 ms beats A-B-C (2 ms)
    assert table.loc["d1", "latency_ms"] == pytest.approx(1.0)
    assert table.loc["d1", "region_pair"] == "NA–NA" and table.loc["d1", "weight"] == 15
    fig = charts.latency_cdf(table, size=(800, 450))
    (line,) = fig.axes[0].get_lines()
    x, y = line.get_data()
    assert y[-1] == pytest.approx(1.0) and x[-1] == pytest.approx(1.0)


def test_latency_cdf_weights_and_pairs() -> None:
    t = pd.DataFrame({"region_pair": ["NA–EMEA"] * 3 + ["APAC–NA"], "latency_ms": [40.0, 35.0, 50.0, 60.0],
                      "weight": [1.0, 1.0, 2.0, 1.0]})
    fig = charts.latency_cdf(t, size=(800, 450))
    lines = {ln.get_label().split("  ")[0]: ln for ln in fig.axes[0].get_lines()}
    x, y = lines["NA–EMEA"].get_data()
    assert list(x) == [0.0, 35.0, 40.0, 50.0] and list(y) == pytest.approx([0.0, 0.25, 0.5, 1.0])


def test_impact_bars_show_the_largest_first() -> None:
    s = pd.Series({f"srlg-{i}": float(i) for i in range(30)})
    fig = charts.impact_bars(s, top=5, size=(800, 450))
    widths = [p.get_width() for p in fig.axes[0].patches]
    assert widths == [25.0, 26.0, 27.0, 28.0, 29.0]  # drawn bottom-up, so the worst is on top
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[-1] == "srlg-29"


def test_cost_breakdown_stacks_components() -> None:
    costs = pd.DataFrame({"capex_usd": [3e8, 1e8, 0.0], "opex_usd": [1e8, 5e7, 0.0]}, index=["TYO", "DFW", "LON"])
    fig = charts.cost_breakdown(costs, size=(800, 450))
    h = bar_heights(fig)
    # two sites with cost (LON dropped), two components; millions of USD
    assert len(h) == 4 and h[:2] == pytest.approx([300.0, 100.0]) and h[2:] == pytest.approx([100.0, 50.0])


def test_chart_from_result_finds_inputs(triangle: Network) -> None:
    util = {"map": {"link_values": {"utilisation": {"AB": 0.2, "AC": 1.1}}}}
    assert charts.chart_from_result("utilisation", util, fmt="svg").startswith(b"<?xml")
    placement = {"sites": [{"id": "s1", "name": "Tokyo", "capex_usd": 2e8, "opex_usd": 1e8},
                           {"id": "s2", "name": "", "capex_usd": 1e8, "opex_usd": 0.0}]}
    assert charts.chart_from_result("cost", placement)[:4] == b"\x89PNG"
    failures = {"scenarios": [{"name": "cut-1", "lost_gbps": 30.0}, {"name": "cut-2", "lost_gbps": 10.0}]}
    series, label = charts._impact_series(failures)
    assert series.to_dict() == {"cut-1": 30.0, "cut-2": 10.0} and label == "Lost (Gbps)"
    sweep = {"scenarios": [{"scenario": "srlg:tat", "mlu": 1.4, "unmet_gbps": 120.0},
                           {"scenario": "srlg:pac", "mlu": 0.9, "unmet_gbps": 0.0}]}  # as solver.failures writes it
    series, label = charts._impact_series(sweep)
    assert series.to_dict() == {"srlg:tat": 120.0, "srlg:pac": 0.0} and label == "Unmet (Gbps)"
    assert charts.chart_from_result("latency", None, triangle)[:4] == b"\x89PNG"
    for kind, doc in (("utilisation", {}), ("impact", {"x": 1}), ("cost", {"sites": []})):
        with pytest.raises(ValidationError):
            charts.chart_from_result(kind, doc)


def test_cli_chart(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app

    res = tmp_path / "r.json"
    res.write_text(json.dumps({"map": {"link_values": {"utilisation": {"a": 0.4, "b": 0.9}}}}))
    r = CliRunner().invoke(app, ["chart", "utilisation", "--result", str(res), "--out", str(tmp_path / "u.png"),
                                 "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["bytes"] == (tmp_path / "u.png").stat().st_size
    r = CliRunner().invoke(app, ["chart", "pie", "--result", str(res), "--out", str(tmp_path / "u.png")])
    assert r.exit_code == 2
    r = CliRunner().invoke(app, ["chart", "utilisation", "--result", str(res), "--out", str(tmp_path / "u.gif")])
    assert r.exit_code == 2
