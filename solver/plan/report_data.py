"""What the plan reports: the headline, the map values, the maps and charts (:func:`draw_images`) and the report's
data (:func:`report_data`: a :class:`~backbone.solver.plan.report_records.PlanReportData`, whose document
:func:`backbone.report.render_report` renders). Each reads the stages' typed summaries, never their documents."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pandas as pd

from backbone.artifacts import ArtifactWriter
from backbone.corridors import ALL_CLASSES
from backbone.errors import ValidationError
from backbone.model import Network
from backbone.serialize import count_text, gbps_text
from backbone.solver.core.progress import ProgressFn
from backbone.solver.core.summary import TypedSummary
from backbone.solver.design.summary import PlanDesign, UnbuiltDesign, built_design
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.failures.summary import FailuresSummary
from backbone.solver.placement.summary import PlaceSummary
from backbone.solver.plan.report_records import (
    BusyLink,
    CorridorsBlock,
    DatasetHome,
    DatasetRow,
    FailuresBlock,
    GravityMap,
    PlanReportData,
    Provenance,
    TbpsByClass,
    TrainingSite,
    WorkloadFlow,
    WorkloadsBlock,
)
from backbone.solver.plan.states import LinkSurvivability
from backbone.solver.plan.summary import PlanSummary, Residency
from backbone.solver.plan.workloads import WORKLOAD_DEMAND_PREFIX
from backbone.solver.te.sections import CorridorRow
from backbone.solver.te.summary import TERecord

__all__ = ["KIND_WORDS", "ReportOptions", "after_subtitle", "bound_text", "corridors_block", "draw_images",
           "gravity_map", "headline_text", "link_check_text", "plan_map", "report_data"]

logger = logging.getLogger(__name__)


class ReportOptions(Protocol):
    """The plan options the report shows (:class:`backbone.solver.tasks.plan.PlanOptions` has them)."""

    skip_upgrades: bool
    demand_growth: float
    plan_file: str | None
    plan_text: str | None


KIND_WORDS = {"srlg": "single-SRLG", "link": "single-link", "site": "single-site",
              "srlg,link": "single-SRLG and single-link"}
"""The failure kinds in words, as every survivability claim names them (headline, report, CLI)."""


def headline_text(sv: Survivability, ds: PlanDesign, skipped: bool, n_up: int, n_new: int,
                  link_check: LinkSurvivability | None = None) -> str:
    """The one sentence the report opens with; never contradicts the tables below it. It names the failure kinds
    the claim covers, and with ``link_check`` (a design that did not target single links) says how many
    single-link failures the planned backbone carries too. ``ds`` is the upgrade stage's record."""
    what = KIND_WORDS.get(sv.failure_kind, sv.failure_kind)
    text = f"survives {sv.survived} of {sv.states} {what} failures"
    if skipped:
        return f"Nothing was designed (--skip-upgrades): the backbone as it is {text}."
    cost, built = ds.cost_usd, built_design(ds)
    money = "–" if cost is None else f"{float(cost) / 1e6:,.1f} M USD"
    bound = "" if built is None or built.lower_bound_usd is None else (
        f", lower bound {built.lower_bound_usd / 1e6:,.1f} M, gap {100 * float(built.gap or 0):.1f} %")
    parts = [f"After the plan ({money}{bound}: {count_text(n_up, 'link')} upgraded, {count_text(n_new, 'new route')}) "
             f"the backbone {text}"]
    if sv.not_survivable:
        parts.append(f"{len(sv.not_survivable)} cannot be survived by any candidate (reasons listed)")
    if sv.violated:
        parts.append(f"{len(sv.violated)} are still not carried ({', '.join(sv.violated[:3])}"
                     f"{'…' if len(sv.violated) > 3 else ''})")
    if link_check:
        parts.append(link_check_text(link_check))
    return "; ".join(parts) + "."


def link_check_text(lc: LinkSurvivability | dict[str, Any]) -> str:
    """``"not designed for single links, it carries 230 of 236 single-link failures"`` (report, CLI, headline);
    ``lc`` is the check or ``plan.json``'s ``link_survivability``."""
    check = LinkSurvivability.model_validate(lc)
    missed = check.not_carried
    return (f"not designed for single-link failures, it carries {check.survived} of {check.states} of them"
            + (f" ({', '.join(missed[:3])}{'…' if len(missed) > 3 else ''} not carried)" if missed else ""))


def bound_text(ds: PlanDesign | Mapping[str, Any]) -> str:
    """The design's cost, its true lower bound and gap, then the restricted optimum with its restriction, in one
    sentence (the report, ``backbone plan`` and ``backbone design`` say it alike). ``ds`` is the plan's upgrade
    record or a design's document (``design.json``, ``backbone design --json``): text is an edge, so it reads the
    document."""
    def money(v: Any) -> str:
        if v is None:
            return "–"
        return f"{float(v) / 1e6:,.1f} M USD" if abs(float(v)) >= 1e5 else f"{float(v):,.0f} USD"

    doc = ds.document() if isinstance(ds, TypedSummary) else ds
    b = doc.get("bound") or {}
    text = (f"cost {money(doc.get('cost_usd'))}; lower bound {money(doc.get('lower_bound_usd'))}, gap "
            + ("–" if doc.get("gap") is None else f"{100 * float(doc['gap']):.1f} %"))
    if b:
        others = [f"{m} {money(o.get('bound_usd'))}, {o.get('status')}, {float(o.get('seconds') or 0):.1f} s"
                  for m, o in (b.get("bounds") or {}).items() if m != b.get("method")]
        text += (f" (LP relaxation over every candidate route and path, the intact state and {max(0, b['states'] - 1)} "
                 f"failure states: " + (f"{b['method']}, " if b.get("method") else "")
                 + f"bound LP {b['status']}, {b['seconds']:.1f} s" + (f"; {b['note']}" if b.get("note") else "")
                 + (f"; the other bound: {'; '.join(others)}" if others else "") + ")")
    r = doc.get("restricted_optimum") or {}
    if r:
        text += (f"; restricted optimum {money(r.get('cost_usd'))} (its bound {money(r.get('bound_usd'))}, "
                 f"{r.get('status')}) among {r.get('restriction')}")
    return text


def gravity_map(routed: Network, jobs: Sequence[Mapping[str, Any]],
                replicas: Sequence[Mapping[str, Any]]) -> GravityMap | None:
    """The data-gravity map's values (a ``map`` object, :mod:`backbone.maps.values`), or None when no training job
    was placed: the routed workload flows (src, dst, traffic class, Gbps; one per class and site pair, as routed),
    the sites of the placed jobs with their GPUs (``jobs``: the placement's ``training`` rows) and every dataset's
    homes, the placement's new ``replicas`` marked ``new``."""
    if not jobs:
        return None
    d = routed.demands
    work = d[d.index.astype(str).str.startswith(WORKLOAD_DEMAND_PREFIX) & (d["demand_gbps"] > 0)]
    flows = [WorkloadFlow(src=str(r.src), dst=str(r.dst), traffic_class=str(r.traffic_class), gbps=float(r.demand_gbps))
             for r in work.itertuples()]
    new = {(str(r["dataset"]), str(r["site"])) for r in replicas}
    homes = [DatasetHome(dataset=str(ds), site=str(site), new=(str(ds), str(site)) in new)
             for ds, sites in routed.datasets["home_sites"].items() for site in sites]
    training = [TrainingSite(job=str(r["job"]), site=str(r["site"]), gpus=float(r["gpus"])) for r in jobs]
    return GravityMap(workload_flows=flows, training_sites=training, dataset_homes=homes)


def _gravity_subtitle(gravity: GravityMap) -> str:
    """``2 training jobs on 3 sites (16,384 GPUs) · 4 datasets · workload flows 1.2 Tbps (12 flows)``."""
    jobs = {r.job for r in gravity.training_sites}
    sites = {r.site for r in gravity.training_sites}
    gpus = sum(r.gpus for r in gravity.training_sites)
    datasets = {r.dataset for r in gravity.dataset_homes}
    total = sum(r.gbps for r in gravity.workload_flows)
    return (f"{count_text(len(jobs), 'training job')} on {count_text(len(sites), 'site')} ({gpus:,.0f} GPUs) · "
            f"{count_text(len(datasets), 'dataset')} · workload flows {gbps_text(total)} Gbps "
            f"({count_text(len(gravity.workload_flows), 'flow')}, routed with the plan's traffic)")


def plan_map(pm: dict[str, Any], tm: dict[str, Any]) -> dict[str, Any]:
    """The plan's map before the upgrades: TE's utilisation per link (``tm``, the te summary's ``map``) and the
    placement's GPUs per site and serving arcs (``pm``, the place summary's ``map``)."""
    return {"link_values": {"utilisation": (tm.get("link_values") or {}).get("utilisation", {})},
            "site_values": pm.get("site_values", {}), "assignments": pm.get("assignments", []),
            "failed_links": []}


def draw_images(routed: Network, after: Network, summary: PlanSummary, te_demands: pd.DataFrame,
                fs: FailuresSummary, ps: PlaceSummary, writer: ArtifactWriter, maps: bool,
                progress: ProgressFn) -> dict[str, tuple[bytes, str]]:
    """Maps and charts through ``writer``; returns the images the report embeds. ``fs`` is the sweep the failure
    chart shows (today's network and traffic)."""
    from backbone.maps import render_map_bytes
    from backbone.maps.charts import chart_from_result

    images: dict[str, tuple[bytes, str]] = {}
    if not maps:
        return images
    title = f"{routed.name}: the plan"
    sub = (f"{summary.gpus_added:,.0f} GPUs added · max utilisation {100 * (known(summary.mlu) or 0):.0f} % · "
           f"{summary.failure_scenarios} {summary.failure_kind} failures swept")
    result = {"map": summary.map}
    data = render_map_bytes(after, "png", {"map": summary.map_after}, title=f"{routed.name}: after the plan",
                            subtitle=after_subtitle(summary), size="1600x900")
    writer.bytes("map_after.png", data)
    images["after"] = (data, "png")
    after_doc = {"map": summary.map_after}
    after_title, after_sub = f"{routed.name}: after the plan", after_subtitle(summary)
    # today's links with the placement's traffic (PNG), and the planned backbone with what was bought (the rest)
    jobs = [("map_world.png", "png", 0.0, False), ("map_pacific.png", "png", 150.0, False),
            ("map.svg", "svg", 0.0, True), ("map.html", "html", 0.0, True), ("map.geojson", "geojson", 0.0, True)]
    gravity = gravity_map(routed, ps.training, ps.replicas)
    for i, (name, fmt, center_lon, planned) in enumerate(jobs):
        progress(0.8 * i / len(jobs), f"drawing {name}")
        size = "1600x900" if fmt == "png" else "1920x1080"
        doc = after_doc if planned else result
        if fmt in ("html", "geojson") and gravity is not None:  # the interactive map and GeoJSON carry the flows too
            doc = {"map": {**doc["map"], **gravity.document()}}
        data = render_map_bytes(after if planned else routed, fmt, doc,
                                title=after_title if planned else title, subtitle=after_sub if planned else sub,
                                size=size, center_lon=center_lon)
        writer.bytes(name, data)
        if name == "map_world.png":
            images["world"] = (data, "png")
        elif name == "map_pacific.png":
            images["pacific"] = (data, "png")
    if gravity is not None:
        progress(0.8, "drawing map_gravity.png")
        data = render_map_bytes(routed, "png", {"map": gravity.document()}, color_by="kind", size="1600x900",
                                title=f"{routed.name}: data gravity (training jobs, their datasets and workload flows)",
                                subtitle=_gravity_subtitle(gravity))
        writer.bytes("map_gravity.png", data)
        images["gravity"] = (data, "png")
    charts: list[tuple[str, str, dict[str, Any]]] = [
        ("utilisation", "chart_utilisation.png", {"map": summary.map}),
        ("latency", "chart_latency.png", {"latency": _latency_records(routed, te_demands),
                                          "latency_weight_name": "carried Gbps", "latency_path": "routed paths"}),
        ("impact", "chart_failures.png", _impact_doc(fs)),
        ("cost", "chart_cost.png", {"sites": [r for r in ps.sites if (r.get("gpus_added") or 0) > 0]}),
    ]
    for kind, name, doc in charts:
        try:
            data = chart_from_result(kind, doc, routed, fmt="png", size=(1200, 675))
        except ValidationError as exc:  # nothing to chart (e.g. no failure hurts, nothing built)
            logger.info("chart %s skipped: %s", kind, exc)
            continue
        writer.bytes(name, data)
        images[kind] = (data, "png")
    progress(1.0, "maps and charts drawn")
    return images


def after_subtitle(summary: PlanSummary) -> str:
    """The subtitle of the maps of the planned backbone: what was bought, utilisation and survivability."""
    sv = summary.survivability
    bought = (f"{count_text(summary.routes_built, 'new route')}, {count_text(summary.links_upgraded, 'link')} "
              f"upgraded, {count_text(round(summary.gpus_added), 'GPU')} added")
    return (f"{bought} · max utilisation {100 * (known(summary.mlu_after) or 0):.0f} % · survives {sv.survived} of "
            f"{sv.states} {KIND_WORDS.get(sv.failure_kind, sv.failure_kind)} failures")


def known(value: float | None) -> float | None:
    """A figure of the plan's summary as its document holds it: NaN (unknown) is None (the rule of
    :meth:`~backbone.solver.core.summary.TypedSummary.document`), so the report says the same as ``plan.json``."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _impact_doc(fs: FailuresSummary) -> dict[str, Any]:
    """The failure chart's input (``fs``: the sweep of today's network and traffic): each failure's impact (Gbps:
    unmet at <= 100 % utilisation, SLO violations and traffic lost with failed sites), or the worst utilisation
    when no failure has any impact."""
    impact = {r["scenario"]: r["impact_gbps"] for r in fs.scenarios if (r.get("impact_gbps") or 0) > 1e-6}
    if impact:
        return {"impact": impact, "impact_label": "Failure impact today (Gbps)"}
    return {"impact": {r["scenario"]: r["mlu"] for r in fs.scenarios},
            "impact_label": "Max link utilisation today"}


def _protects_text(states: Any) -> str:
    if not states:
        return ""
    failures = [s for s in states if s != "intact"]
    text = ", ".join(failures[:6]) + (f" and {len(failures) - 6} more" if len(failures) > 6 else "")
    return ("intact state; " if "intact" in states else "") + text


def _latency_records(net: Network, demands: pd.DataFrame) -> list[dict[str, Any]]:
    """Per-demand one-way latency of the routed traffic with its region pair (for the latency CDF), from the
    routing stage's demand table (:attr:`TEResult.demands`)."""
    d = demands[(demands["carried_gbps"] > 0) & demands["latency_ms"].notna()]
    region = net.sites["region"]
    a, b = region.reindex(d["src"]).to_numpy(), region.reindex(d["dst"]).to_numpy()
    pair = [f"{x}–{y}" if str(x) <= str(y) else f"{y}–{x}" for x, y in zip(a, b, strict=True)]
    return [{"region_pair": p, "latency_ms": float(v), "weight": float(w)}
            for p, v, w in zip(pair, d["latency_ms"], d["carried_gbps"], strict=True)]


def report_data(net: Network, routed: Network, opts: ReportOptions, summary: PlanSummary, ps: PlaceSummary,
                ts: TERecord, fs: FailuresSummary, ds: PlanDesign, upgrades: pd.DataFrame,
                files: list[str], today: FailuresSummary | None = None) -> PlanReportData:
    """The plan report's data from the plan's summary and each stage's summary (typed; the report renders its
    document).

    ``fs`` is the failures stage's sweep (the network with the placement's GPUs and traffic, before the upgrades);
    ``today`` the sweep of the scenario as given (``backbone failures`` on it), shown as "what breaks today"."""
    lc = summary.link_survivability
    return PlanReportData(
        title=f"Backbone plan: {net.name}",
        subtitle=f"{len(net.sites)} sites, {len(net.links)} links, {len(net.demands)} demands · "
                 f"created {summary.created_utc}",
        kpis=_plan_kpis(summary, opts, ds),
        notes=_plan_notes(ps, ds, opts),
        stages=summary.stages,
        placement_sites=[{"site": r.get("site", r.get("id")), **r} for r in ps.sites
                         if (r.get("gpus_after") or 0) > 0],
        placement_metros=_placement_metros(ps),
        busiest_links=_busiest_links(summary, routed),
        failures_today=_failures_block(today) if today is not None else None,
        failures_with_plan_traffic=_failures_block(fs),
        upgrades=[{**r, "protects_text": _protects_text(r.get("protects"))} for r in upgrades.to_dict("records")],
        upgrade_cost_usd=ds.cost_usd,
        headline=summary.headline,
        headline_ok=not summary.survivability.violated and not opts.skip_upgrades,
        survivability=summary.survivability,
        link_survivability=lc,
        link_survivability_text=link_check_text(lc) if lc else "",
        before_after=summary.before_after,
        failure_words=KIND_WORDS.get(summary.failure_kind, summary.failure_kind),
        design_note=_design_note(summary, ds, opts),
        assumptions=_plan_assumptions(summary, opts, ps, ts, ds),
        provenance=Provenance(scenario=net.name, scenario_fingerprint=summary.scenario_fingerprint,
                              scenario_version=str(net.meta.get("version", "")),
                              software_version=summary.software_version, created_utc=summary.created_utc,
                              plan_file=opts.plan_file or "(none: defaults)", plan_text=opts.plan_text or ""),
        files=sorted(set(files) | {"report.html", "plan.json"}),
        workloads=workloads_block(routed, ps),
        corridors=corridors_block(ts.corridors or []),
    )


def corridors_block(rows: Sequence[CorridorRow]) -> CorridorsBlock | None:
    """The report's backbone Tbps by corridor and class, from the route stage's ``corridors`` (``corridors.csv``): one
    row per corridor (region pairs, then the corridor SRLGs) with its lit Tbps, each direction's Tbps, utilisation
    (the corridor as one pipe, and its busiest link) and, per class, ``"east / west"`` Tbps; None without rows."""
    if not rows:
        return None
    frame = pd.DataFrame([r.model_dump() for r in rows])
    classes = list(dict.fromkeys(frame.loc[frame["traffic_class"] != ALL_CLASSES, "traffic_class"]))
    split = frame.set_index(["view", "corridor", "traffic_class"])
    out = []
    for r in frame[frame["traffic_class"] == ALL_CLASSES].itertuples():
        row = {"view": "region pair" if r.view == "region" else "corridor SRLG", "corridor": r.corridor,
               "lit_tbps": r.capacity_gbps / 1000, "eastbound_tbps": r.eastbound_gbps / 1000,
               "westbound_tbps": r.westbound_gbps / 1000, "utilisation": r.utilisation,
               "max_link_utilisation": r.max_link_utilisation, "links": r.links}
        for cls in classes:
            key = (r.view, r.corridor, cls)
            row[cls] = (f"{split.at[key, 'eastbound_gbps'] / 1000:,.2f} / {split.at[key, 'westbound_gbps'] / 1000:,.2f}"
                        if key in split.index else "–")
        out.append(row)
    return CorridorsBlock(rows=out, classes=classes)


def workloads_block(routed: Network, ps: PlaceSummary) -> WorkloadsBlock | None:
    """The report's workloads: placed training jobs (sites, GPUs, Gbps by class), the datasets with their homes
    (new replicas included) and storage, and the routed traffic in Tbps by class; None without training jobs."""
    jobs = ps.training
    if not jobs and not len(routed.training_jobs):
        return None
    ds = routed.datasets
    datasets = [DatasetRow(dataset=str(d), size_pb=float(r["size_pb"]), homes=", ".join(r["home_sites"]),
                           residency=", ".join(r["residency"]) or "anywhere") for d, r in ds.iterrows()]
    by_class = routed.demands.groupby("traffic_class")["demand_gbps"].sum() / 1000.0
    considered = bool(ps.options.get("scenario_jobs"))
    placed = {r["job"] for r in jobs}
    return WorkloadsBlock(
        jobs=jobs, replicas=ps.replicas, datasets=datasets,
        tbps_by_class=[TbpsByClass(traffic_class=str(k), tbps=float(v)) for k, v in by_class.items()],
        unplaced=[str(j) for j in routed.training_jobs.index if considered and str(j) not in placed],
        not_considered=0 if considered else len(routed.training_jobs))


def _failures_block(fs: FailuresSummary) -> FailuresBlock:
    """One sweep as the report shows it: counts, the worst scenarios and the links driven highest."""
    return FailuresBlock(scenarios=fs.scenarios_run, survived=fs.survived, not_survived=fs.not_survived,
                         worst=fs.worst, worst_by_link=fs.worst_by_link, notes=fs.notes)


def _money(v: Any) -> str:
    return "–" if v is None else f"{float(v) / 1e6:,.1f} M USD"


def _by_class_text(by_class: dict[str, float] | None) -> str:
    if not by_class:
        return "–"
    return ", ".join(f"{cls} {gbps_text(v)} Gbps" for cls, v in by_class.items())


def _residency_text(residency: Residency | None) -> str:
    if not residency:
        return "–"
    return f"{residency.violations} ({residency.gpus:,.0f} GPUs) under {residency.rules} rules"


def _plan_kpis(summary: PlanSummary, opts: ReportOptions, ds: PlanDesign) -> list[tuple[str, str]]:
    """The headline figures (label, value) at the top of the report; an unknown (NaN) figure reads as None, as in
    ``plan.json`` (:func:`known`)."""
    restricted = built.restricted_optimum if (built := built_design(ds)) else None
    s, today, lc = summary, summary.failures_today, summary.link_survivability
    slo, slo_after = s.slo_violations, s.slo_violations_after
    gap = known(s.upgrade_gap)
    kpis = [
        ("GPUs added", f"{s.gpus_added:,.0f}"),
        ("placement cost (capex + opex)", _money(known(s.placement_cost_usd))),
        ("inference demand served", f"{100 * (known(s.served_share) or 0):.1f} %"),
        ("max link utilisation with the plan's traffic: before → after the upgrades",
         f"{100 * (known(s.mlu) or 0):.1f} % → {100 * (known(s.mlu_after) or 0):.1f} %"),
        ("traffic carried (with the plan's traffic)", f"{(known(s.carried_gbps) or 0) / 1000:,.1f} Tbps"),
        ("unmet traffic (≤ 100 %) with the plan's traffic: before → after",
         f"{gbps_text(known(s.unmet_gbps))} → {gbps_text(known(s.unmet_gbps_after))} Gbps"),
        ("unmet after the plan, per class", _by_class_text(s.unmet_by_class_gbps_after)),
        ("failure states with latency-SLO violations before → after",
         f"{'–' if slo is None else slo.states} → {'–' if slo_after is None else slo_after.states}"),
        ("residency violations (assignments, GPUs)", _residency_text(s.residency)),
        (f"{s.failure_kind} failures swept", f"{s.failure_scenarios}"),
        *([("failures not carried today (today's network and traffic)",
            f"{today.not_survived} of {today.scenarios}")] if today else []),
        ("failures not carried with the plan's GPU traffic: before → after the upgrades",
         f"{s.failures_with_unmet_demand} → {s.failures_with_unmet_demand_after}"),
        *((("single-link failures carried after (not designed for)", f"{lc.survived} of {lc.states}"),)
          if lc else ()),
        ("upgrade cost (lower bound, gap)", "nothing designed" if opts.skip_upgrades else
         f"{_money(known(s.upgrade_cost_usd))} ({_money(known(s.upgrade_lower_bound_usd))}, "
         + ("–" if gap is None else f"{100 * float(gap):.1f} %") + ")"),
        ("restricted optimum", "–" if opts.skip_upgrades or restricted is None else
         f"{_money(restricted.cost_usd)} among " + restricted.restriction),
        ("links upgraded / new routes", "–" if opts.skip_upgrades else
         f"{s.links_upgraded} / {s.routes_built}"),
    ]
    return kpis


def _placement_metros(ps: PlaceSummary) -> list[dict[str, Any]]:
    """Placement's metro rows, each with its worst round trip over the sites serving it."""
    metros = []
    assign = pd.DataFrame(ps.assignments)
    rtt = assign.groupby(["metro", "class"])["rtt_ms"].max() if len(assign) else pd.Series(dtype=float)
    for r in ps.metros:
        metros.append({**r, "rtt_ms": float(rtt.get((r.get("metro"), r.get("class")), float("nan")))})
    return metros


def _busiest_links(summary: PlanSummary, routed: Network) -> list[BusyLink]:
    """The 15 busiest links of the routed network, with cable system and capacity."""
    util = pd.Series((summary.map["link_values"] or {}).get("utilisation", {}), dtype=float)
    return [BusyLink(link=str(k), cable_system=routed.links.at[k, "cable_system"] or "terrestrial",
                     capacity_gbps=float(routed.links.at[k, "capacity_gbps"]), utilisation=float(v))
            for k, v in util.sort_values(ascending=False).head(15).items() if k in routed.links.index]


def _plan_notes(ps: PlaceSummary, ds: PlanDesign, opts: ReportOptions) -> list[str]:
    """Notes on placement infeasibility, an infeasible design and ``--skip-upgrades``."""
    notes = []
    if ps.infeasibility:
        notes += [f"placement: {x}" for x in ps.infeasibility[:5]]
    if isinstance(ds, UnbuiltDesign) and ds.status == "infeasible":
        notes.append(f"upgrades: {ds.message}")
    if opts.skip_upgrades:
        notes.append("--skip-upgrades: nothing was designed. The tables show the backbone as it is, with the "
                     "placement's traffic.")
    return notes


def _plan_assumptions(summary: PlanSummary, opts: ReportOptions, ps: PlaceSummary, ts: TERecord,
                      ds: PlanDesign) -> list[str]:
    """The assumptions paragraph: latency, placement, demand growth, routing, failures and design."""
    place_o = ps.options
    built = built_design(ds)
    return [
        "Latency: fibre group index 1.468 (≈4.90 µs/km one way) plus 0.05 ms per link; terrestrial links without "
        "route geometry at 1.25 × the geodesic.",
        f"Placement: {place_o.get('kw_per_gpu', '?')} kW per GPU all-in, blocks of {place_o.get('block_gpus', '?')} GPUs, "
        f"{place_o.get('horizon_years', '?')}-year opex horizon, {place_o.get('gbps_per_gpu', '?')} Gbps of backbone "
        "traffic per inference GPU served remotely; SLOs "
        + ", ".join(f"{c['name']} {c['slo_rtt_ms']:.0f} ms RTT" for c in place_o.get("classes", [])) + ".",
        f"Demand growth factor {opts.demand_growth:g}.",
        f"Routing: TE objective {ts.objective} over {ts.paths_k} candidate paths per demand; latency "
        "SLOs are hard constraints.",
        f"Failures: every {summary.failure_kind} failure re-routed over the latency-admissible candidate paths. "
        "Impact: traffic that cannot be carried at ≤ 100 % utilisation beyond what the intact network leaves "
        "unmet (per class), latency-SLO violations and traffic lost with failed sites, each apart; the same "
        "figures as `backbone failures` and the `impact` block of `backbone te`.",
        f"Design: whole modules on existing links (links.module_gbps at links.module_cost_usd, up to "
        f"max_capacity_gbps) and candidate routes (fixed cost + modules, candidates table) chosen jointly in one "
        f"MIP so the intact network fits within {100 * (built.ceiling if built else 0.8):.0f} % utilisation and every "
        f"failure state within {100 * (built.failure_ceiling if built else 1.0):.0f} %; states are added to the model "
        "as the sweep of the designed network finds them violated, until none is. A state is excused only when no "
        "candidate can help (reason listed).",
    ]


def _design_note(summary: PlanSummary, ds: PlanDesign, opts: ReportOptions) -> str:
    """One sentence on the design: iterations, states, cost, bound and gap (or nothing designed)."""
    return "Nothing was designed (--skip-upgrades)." if opts.skip_upgrades else (
        f"{count_text(summary.design_iterations, 'design iteration')}; "
        f"{count_text(summary.states_examined or 0, 'state')} examined, "
        f"{summary.states_added} added to the model, {summary.states_needed} needed by some purchase; "
        + bound_text(ds) + ".")
