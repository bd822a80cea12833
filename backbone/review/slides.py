"""The slides of a plan deck: map, what to buy, worst failures, utilisation, GPUs by region, comparison,
assumptions and caveats. Tables and charts are native (editable in PowerPoint); only the map is a picture."""

from __future__ import annotations

import io
import logging
import math
from typing import Any

import pandas as pd
from pptx.util import Emu

from backbone.compare.result import DiffResult
from backbone.compare.text import change_text, value_text
from backbone.review.data import DeckData, buy_table, gpus_by_region, utilisation_bands, worst_failures
from backbone.review.layout import Box, add_bar_chart, add_bullets, add_table, content_box, new_slide

__all__ = ["buy_slides", "caveat_slides", "comparison_slides", "failures_slide", "gpu_region_slide", "map_box",
           "map_inches", "map_slide", "money_m", "utilisation_slide"]

logger = logging.getLogger(__name__)


def money_m(value: Any) -> str:
    """USD as millions with two decimals (``13.12``); ``–`` when unknown."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(v) else f"{v / 1e6:,.2f}"


def _number(value: Any, digits: int = 0) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(v) else f"{v:,.{digits}f}"


CAPTION_SHARE = 0.07
"""Share of the slide height under the map for its caption."""
EMU_PER_INCH = 914400


def map_box(prs: Any) -> Box:
    """Where the slide map goes: the content area below the title, less the caption line."""
    left, top, width, height = content_box(prs, 0.19)
    return left, top, width, height - int(int(prs.slide_height) * CAPTION_SHARE)


def map_inches(prs: Any) -> tuple[float, float]:
    """The slide map's picture size in inches (width, height): the map is drawn for it
    (:func:`backbone.review.data.slide_map`), so its text has the size it was drawn for."""
    _left, _top, width, height = map_box(prs)
    return width / EMU_PER_INCH, height / EMU_PER_INCH


def map_slide(prs: Any, data: DeckData, title: str = "The backbone after the plan") -> Any:
    """The slide map (:func:`backbone.review.data.slide_map`: links by utilisation, GPUs added, the largest sites
    labelled, the legend with units, text at 14 pt on the slide) centred in :func:`map_box` at its own aspect
    ratio, with its caption (native text) below."""
    if data.map_png is None:
        return None
    from PIL import Image

    slide = new_slide(prs, title)
    left, top, width, height = map_box(prs)
    with Image.open(io.BytesIO(data.map_png)) as image:
        aspect = image.width / image.height
    w = min(width, int(height * aspect))
    h = int(w / aspect)
    slide.shapes.add_picture(io.BytesIO(data.map_png), Emu(left + (width - w) // 2), Emu(top), Emu(w), Emu(h))
    if data.map_caption:
        add_bullets(slide, [data.map_caption], (left, top + h + int(int(prs.slide_height) * 0.01), width,
                                                int(int(prs.slide_height) * CAPTION_SHARE)), 14)
    return slide


def buy_slides(prs: Any, data: DeckData, rows: int) -> list[Any]:
    """What to buy (``design.json`` upgrades and new routes) as native tables of ``rows`` rows per slide, in commit
    order (earliest commit quarter first: ``Q-4`` is four quarters before the capacity is needed; then the largest
    cost), each with its lead time and where that comes from, and the total."""
    table = buy_table(data.side.document("design"), data.side.network.parameters["upgrade_lead_quarters"])
    total = money_m(data.side.document("design").get("cost_usd"))
    if not len(table):
        slide = new_slide(prs, "What to buy")
        reason = "nothing was designed (--skip-upgrades)" if data.side.document("plan").get("links_upgraded") is None \
            else "nothing: the backbone carries every state it can with what is installed"
        add_bullets(slide, [f"What to buy: {reason}."], content_box(prs), 18)
        return [slide]
    shown = pd.DataFrame({
        "link or route": table["link"], "action": table["action"], "kind": table["kind"],
        "modules": table["modules"].map(_number), "added (Gbps)": table["added_gbps"].map(_number),
        "cost (M USD)": table["cost_usd"].map(money_m),
        "lead time (quarters)": table["lead_time_quarters"].map(lambda v: _number(v) if v is not None else "–"),
        "lead time from": table["lead_time_from"], "commit": table["commit"],
        "failures it protects": table["protects"]})
    slides = []
    pages = max(1, math.ceil(len(shown) / rows))
    for page in range(pages):
        part = f" ({page + 1}/{pages})" if pages > 1 else ""
        slide = new_slide(prs, f"What to buy: {len(shown)} items, {total} M USD{part}")
        add_table(slide, shown.iloc[page * rows:(page + 1) * rows], content_box(prs), 10)
        slides.append(slide)
    return slides


def failures_slide(prs: Any, data: DeckData, n: int) -> Any:
    """The worst failures before and after the plan (``plan.json`` ``before_after``): a native clustered bar
    chart of their impact (Gbps), or their maximum utilisation when no failure has any impact."""
    top, key, unit = worst_failures(data.side.document("plan"), n)
    slide = new_slide(prs, "Worst failures, before and after the plan")
    if not len(top):
        add_bullets(slide, ["No failure states were swept."], content_box(prs), 18)
        return slide
    labels = [str(s).split(":", 1)[-1] for s in top["scenario"]]
    series = {"before the plan": top[f"{key}_before"], "after the plan": top[f"{key}_after"]}
    if unit == "Gbps":
        add_bar_chart(slide, labels, series, content_box(prs), value_title="impact (Gbps): unmet at ≤ 100 %, "
                      "SLO violations and traffic lost", horizontal=True)
    else:
        add_bar_chart(slide, labels, series, content_box(prs), value_title="max link utilisation (no failure has "
                      "any impact)", number_format="0%", horizontal=True)
    return slide


def utilisation_slide(prs: Any, data: DeckData) -> Any:
    """Links per utilisation band, routed before the upgrades and after the plan (``plan.json`` ``map`` and
    ``map_after`` utilisation: min-MLU routing's), as a native column chart."""
    plan = data.side.document("plan")
    before = ((plan.get("map") or {}).get("link_values") or {}).get("utilisation") or {}
    after = ((plan.get("map_after") or {}).get("link_values") or {}).get("utilisation") or {}
    bands_before, bands_after = utilisation_bands(before), utilisation_bands(after)
    slide = new_slide(prs, "Link utilisation, intact network")
    add_bar_chart(slide, list(bands_after.index), {"before the upgrades": bands_before.to_numpy(),
                                                   "after the plan": bands_after.to_numpy()},
                  content_box(prs), value_title="links")
    return slide


def gpu_region_slide(prs: Any, data: DeckData) -> Any:
    """GPUs installed and added per region (``place.json`` ``sites``) as a native stacked column chart."""
    table = gpus_by_region(data.side.document("place"))
    slide = new_slide(prs, f"GPU placement by region: {table['gpus_added'].sum():,.0f} GPUs added")
    add_bar_chart(slide, list(table.index), {"installed before": table["gpus_before"].to_numpy(),
                                             "added by the plan": table["gpus_added"].to_numpy()},
                  content_box(prs), value_title="GPUs", stacked=True)
    return slide


def comparison_slides(prs: Any, result: DiffResult, rows: int = 14) -> list[Any]:
    """What changed against the baseline (:func:`backbone.compare.diff`): the KPIs that changed (before, after,
    delta, better or worse), the failures newly survived or broken and the changeover list, as native tables."""
    kpis = result.kpi_changed()
    slide = new_slide(prs, f"Compared with {result.before.label}")
    if not len(kpis):
        lines = ["No KPI changed."] if result.before.kind == result.after.kind else result.notes
        add_bullets(slide, lines + [f"{n} {k}" for k, n in result.counts().items() if n], content_box(prs), 16)
        slides = [slide]
    else:
        shown = pd.DataFrame({"KPI": kpis["kpi"],
                              "before": [value_text(v, u) for v, u in zip(kpis["before"], kpis["unit"], strict=True)],
                              "after": [value_text(v, u) for v, u in zip(kpis["after"], kpis["unit"], strict=True)],
                              "change": [change_text(v, u) for v, u in zip(kpis["delta"], kpis["unit"], strict=True)],
                              "": kpis["verdict"]})
        add_table(slide, shown.head(rows), content_box(prs), 10)
        slides = [slide]
    if len(result.failures):
        f = result.failures.head(rows)
        slide = new_slide(prs, f"Failures that changed against {result.before.label} ({len(result.failures)})")
        add_table(slide, pd.DataFrame({
            "failure state": f["scenario"], "change": f["change"],
            "impact before": [value_text(v, "Gbps") for v in f["impact_before_gbps"]],
            "impact now": [value_text(v, "Gbps") for v in f["impact_after_gbps"]],
            "change in impact": [change_text(v, "Gbps") for v in f["impact_delta_gbps"]]}), content_box(prs), 10)
        slides.append(slide)
    if len(result.changeover):
        c = result.changeover.head(rows)
        slide = new_slide(prs, f"Changeover against {result.before.label}: {len(result.changeover)} purchases differ")
        add_table(slide, pd.DataFrame({
            "order": c["order"], "link or route": c["link"], "change": c["change"], "kind": c["kind"],
            "modules before → after": [f"{_number(a)} → {_number(b)}" for a, b in
                                       zip(c["modules_before"], c["modules_after"], strict=True)],
            "cost (M USD)": c["cost_usd"].map(money_m), "lead time (quarters)": c["lead_time_quarters"].map(_number),
            "commit": c["commit"]}),
            content_box(prs), 10)
        slides.append(slide)
    return slides


def caveat_slides(prs: Any, data: DeckData, rows: int = 10) -> list[Any]:
    """Assumptions and caveats: solver status and gaps per stage, the design's bound, the placement's notes,
    and every excused state with its reason (a native table, continued over slides)."""
    slide = new_slide(prs, "Assumptions and caveats")
    add_bullets(slide, data.caveats, content_box(prs), 12)
    slides = [slide]
    excused = pd.DataFrame((data.side.document("plan").get("survivability") or {}).get("not_survivable") or [],
                           columns=["scenario", "reason"])
    pages = math.ceil(len(excused) / rows)
    for page in range(pages):
        part = f" ({page + 1}/{pages})" if pages > 1 else ""
        slide = new_slide(prs, f"Excused failure states: no candidate can help ({len(excused)}){part}")
        add_table(slide, excused.iloc[page * rows:(page + 1) * rows].rename(
            columns={"scenario": "failure state", "reason": "why no purchase can carry it"}), content_box(prs), 10)
        slides.append(slide)
    return slides
