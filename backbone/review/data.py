"""What the deck shows, read from a plan or roadmap output folder into plain tables.

Every number is the one the plan (or roadmap) wrote: ``plan.json`` (headline, survivability, ``before_after``,
stages, utilisation before and after), ``design.json`` (the purchases with cost, lead time and the failures
each protects), ``place.json`` (GPUs per site) and ``roadmap.json``; the deck computes nothing anew except
grouping (GPUs by region) and counting (links per utilisation band).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backbone.compare.inputs import ComparedInput, load_input
from backbone.errors import Problem, ValidationError

__all__ = ["UTILISATION_BANDS", "DeckData", "buy_table", "deck_data", "gpus_by_region", "utilisation_bands",
           "worst_failures"]

logger = logging.getLogger(__name__)

UTILISATION_BANDS: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0)
"""Edges of the utilisation distribution's bands (``[lo, hi)``); a last band holds everything from 100 % up."""


@dataclass(frozen=True)
class DeckData:
    """A folder's content as the slides need it.

    Attributes
    ----------
    side
        The folder as read (:func:`backbone.compare.load_input`): kind ``plan`` or ``roadmap``, documents.
    title, subtitle, headline
        The title slide's text; ``headline`` is ``plan.json``'s (the report's sentence).
    map_png
        The slide map after the plan (:func:`slide_map`, drawn for the slide's picture), or a roadmap's last
        ``map_<year>.png``, if any.
    map_caption
        The line under the map.
    """

    side: ComparedInput
    title: str
    subtitle: str
    headline: str
    map_png: bytes | None = None
    caveats: list[str] = field(default_factory=list)
    map_caption: str = ""


def worst_failures(plan: dict[str, Any], n: int) -> tuple[pd.DataFrame, str, str]:
    """The ``n`` worst failures before the plan (``plan.json`` ``before_after``, by impact before, then after)
    with their impact before and after; ``(table, value column suffix, unit)``. When no failure has any impact
    both before and after, their maximum utilisation instead (as the report's failure chart does)."""
    frame = pd.DataFrame(plan.get("before_after") or [],
                         columns=["scenario", "impact_gbps_before", "impact_gbps_after", "mlu_before", "mlu_after"])
    impact = frame[["impact_gbps_before", "impact_gbps_after"]].astype(float).fillna(0.0)
    if len(frame) and (impact.to_numpy() > 1e-6).any():
        key, unit = "impact_gbps", "Gbps"
    else:
        key, unit = "mlu", "ratio"
    order = np.lexsort((-frame[f"{key}_after"].astype(float).fillna(0.0).to_numpy(),
                        -frame[f"{key}_before"].astype(float).fillna(0.0).to_numpy()))
    top = frame.iloc[order].head(n)
    return top[["scenario", f"{key}_before", f"{key}_after"]].reset_index(drop=True), key, unit


def utilisation_bands(utilisation: dict[str, float]) -> pd.Series:
    """Links per utilisation band (labels ``0–20 %`` ... ``≥ 100 %``), every band present."""
    values = pd.Series(utilisation, dtype=float).dropna()
    edges = [*UTILISATION_BANDS, np.inf]
    labels = [f"{100 * lo:.0f}–{100 * hi:.0f} %" for lo, hi in zip(UTILISATION_BANDS[:-1], UTILISATION_BANDS[1:],
                                                                     strict=True)] + ["≥ 100 %"]
    bands = pd.cut(values, bins=edges, right=False, labels=labels)
    return bands.value_counts().reindex(labels, fill_value=0).astype(int)


def gpus_by_region(place: dict[str, Any]) -> pd.DataFrame:
    """GPUs installed before the plan and added by it, per region (``place.json`` ``sites``), largest first."""
    sites = pd.DataFrame(place.get("sites") or [], columns=["region", "gpus_before", "gpus_added"])
    table = sites.groupby("region")[["gpus_before", "gpus_added"]].sum().astype(float)
    return table.loc[(table["gpus_before"] + table["gpus_added"]).sort_values(ascending=False).index]


def buy_table(design: dict[str, Any], upgrade_lead_quarters: float) -> pd.DataFrame:
    """The purchases (``design.json`` ``upgrades``) as the buy slide lists them, in the changeover's commit order
    (:func:`backbone.compare.changes.plan_purchases`: earliest commit quarter, i.e. longest lead time, first, then
    the largest cost): ``link, action, kind, modules, added_gbps, cost_usd, lead_time_quarters, lead_time_from,
    commit, protects`` (the failures protected, as a count and the first few). A link upgrade without a lead time of
    its own gets ``upgrade_lead_quarters`` (the scenario parameter)."""
    from backbone.compare.changes import plan_purchases

    upgrades = design.get("upgrades") or []
    frame = plan_purchases(upgrades, upgrade_lead_quarters).reset_index()
    protects = {str(u.get("link")): u.get("protects") for u in upgrades}
    frame["protects"] = frame["link"].map(lambda link: _protects_text(protects.get(str(link))))
    return frame.drop(columns="commit_key").reset_index(drop=True)


def _protects_text(states: Any) -> str:
    states = [s for s in (states or []) if s != "intact"]
    if not states:
        return "intact state"
    shown = ", ".join(str(s).split(":", 1)[-1] for s in states[:3])
    return f"{len(states)}: {shown}" + (" …" if len(states) > 3 else "")


def _plan_caveats(side: ComparedInput) -> list[str]:
    plan, design, place = side.document("plan"), side.document("design"), side.document("place")
    out = [f"Overall status: {plan.get('status', '?')}."]
    for st in plan.get("stages") or []:
        gap = st.get("gap")
        out.append(f"{st.get('stage')}: {st.get('status')} ({st.get('backend', '')}"
                   + ("" if gap is None else f", gap {100 * float(gap):.2f} %") + ")"
                   + (f": {st['note']}" if st.get("note") else ""))
    if design:
        money = "–" if design.get("cost_usd") is None else f"{float(design['cost_usd']) / 1e6:,.1f} M USD"
        bound = "–" if design.get("lower_bound_usd") is None else f"{float(design['lower_bound_usd']) / 1e6:,.1f} M USD"
        out.append(f"Design cost {money}, proven lower bound {bound}"
                   + (f" (covers {design['lower_bound_scope']})" if design.get("lower_bound_scope") else "") + ".")
    residency = plan.get("residency")
    if residency is not None:
        out.append(f"Residency: {residency['violations']} assignment(s) against the {residency['rules']} rule(s) in "
                   f"force ({float(residency['gpus']):,.0f} GPUs)"
                   + "".join(f"; {r['metro']} ({r['metro_country']}) served from {r['site']} ({r['site_country']})"
                             for r in residency.get("examples") or []) + ".")
    slo = plan.get("slo_violations_after")
    if slo is not None:
        out.append(f"Latency SLOs after the plan: {slo['states']} failure state(s) with demand beyond its SLO "
                   f"(worst {float(slo['worst_gbps']):,.1f} Gbps).")
    sv = plan.get("survivability") or {}
    if sv.get("violated"):
        out.append(f"Still not carried ({len(sv['violated'])}): {', '.join(map(str, sv['violated']))}.")
    out += [f"Placement: {n}" for n in (place.get("notes") or []) + (place.get("infeasibility") or [])]
    return out


def _roadmap_caveats(doc: dict[str, Any]) -> list[str]:
    out = [f"Status: {doc.get('status', '?')}; {doc.get('decomposition', '')}."]
    bound = doc.get("bound") or {}
    if doc.get("gap") is not None:
        out.append(f"Gap {100 * float(doc['gap']):.1f} % against the global lower bound "
                   f"{float(doc.get('lower_bound_usd') or 0) / 1e6:,.1f} M USD ({bound.get('covers', '')}).")
    else:
        out.append(f"No gap claimed: {bound.get('covers') or bound.get('note') or 'no bound'}.")
    out += [str(n) for n in doc.get("notes") or []]
    out += [f"Budget shortfall {s.get('period', '')}: {s.get('reason', s)}" for s in doc.get("budget_shortfalls") or []
            if isinstance(s, dict)]
    return out


SLIDE_TEXT_PT = 14.0
"""Smallest text on the slide map (labels, legend, colour bar), in points on the slide: legible when projected."""
MAP_TEXT_PT = 9.0
"""The static map's smallest text at ``scale=1`` (colour-bar ticks; labels and legend are 9.5), in points of its
16-inch-wide figure."""
SLIDE_MAP_LABELS = 12
"""Sites labelled on the slide map: the largest first (data centres by GPUs and MW)."""


def slide_map_scale(width_in: float) -> float:
    """The :class:`~backbone.maps.static.StaticOptions` ``scale`` that shows the map's smallest text at
    :data:`SLIDE_TEXT_PT` when the picture is ``width_in`` inches wide on the slide."""
    from backbone.maps import style

    return SLIDE_TEXT_PT / MAP_TEXT_PT * style.SLIDE_WIDTH_IN / width_in


def slide_map(side: ComparedInput, width_in: float, height_in: float, fmt: str = "png") -> bytes | None:
    """The plan's map for a slide picture ``width_in`` x ``height_in`` inches: the backbone after the plan
    (``scenario_after``) with links coloured by ``plan.json`` ``map_after`` utilisation, the GPUs added
    (``place.json``) as rings, the :data:`SLIDE_MAP_LABELS` largest sites labelled, the legend (capacity in Gbps,
    GPUs, utilisation in %) and every text at :data:`SLIDE_TEXT_PT` points on the slide; no title (the slide has
    one). A roadmap's map is its last period's backbone (``roadmap.json`` ``map_end``: utilisation, routes built).
    None when the folder has no such values (a roadmap written before ``map_end``: its ``map_<year>.png`` is used)."""
    from backbone.maps import MapValues, map_values
    from backbone.maps.projection import make_view
    from backbone.maps.static import StaticOptions, render_static

    added: dict[str, float] = {}
    if side.kind == "roadmap":
        doc = side.document("roadmap").get("map_end")
    else:
        doc, added = side.document("plan").get("map_after"), side.document("place").get("gpus_added_by_site") or {}
    if not doc:
        return None
    values: MapValues = map_values(side.network, {"map": doc},
                                   site_values={"gpus_added": {str(k): float(v) for k, v in added.items()}})
    dpi = 150
    opts = StaticOptions(size=(round(width_in * dpi), round(height_in * dpi)), title="", subtitle="",
                         max_labels=SLIDE_MAP_LABELS, always_label=SLIDE_MAP_LABELS, scale=slide_map_scale(width_in),
                         candidates=False)
    return render_static(side.network, values, make_view(), fmt, opts)


def map_caption(side: ComparedInput) -> str:
    """The line under the slide map: what it shows, in words, and the basemap's source."""
    if side.kind == "roadmap":
        doc = side.document("roadmap")
        last = (doc.get("periods") or [{}])[-1]
        sv = last.get("survivability") or {}
        return (f"End of {doc.get('end', '')}: max link utilisation {100 * float(last.get('mlu') or 0):.0f} % · "
                f"survives {sv.get('survived', '–')} of {sv.get('states', '–')} {sv.get('failure_kind', '')} "
                f"failures · {len((doc.get('map_end') or {}).get('built_candidates') or [])} new routes (green glow)"
                " · Equal Earth; basemap: Natural Earth")
    plan = side.document("plan")
    sv = plan.get("survivability") or {}
    return (f"After the plan: max link utilisation {100 * float(plan.get('mlu_after') or 0):.0f} % · survives "
            f"{sv.get('survived', '–')} of {sv.get('states', '–')} {sv.get('failure_kind', '')} failures · "
            f"{float(plan.get('gpus_added') or 0):,.0f} GPUs added (rings) · Equal Earth; basemap: Natural Earth")


def _latest_year_map(path: Path) -> bytes | None:
    maps = sorted(path.glob("map_[0-9][0-9][0-9][0-9].png"))
    return maps[-1].read_bytes() if maps else None


def deck_data(folder: str | Path, with_map: bool = True, map_in: tuple[float, float] = (12.0, 5.6)) -> DeckData:
    """Read a plan or roadmap output folder for the deck (``with_map``: its slide map too, drawn for a picture of
    ``map_in`` inches, width and height).

    Raises
    ------
    ValidationError
        When the folder is not a plan or roadmap output folder.
    """
    side = load_input(folder)
    path = Path(folder)
    if side.kind == "plan":
        plan = side.document("plan")
        return DeckData(side, title=f"Backbone plan: {plan.get('scenario', side.network.name)}",
                        subtitle=f"capacity review · plan created {plan.get('created_utc', '')}",
                        headline=str(plan.get("headline", "")),
                        map_png=slide_map(side, *map_in) if with_map else None, caveats=_plan_caveats(side),
                        map_caption=map_caption(side))
    if side.kind == "roadmap":
        doc = side.document("roadmap")
        periods = doc.get("periods") or []
        last = (periods[-1].get("survivability") or {}) if periods else {}
        headline = (f"{len(periods)} {doc.get('period', 'period')}s from {doc.get('start', '')} to "
                    f"{doc.get('end', '')}: {float(doc.get('total_capex_usd') or 0) / 1e6:,.1f} M USD of capex; "
                    f"by {doc.get('end', '')} the backbone survives {last.get('survived', '–')} of "
                    f"{last.get('states', '–')} single-SRLG failures (status {doc.get('status', '?')}).")
        return DeckData(side, title=f"Backbone roadmap: {doc.get('scenario', side.network.name)}",
                        subtitle="capacity review · rolling-horizon roadmap", headline=headline,
                        map_png=(slide_map(side, *map_in) or _latest_year_map(path)) if with_map else None,
                        caveats=_roadmap_caveats(doc), map_caption=map_caption(side))
    raise ValidationError(Problem("not a plan or roadmap output folder (no plan.json or roadmap.json)",
                                  file=str(folder)))
