"""``backbone deck`` (:mod:`backbone.review`): the review deck opened with python-pptx, its native charts' data and tables' cells checked
against the plan's own files (``plan.json``, ``design.json``, ``place.json``); a template's layouts are used; a
roadmap deck has its timeline; LibreOffice renders one deck (slow)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pptx import Presentation
from typer.testing import CliRunner

import backbone
from backbone.compare.options import DeckOptions
from backbone.errors import ValidationError
from backbone.review import build_deck
from tests.conftest import SharedRun


def _slides(path: Path) -> list[Any]:
    return list(Presentation(str(path)).slides)


def _title(slide: Any) -> str:
    return slide.shapes.title.text if slide.shapes.title is not None else ""


def _slide(slides: list[Any], starts: str) -> Any:
    found = [s for s in slides if _title(s).startswith(starts)]
    assert found, f"no slide titled {starts!r}: {[_title(s) for s in slides]}"
    return found[0]


def _chart(slide: Any) -> Any:
    charts = [sh.chart for sh in slide.shapes if sh.has_chart]
    assert len(charts) >= 1
    return charts[0]


def _series(chart: Any) -> dict[str, list[float]]:
    return {s.name: list(s.values) for s in chart.plots[0].series}


def _table(slide: Any) -> pd.DataFrame:
    tables = [sh.table for sh in slide.shapes if sh.has_table]
    assert tables
    t = tables[0]
    rows = [[t.cell(i, j).text for j in range(len(t.columns))] for i in range(len(t.rows))]
    return pd.DataFrame(rows[1:], columns=rows[0])


def _doc(run: SharedRun, name: str) -> dict[str, Any]:
    return json.loads((run.out / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def grown_deck(_small_world_grown_plan: SharedRun, _small_world_default_plan: SharedRun,
               tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deck") / "review.pptx"
    build_deck(_small_world_grown_plan.out, out, baseline=_small_world_default_plan.out)
    return out


@pytest.mark.slow
def test_title_headline_and_what_to_buy(grown_deck: Path, small_world_grown_plan: SharedRun) -> None:
    slides = _slides(grown_deck)
    plan, design = _doc(small_world_grown_plan, "plan"), _doc(small_world_grown_plan, "design")
    first = " ".join(sh.text_frame.text for sh in slides[0].shapes if sh.has_text_frame)
    assert plan["headline"] in first and plan["scenario"] in first
    assert design["upgrades"], "the grown plan buys something"
    table = _table(_slide(slides, "What to buy"))
    assert len(table) == len(design["upgrades"])
    for upgrade in design["upgrades"]:
        row = table.set_index("link or route").loc[upgrade["link"]]
        assert float(row["cost (M USD)"]) * 1e6 == pytest.approx(upgrade["cost_usd"], abs=5e3)
        assert float(row["modules"]) == upgrade["modules"]
        assert row["action"] == upgrade["action"]
        # every purchase has a lead time: a new route its candidate's, a link upgrade the scenario parameter's
        lead = upgrade["lead_time_quarters"]
        assert lead is not None and row["lead time (quarters)"] == f"{lead:,.0f}"
        if upgrade["action"] == "upgrade":
            assert lead == 1 and row["lead time from"] == upgrade["lead_time_from"] == "scenario upgrade_lead_quarters"
        assert row["commit"] == f"Q-{lead}"
        protected = [s for s in upgrade["protects"] if s != "intact"]
        assert row["failures it protects"].startswith(f"{len(protected)}:")


def test_worst_failures_chart_matches_before_after(grown_deck: Path, small_world_grown_plan: SharedRun) -> None:
    plan = _doc(small_world_grown_plan, "plan")
    ba = pd.DataFrame(plan["before_after"])
    key = "impact_gbps" if (ba[["impact_gbps_before", "impact_gbps_after"]].to_numpy() > 1e-6).any() else "mlu"
    top = ba.sort_values([f"{key}_before", f"{key}_after"], ascending=False, kind="stable").head(12)
    chart = _chart(_slide(_slides(grown_deck), "Worst failures"))
    assert list(chart.plots[0].categories) == [s.split(":", 1)[-1] for s in top["scenario"]]
    series = _series(chart)
    assert series["before the plan"] == pytest.approx(top[f"{key}_before"].tolist())
    assert series["after the plan"] == pytest.approx(top[f"{key}_after"].tolist())


def test_utilisation_and_gpu_charts_match_the_plan(grown_deck: Path, small_world_grown_plan: SharedRun) -> None:
    plan, place = _doc(small_world_grown_plan, "plan"), _doc(small_world_grown_plan, "place")
    slides = _slides(grown_deck)
    util = _series(_chart(_slide(slides, "Link utilisation")))
    edges = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0, np.inf]
    after = np.array(list(plan["map_after"]["link_values"]["utilisation"].values()), dtype=float)
    before = np.array(list(plan["map"]["link_values"]["utilisation"].values()), dtype=float)
    assert util["after the plan"] == np.histogram(after, bins=edges)[0].tolist()
    assert util["before the upgrades"] == np.histogram(before, bins=edges)[0].tolist()
    gpu_chart = _chart(_slide(slides, "GPU placement by region"))
    sites = pd.DataFrame(place["sites"]).groupby("region")[["gpus_before", "gpus_added"]].sum()
    regions = list(gpu_chart.plots[0].categories)
    assert set(regions) == set(sites.index)
    gpus = _series(gpu_chart)
    assert gpus["installed before"] == pytest.approx(sites.loc[regions, "gpus_before"].tolist())
    assert gpus["added by the plan"] == pytest.approx(sites.loc[regions, "gpus_added"].tolist())
    assert sum(gpus["added by the plan"]) == pytest.approx(plan["gpus_added"])


def test_comparison_and_caveats(grown_deck: Path, small_world_grown_plan: SharedRun,
                                small_world_default_plan: SharedRun) -> None:
    slides = _slides(grown_deck)
    kpis = _table(_slide(slides, "Compared with")).set_index("KPI")
    a, b = _doc(small_world_default_plan, "plan"), _doc(small_world_grown_plan, "plan")
    assert kpis.at["upgrade_cost_usd", "after"] == f"{b['upgrade_cost_usd'] / 1e6:,.2f} M USD"
    assert kpis.at["upgrade_cost_usd", "before"] == f"{a['upgrade_cost_usd'] / 1e6:,.2f} M USD"
    caveats = " ".join(sh.text_frame.text for sh in _slide(slides, "Assumptions and caveats").shapes
                       if sh.has_text_frame)
    for stage in b["stages"]:
        assert f"{stage['stage']}: {stage['status']}" in caveats


def test_template_layouts_are_used(tmp_path: Path, small_world_default_plan: SharedRun) -> None:
    template = Presentation()
    template.slide_layouts.get_by_name("Title Only").name = "Title Only"
    template.slides.add_slide(template.slide_layouts[0])  # an example slide the deck must drop
    template.save(str(tmp_path / "corporate.pptx"))
    out = tmp_path / "deck.pptx"
    n = backbone.deck(small_world_default_plan.out, out, template=tmp_path / "corporate.pptx", map=False)
    prs = Presentation(str(out))
    assert len(prs.slides) == len(list(prs.slides))
    assert prs.slide_width == template.slide_width  # the template's 4:3 size, not the default 16:9
    assert {s.slide_layout.name for s in prs.slides} <= {"Title Slide", "Title Only"}
    assert not any(sh.shape_type == 13 for s in prs.slides for sh in s.shapes)  # map=False: no picture
    assert n == out


def test_bad_folder_and_template(tmp_path: Path, small_world_default_plan: SharedRun) -> None:
    with pytest.raises(ValidationError):
        build_deck(tmp_path / "nope", tmp_path / "x.pptx")
    (tmp_path / "bad.pptx").write_text("not a deck")
    with pytest.raises(ValidationError):
        build_deck(small_world_default_plan.out, tmp_path / "x.pptx", template=tmp_path / "bad.pptx")
    from backbone.api.cli.main import build_app

    r = CliRunner().invoke(build_app("deck"), ["deck", str(tmp_path / "nope"), "--out", str(tmp_path / "y.pptx")])
    assert r.exit_code == 2 and "Traceback" not in r.output


@pytest.mark.slow
def test_roadmap_deck_has_its_timeline(small_world: Any, tmp_path: Path) -> None:
    from backbone.solver.tasks import run_task

    run = run_task("roadmap", small_world, {"periods": 2, "bound_time_limit_s": 0}, tmp_path / "rm")
    out = tmp_path / "rm.pptx"
    build_deck(tmp_path / "rm", out)
    slides = _slides(out)
    chart = _chart(_slide(slides, "Timeline"))
    periods = run.document()["periods"]
    assert list(chart.plots[0].categories) == [p["period"] for p in periods]
    assert _series(chart)["capex committed (M USD)"] == pytest.approx([p["capex_usd"] / 1e6 for p in periods])
    # the map slide is drawn for the slide from the last period's backbone (roadmap.json map_end)
    doc = json.loads((tmp_path / "rm" / "roadmap.json").read_text())
    assert doc["map_end"]["link_values"]["utilisation"]
    slide = _slide(slides, "The backbone at the end of")
    caption = " ".join(sh.text_frame.text for sh in slide.shapes if sh.has_text_frame)
    assert f"End of {doc['end']}" in caption and "basemap: Natural Earth" in caption
    from backbone.compare import diff

    assert not diff(tmp_path / "rm", tmp_path / "rm").changed


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (Debian libreoffice-impress) not installed")
def test_libreoffice_renders_the_deck(grown_deck: Path, tmp_path: Path) -> None:
    """LibreOffice opens the deck and draws it: the first slide as PNG (not blank), the whole deck as PDF."""
    from PIL import Image

    for fmt in ("png", "pdf"):
        done = subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/lo", "--convert-to",
                               fmt, "--outdir", str(tmp_path), str(grown_deck)], capture_output=True, timeout=300,
                              check=False)
        assert done.returncode == 0 and (tmp_path / f"review.{fmt}").is_file(), done.stderr.decode(errors="replace")
    assert (tmp_path / "review.pdf").read_bytes().startswith(b"%PDF")
    with Image.open(tmp_path / "review.png") as image:
        pixels = np.asarray(image.convert("L"), dtype=float)
    assert pixels.shape[1] > pixels.shape[0] > 300  # a 16:9 slide
    assert pixels.std() > 5 and (pixels < 128).mean() > 0.002  # text drawn on the slide, not a blank page


def test_a_plan_without_map_files_gets_its_map_drawn(tmp_path: Path, small_world_default_plan: SharedRun) -> None:
    from tests.conftest import copy_of

    out = copy_of(small_world_default_plan, tmp_path / "plan").out
    (out / "map_after.png").unlink()  # as a plan run with maps: false leaves it
    build_deck(out, tmp_path / "deck.pptx")
    pictures = [sh for s in _slides(tmp_path / "deck.pptx") for sh in s.shapes if sh.shape_type == 13]
    assert len(pictures) == 1 and pictures[0].image.content_type == "image/png"
    build_deck(out, tmp_path / "bare.pptx", options=DeckOptions(map=False))
    assert not [sh for s in _slides(tmp_path / "bare.pptx") for sh in s.shapes if sh.shape_type == 13]


def test_the_slide_map_is_legible_when_projected(grown_deck: Path, small_world_grown_plan: SharedRun) -> None:
    """The map is drawn for its picture on the slide: every text at 14 pt or more there, the largest sites labelled,
    a legend with units (Gbps, GPUs, %), and the picture placed at the size it was drawn for."""
    import re

    from backbone.compare import load_input
    from backbone.review import build as review_build
    from backbone.review.data import slide_map
    from backbone.review.slides import map_inches

    prs = review_build.open_template(None)
    width_in, height_in = map_inches(prs)
    side = load_input(small_world_grown_plan.out)
    svg = slide_map(side, width_in, height_in, "svg").decode()
    figure_pt = float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', svg).group(1))
    sizes = [float(v) for v in re.findall(r"font-size: ?([0-9.]+)px", svg)]
    assert sizes and min(sizes) * width_in * 72.0 / figure_pt >= 14.0 - 1e-6
    texts = " ".join(re.findall(r">([^<>]+)</text>", svg))
    sites = side.network.sites.sort_values("gpus_installed", ascending=False)
    for name in sites["name"].head(4):
        assert str(name) in texts, f"{name} is one of the largest sites but has no label"
    assert "Gbps" in texts and "GPUs" in texts and "%" in texts and "Link utilisation" in texts
    slide = _slide(_slides(grown_deck), "The backbone after the plan")
    picture = [sh for sh in slide.shapes if sh.shape_type == 13][0]
    assert picture.width / 914400 == pytest.approx(width_in, rel=0.01)
    caption = " ".join(sh.text_frame.text for sh in slide.shapes if sh.has_text_frame)
    assert "max link utilisation" in caption and "basemap: Natural Earth" in caption
