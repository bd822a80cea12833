"""The roadmap's files: each period's backbone as a scenario, CSVs, the timeline, maps per year, the report.

Written by :func:`write_roadmap` (each file through a temporary name and an atomic rename; the list of
files is returned for the task's manifest). ``roadmap.json`` itself is written by the planning service.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import pandas as pd

from backbone.artifacts import ArtifactWriter
from backbone.errors import ValidationError
from backbone.model import Network
from backbone.report_roadmap import NETWORK_BUILD_ACTIONS
from backbone.serialize import count_text
from backbone.solver.core.progress import ProgressFn
from backbone.solver.roadmap.rolling import RoadmapResult
from backbone.solver.roadmap.summary import RoadmapSummary

logger = logging.getLogger(__name__)

__all__ = ["timeline_png", "write_roadmap"]

TIMELINE_MAX_ROWS = 40
"""Builds drawn in the timeline (the costliest; the CSV lists every one)."""

ACTION_COLOURS = {"upgrade": "#0b6e8a", "new route": "#a15c00", "gpus": "#1e7a3c", "replica": "#6a3d9a"}


def period_table(summary: RoadmapSummary) -> pd.DataFrame:
    """One row per period: the figures of the summary's ``periods`` flattened for a CSV."""
    from backbone.solver.roadmap.rolling import design_bound

    risk = {x.period for x in summary.starting_risk.periods} if summary.starting_risk is not None else set()
    rows = []
    for p in summary.periods:
        sv = p.survivability
        bound, gap, restriction = design_bound(p.design)
        rows.append({
            "period": p.period, "capex_usd": p.capex_usd, "network_capex_usd": p.network_capex_usd,
            "gpu_capex_usd": p.gpu_capex_usd, "storage_capex_usd": p.storage_capex_usd,
            "capex_online_usd": p.capex_online_usd,
            "jobs_placed": len(p.jobs_placed), "jobs_unplaced": len(p.jobs_unplaced),
            "unplaced_jobs": "; ".join(f"{j.job}: {j.reason}" for j in p.jobs_unplaced),
            "replicas_built": len(p.replicas_built),
            "opex_usd": p.opex_usd, "served_share": p.served_share, "unserved_gpus": p.unserved_gpus,
            "mlu": p.mlu, "unmet_gbps": p.unmet_gbps, "demand_gbps": p.demand_gbps,
            "gpus_installed": p.gpus_installed, "gpus_added": sum(p.gpus_added_by_site.values()),
            "builds_online": len(p.builds), "failure_kind": sv.failure_kind, "states": sv.states,
            "survived": sv.survived, "violated": len(sv.violated), "excused": len(sv.not_survivable),
            "design_mode": p.design.mode, "design_status": p.design.status,
            "starting_risk": p.period in risk,
            "design_lower_bound_usd": bound, "design_gap": gap, "design_bound": restriction or "true bound",
            "budget_shortfall_usd": p.budget_shortfall_usd, "budget_note": p.budget_note,
            "seconds": p.seconds,
        })
    return pd.DataFrame(rows)


def job_table(summary: RoadmapSummary) -> pd.DataFrame:
    """One row per (period, training job running in it): ``period``, ``job``, ``status`` (``placed`` or
    ``unplaced``), ``sites``, ``gpus`` and ``reason`` (why unplaced: the placement's diagnosis) --
    ``roadmap_jobs.csv``."""
    cols = ["period", "job", "status", "sites", "gpus", "reason"]
    rows = [{"period": p.period, "job": j.job, "status": "placed", "sites": j.sites, "gpus": j.gpus, "reason": ""}
            for p in summary.periods for j in p.jobs_placed]
    rows += [{"period": p.period, "job": j.job, "status": "unplaced", "sites": "", "gpus": j.gpus,
              "reason": j.reason} for p in summary.periods for j in p.jobs_unplaced]
    order = {p.period: i for i, p in enumerate(summary.periods)}
    table = pd.DataFrame(rows, columns=cols)
    return table.iloc[sorted(range(len(table)), key=lambda i: (order[table.at[i, "period"]], table.at[i, "job"]))
                      ].reset_index(drop=True)


def replica_rows(summary: RoadmapSummary) -> list[dict[str, Any]]:
    """The dataset replicas the roadmap built, one plain record per (period, dataset, site) with its storage capex
    (the report's rows)."""
    return [{"period": p.period, **r.model_dump()} for p in summary.periods for r in p.replicas_built]


def timeline_png(builds: pd.DataFrame, labels: list[str], title: str = "Roadmap timeline") -> bytes:
    """A Gantt chart: per build, a bar from commitment to service (the lead time) and a line while in service.

    Raises
    ------
    ValidationError
        When there is nothing to draw (no build).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    if builds.empty:
        raise ValidationError("nothing to draw: the roadmap builds nothing")
    gpu = builds[builds["action"] == "gpus"]
    network = builds[builds["action"] != "gpus"]  # backbone builds and dataset replicas, one row each
    # GPU blocks: one row per commitment (all sites together), so the backbone's builds stay visible
    blocks = gpu.groupby(["committed_index", "online_index"], as_index=False).agg(
        cost_usd=("cost_usd", "sum"), gpus=("gpus", "sum"), sites=("site_a", "nunique"))
    blocks = blocks.assign(action="gpus", id=[f"GPU blocks: {g:,.0f} at {n} site{'s' if n > 1 else ''}"
                                               for g, n in zip(blocks["gpus"], blocks["sites"], strict=True)])
    b = pd.concat([network.sort_values("cost_usd", ascending=False).head(TIMELINE_MAX_ROWS - len(blocks)),
                   blocks[["id", "action", "cost_usd", "committed_index", "online_index"]]], ignore_index=True)
    b = b.sort_values(["online_index", "committed_index", "id"]).reset_index(drop=True)
    shown_network = min(len(network), TIMELINE_MAX_ROWS - len(blocks))
    n, N = len(b), len(labels)
    fig, ax = plt.subplots(figsize=(12, max(3.2, 0.28 * n + 2.0)), dpi=110)
    for i, r in b.iterrows():
        colour = ACTION_COLOURS.get(str(r["action"]), "#555555")
        c, o = int(r["committed_index"]), int(r["online_index"])
        ax.barh(i, max(o - c, 0.08), left=c, height=0.6, color=colour, alpha=0.45, edgecolor=colour)
        ax.plot([o, N], [i, i], color=colour, lw=2.2)
        ax.plot([o], [i], marker="D", color=colour, ms=5)
    names = [f"{r['id']} ({r['cost_usd'] / 1e6:,.1f} M USD)" for _, r in b.iterrows()]
    ax.set_yticks(range(n), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xticks(range(N), labels, fontsize=8)
    ax.set_xlim(-0.2, N)
    ax.grid(axis="x", color="#d9dee5")
    ax.set_title(title + (f" (the {shown_network} costliest of {len(network)} backbone and storage builds)"
                          if shown_network < len(network) else ""), fontsize=11, loc="left")
    ax.legend(handles=[Patch(color=c, label=k) for k, c in ACTION_COLOURS.items()]
              + [Patch(color="#999999", alpha=0.45, label="committed → online (lead time)")],
              loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=4, fontsize=8, frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _year_maps(net0: Network, result: RoadmapResult, writer: ArtifactWriter) -> dict[str, tuple[bytes, str]]:
    """The backbone at the end of each year (small multiples): utilisation coloured, the routes the roadmap
    built (links not in ``net0``) highlighted."""
    from backbone.maps import render_map_bytes

    images: dict[str, tuple[bytes, str]] = {}
    last_of_year: dict[str, int] = {}
    for t, label in enumerate(result.labels):
        last_of_year[label[:4]] = t
    base = set(net0.links.index)
    for year, t in last_of_year.items():
        net = result.networks[t]
        util = result.utilisation[t] if t < len(result.utilisation) else pd.Series(dtype=float)
        new = [str(x) for x in net.links.index if x not in base]
        doc = {"map": {"link_values": {"utilisation": {str(k): float(v) for k, v in util.items()}},
                       "failed_links": [], "built_candidates": new}}
        p = result.periods[t]
        sub = (f"{result.labels[t]}: max utilisation {100 * (p.mlu or 0):.0f} % · survives "
               f"{p.survivability.survived} of {p.survivability.states} {p.survivability.failure_kind}"
               f" failures · {p.gpus_installed:,.0f} GPUs")
        data = render_map_bytes(net, "png", doc, title=f"{result.scenario}: {year}", subtitle=sub, size="1200x675")
        writer.bytes(f"map_{year}.png", data)
        images[f"map_{year}"] = (data, "png")
    return images


def write_roadmap(net: Network, result: RoadmapResult, summary: RoadmapSummary, out_dir: Any,
                  progress: ProgressFn) -> list[str]:
    """Write the roadmap's files into ``out_dir``; returns their names (relative to it).

    ``periods/<period>/scenario/`` (canonical scenario folders: any command runs on them),
    ``roadmap_periods.csv``, ``roadmap_builds.csv``, ``roadmap_budget.csv``, ``timeline.png``,
    ``map_<year>.png`` and ``report.html``.
    """
    from backbone.io import save_scenario

    writer = ArtifactWriter(Path(out_dir))
    for i, (label, period_net) in enumerate(zip(result.labels, result.networks, strict=True)):
        progress(0.3 * i / max(1, len(result.labels)), f"writing periods/{label}/scenario")
        folder = save_scenario(period_net, writer.path(f"periods/{label}/scenario"))
        writer.extend(sorted(f"periods/{label}/scenario/{f.name}" for f in folder.iterdir() if f.is_file()))
    writer.csv("roadmap_periods.csv", period_table(summary))
    writer.csv("roadmap_builds.csv", result.builds)
    jobs = job_table(summary)
    if len(jobs):
        writer.csv("roadmap_jobs.csv", jobs)
    writer.csv("roadmap_budget.csv", result.ledger)
    images: dict[str, tuple[bytes, str]] = {}
    if result.options.maps:
        progress(0.4, "drawing the timeline")
        try:
            data = timeline_png(result.builds, result.labels, f"{result.scenario}: roadmap timeline")
            writer.bytes("timeline.png", data)
            images["timeline"] = (data, "png")
        except ValidationError as exc:
            logger.info("timeline skipped: %s", exc)
        progress(0.5, "drawing the maps per year")
        images |= _year_maps(net, result, writer)
    from backbone.report_roadmap import render_roadmap_report

    progress(0.95, "writing report.html")
    html = render_roadmap_report(report_data(result, summary, writer.files), images)  # plain values: the edge
    writer.text("report.html", html)
    return writer.files


def _job_lines(summary: RoadmapSummary) -> tuple[list[tuple[str, str]], str, list[str]]:
    """The report's words on training jobs: its KPIs (jobs unplaced, replica storage capex), the headline's tail
    and one note per unplaced (period, job) with its reason; nothing when the roadmap placed no job."""
    unplaced = summary.jobs_unplaced
    if not unplaced and not any(p.jobs_placed for p in summary.periods):
        return [], "", []
    kpis = [("training jobs unplaced", ", ".join(f"{j.job} ({j.period})" for j in unplaced[:4])
             + ("…" if len(unplaced) > 4 else "") if unplaced else "none"),
            ("replica storage capex", f"{summary.storage_capex_usd / 1e6:,.1f} M USD")]
    headline = (f" {count_text(len(unplaced), 'training job placement')} left unplaced "
                f"({', '.join(dict.fromkeys(j.period for j in unplaced))}): see Training jobs by period."
                if unplaced else "")
    notes = [f"{j.period}: training job {j.job} ({j.gpus:,.0f} GPUs) not placed: {j.reason}" for j in unplaced]
    return kpis, headline, notes


def report_data(result: RoadmapResult, summary: RoadmapSummary, files: list[str]) -> dict[str, Any]:
    """Plain values for :func:`backbone.report_roadmap.render_roadmap_report` (the report's edge: the typed summary
    is dumped here)."""
    o = result.options

    def money(v: float | None) -> str:
        return "–" if v is None else f"{float(v) / 1e6:,.1f} M USD"

    def percent(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.2f} %"

    periods = summary.periods
    last = periods[-1]
    sv = last.survivability
    counts = (f"{sv.survived} of {sv.states} {sv.failure_kind} failures ({len(sv.not_survivable)} excused, "
              f"{len(sv.violated)} violated)")
    kpis = [
        ("periods", f"{len(periods)} {o.period}s, {summary.start} → {summary.end}"),
        ("total capex", money(summary.total_capex_usd)),
        ("backbone / GPU capex", f"{money(summary.network_capex_usd)} / {money(summary.gpu_capex_usd)}"),
        ("discounted backbone capex", money(summary.discounted_network_capex_usd)),
        ("its lower bound (gap)", f"{money(summary.lower_bound_usd)} ({percent(summary.gap)})"),
        ("per-period step bounds (gap)", f"{money(summary.step_bounds.network_capex_lower_bound_usd)} "
                                         f"({percent(summary.step_bounds.gap)})"),
        ("objective (discounted)", money(summary.objective_usd)),
        (f"{summary.end} carries", counts),
        (f"{summary.end} inference served", f"{100 * (last.served_share or 0):.1f} %"),
        ("periods short of budget", ", ".join(x.period for x in summary.budget_shortfalls) or "none"),
    ]
    job_kpis, job_headline, job_notes = _job_lines(summary)
    kpis += job_kpis
    headline = (f"Status {summary.status}: {money(summary.network_capex_usd)} of backbone capex and "
                f"{money(summary.gpu_capex_usd)} of GPU capex over {len(periods)} {o.period}s; by {summary.end} "
                f"the backbone carries {counts}.{job_headline}")
    builds = [b.model_dump() for b in summary.builds]
    notes = list(summary.notes) + [f"{s.period}: {s.reason}" for s in summary.budget_shortfalls] + job_notes
    risk = {x.period for x in summary.starting_risk.periods} if summary.starting_risk is not None else set()
    for p in periods:
        v = p.survivability.violated
        if v and p.period not in risk:  # the starting risk says those once
            notes.append(f"{p.period}: {count_text(len(v), p.survivability.failure_kind + ' failure')} not carried "
                         f"({', '.join(v[:4])}{'…' if len(v) > 4 else ''}); design: {p.design.mode}")
    bound = summary.bound
    assumptions = [
        f"Demand grows per region per year: {', '.join(f'{k} {100 * v:.0f} %' for k, v in o.growth_per_year.items())}"
        + (f"; class factors {o.class_growth_factor}" if o.class_growth_factor else "")
        + (f"; metros {o.metro_growth_per_year}" if o.metro_growth_per_year else "")
        + f". The first period ({summary.start}) carries the scenario's demand as given (data/README.md).",
        f"Lead times: link upgrades {o.upgrade_lead_quarters} quarter(s), GPU blocks {o.gpu_lead_quarters} quarter(s), "
        "candidate routes their own lead_time_quarters and not before their available_from quarter. Capex is "
        "charged in the period a build is committed; nothing is committed before the first period. Within a "
        "period, GPU blocks are funded first, then the backbone.",
        "Budget: " + ("none" if o.budget_usd_per_period is None else f"{o.budget_usd_per_period} USD per period, "
                      f"{100 * o.carry_over:.0f} % of what a period leaves carried over") + ".",
        f"Decomposition: {summary.decomposition}. Lower bound ({bound.status}): {bound.covers}"
        + (f"; {bound.note}" if bound.note else "") + f". Per-period step bounds: {summary.step_bounds.covers}",
        f"Objective: capex by commit period + energy opex of the GPUs added, discounted at "
        f"{100 * o.discount_rate_per_year:.0f} %/year, + {o.unserved_penalty_usd_per_gbps:,.0f} USD per Gbps unmet "
        f"and {o.unserved_penalty_usd_per_gpu:,.0f} USD per inference GPU unserved, per period. Backbone opex "
        "(leases, power of line systems) is not modelled.",
    ]
    return {
        "title": f"Backbone roadmap: {result.scenario}",
        "subtitle": f"{summary.start} → {summary.end} · {len(periods)} {o.period}s · planned in "
                    f"{summary.seconds:,.0f} s",
        "headline": headline, "headline_ok": summary.status == "ok",
        "kpis": kpis, "notes": notes, "periods": period_table(summary).to_dict("records"),
        "builds": [b for b in builds if b["action"] in NETWORK_BUILD_ACTIONS],
        "gpus": [b for b in builds if b["action"] == "gpus"],
        "jobs": job_table(summary).to_dict("records"), "replicas": replica_rows(summary),
        "ledger": [r.model_dump() for r in summary.ledger], "assumptions": assumptions,
        "verification": None if summary.verification is None else summary.verification.document(),
        "provenance": {"scenario": result.scenario, "scenario_fingerprint": result.fingerprint,
                       "plan_file": o.plan_file or "(none: defaults)", "plan_text": o.plan_text or ""},
        "files": sorted(set(files) | {"report.html", "roadmap.json"}),
    }
