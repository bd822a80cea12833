"""The planner's report: one self-contained HTML page (inline CSS, images as data URIs, no script).

:func:`render_report` takes plain values -- figures, tables as records, images as bytes -- so it
can present any plan without knowing the solver (this module never imports ``solver``).
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

CSS = """
:root { --ink:#1d2733; --muted:#5b6776; --line:#d9dee5; --accent:#0b6e8a; --bad:#b3261e; --warn:#a15c00; --ok:#1e7a3c; }
* { box-sizing: border-box; }
body { font: 15px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 0; background:#f6f7f9; }
header { background: #102a3a; color: #fff; padding: 28px 40px 22px; }
header h1 { margin: 0 0 6px; font-size: 28px; font-weight: 600; }
header p { margin: 0; color: #c5d3dd; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 40px 60px; }
section { background:#fff; border:1px solid var(--line); border-radius:8px; padding: 18px 24px; margin: 18px 0; }
h2 { font-size: 20px; margin: 0 0 12px; color: #102a3a; }
h3 { font-size: 16px; margin: 18px 0 8px; color: #102a3a; }
.kpis { display:grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 12px; }
.kpi { border:1px solid var(--line); border-radius:6px; padding: 10px 14px; }
.kpi .v { font-size: 22px; font-weight: 600; }
.kpi .l { color: var(--muted); font-size: 13px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 6px 0 4px; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: #eef1f5; font-weight: 600; }
td.t, th.t { text-align: left; white-space: normal; }
tr.bad td { color: var(--bad); } tr.warn td { color: var(--warn); }
img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
img.chart { display: block; width: 100%; margin: 8px 0 14px; }
.grid2 { display:grid; grid-template-columns: 1fr 1fr; gap: 16px; }
.muted { color: var(--muted); font-size: 13px; }
.status-ok { color: var(--ok); font-weight: 600; } .status-bad { color: var(--bad); font-weight: 600; }
pre { background:#f1f3f6; padding: 10px; border-radius: 4px; overflow-x: auto; font-size: 12px; }
footer { color: var(--muted); font-size: 12px; text-align: center; padding: 20px; }
"""

_MIME = {"png": "image/png", "svg": "image/svg+xml", "jpg": "image/jpeg"}


def data_uri(data: bytes, fmt: str) -> str:
    """A ``data:`` URI for image bytes (png/svg)."""
    return f"data:{_MIME[fmt]};base64,{base64.b64encode(data).decode('ascii')}"


def esc(v: Any) -> str:
    """``v`` as text escaped for HTML (quotes too)."""
    return html.escape(str(v), quote=True)


def fmt_value(v: Any, spec: str | None = None) -> str:
    """Format a table cell: numbers with thousands separators, NaN/None as a dash."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if spec:
            return format(v, spec)
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}"
    if isinstance(v, list | tuple):
        return ", ".join(map(str, v))
    return str(v)


WHOLE_NUMBER_WORDS = ("gpus", "quarters", "modules")
"""Columns whose name holds one of these words count whole things (GPUs, lead time in quarters, modules): shown
without decimals (``3,072``, ``2``), never ``0.00``."""


def column_format(key: str) -> str | None:
    """The format a column's unit asks for: ``,.0f`` for the whole-number columns (:data:`WHOLE_NUMBER_WORDS`),
    else None (:func:`fmt_value`'s default by magnitude)."""
    k = key.lower()
    return ",.0f" if any(w in k for w in WHOLE_NUMBER_WORDS) else None


def table_html(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]] | None = None,
               formats: Mapping[str, str] | None = None, row_class: Any = None, max_rows: int = 50) -> str:
    """An HTML table of ``rows`` (records). ``columns`` is ``[(key, header)]``; text columns
    (non-numeric) are left-aligned; ``row_class(row)`` may return ``"bad"``/``"warn"``. A column without a format
    in ``formats`` gets its unit's (:func:`column_format`)."""
    if not rows:
        return '<p class="muted">none</p>'
    columns = columns or [(k, k) for k in rows[0]]
    formats = {**{k: f for k, _ in columns if (f := column_format(k))}, **(formats or {})}
    text_cols = {k for k, _ in columns if not all(isinstance(r.get(k), int | float) or r.get(k) is None
                                                   for r in rows)}
    out = ["<table><thead><tr>"]
    out += [f'<th class="{"t" if k in text_cols else ""}">{esc(h)}</th>' for k, h in columns]
    out.append("</tr></thead><tbody>")
    for r in rows[:max_rows]:
        cls = row_class(r) if row_class else ""
        out.append(f'<tr class="{cls or ""}">')
        out += [f'<td class="{"t" if k in text_cols else ""}">{esc(fmt_value(r.get(k), formats.get(k)))}</td>'
                for k, _ in columns]
        out.append("</tr>")
    out.append("</tbody></table>")
    if len(rows) > max_rows:
        out.append(f'<p class="muted">{len(rows) - max_rows} more rows in the CSV files.</p>')
    return "".join(out)


def _kpis(items: Sequence[tuple[str, str]]) -> str:
    return '<div class="kpis">' + "".join(
        f'<div class="kpi"><div class="v">{esc(v)}</div><div class="l">{esc(label)}</div></div>'
        for label, v in items) + "</div>"


def _img(images: Mapping[str, tuple[bytes, str]], key: str, alt: str, chart: bool = False) -> str:
    """An embedded image (``chart``: shown at the section's full width, so its text stays legible)."""
    if key not in images:
        return ""
    data, fmt = images[key]
    cls = ' class="chart"' if chart else ""
    return f'<img{cls} alt="{esc(alt)}" src="{data_uri(data, fmt)}">'


def render_report(data: Mapping[str, Any], images: Mapping[str, tuple[bytes, str]]) -> str:
    """The report page.

    Parameters
    ----------
    data
        ``title``, ``subtitle``, ``kpis`` ([(label, value)]), ``stages`` (records: stage, status,
        seconds, gap, backend, note), ``placement_sites``, ``placement_metros``, ``failures_today`` (the scenario
        as given) and ``failures_with_plan_traffic`` (each ``{scenarios, survived, not_survived, worst,
        worst_by_link}``), ``upgrades`` (records), ``upgrade_cost_usd``, ``headline`` (and
        ``headline_ok``), ``survivability`` (failure_kind, states, survived, not_survivable, violated),
        ``link_survivability`` (the single-link check when the design did not target single links),
        ``before_after`` (records), ``failure_words``, ``design_note``, ``assumptions`` (list of
        str), ``provenance`` (mapping: scenario, scenario_version, software_version, created_utc,
        plan_file, plan_text), ``files`` (list of names), ``notes`` (list of str); optionally ``compared``
        (:func:`backbone.compare.report_section`: the "compared with" section).
    images
        ``{key: (bytes, "png" | "svg")}`` for ``after``, ``world``, ``pacific``, ``utilisation``,
        ``latency``, ``impact``, ``cost``.

    Returns
    -------
    str
        A self-contained HTML document.
    """
    head = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{esc(data.get('title', 'Backbone plan'))}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{esc(data.get('title', 'Backbone plan'))}</h1><p>{esc(data.get('subtitle', ''))}</p></header>",
        "<main>",
    ]
    kind = data.get("failure_words", "single-SRLG")
    sections = [_summary_section(data), _compared_section(data), _map_sections(images), _placement_section(data, images),
                _workloads_section(data, images), _corridors_section(data), _traffic_section(data, images), _failures_section(data, images, kind),
                _survivability_section(data, kind), _upgrades_section(data), _stages_section(data),
                _assumptions_section(data), _provenance_section(data)]
    p = data.get("provenance", {})
    foot = ["</main><footer>backbone ", esc(p.get("software_version", "")), "</footer></body></html>"]
    return "".join(head + [part for section in sections for part in section] + foot)


def _compared_section(data: Mapping[str, Any]) -> list[str]:
    """What changed since the baseline plan (``backbone plan --baseline DIR``): KPIs, failures, changeover."""
    c = data.get("compared")
    if not c:
        return []
    counts = ", ".join(f"{n} {k}" for k, n in (c.get("counts") or {}).items() if n) or "nothing changed"
    parts = [f"<section><h2>Compared with {esc(c['label'])}</h2>", f'<p class="muted">{esc(counts)}</p>']
    parts += [f'<p class="muted">{esc(n)}</p>' for n in c.get("notes") or []]
    if c.get("kpis"):
        parts += ["<h3>KPIs that changed, largest relative change first</h3>", table_html(c["kpis"], [
            ("kpi", "KPI"), ("before_text", "before"), ("after_text", "now"), ("change_text", "change"),
            ("verdict", ""), ("source", "from")])]
    if c.get("failures"):
        parts += ["<h3>Failures newly survived or broken</h3>", table_html(c["failures"], [
            ("scenario", "failure"), ("change", "change"), ("impact_before_gbps", "impact before (Gbps)"),
            ("impact_after_gbps", "impact now (Gbps)")])]
    if c.get("changeover"):
        parts += ["<h3>Changeover, in commit order</h3>", table_html(c["changeover"], [
            ("order", "#"), ("link", "link or route"), ("change", "change"), ("kind", "kind"),
            ("modules_before", "modules before"), ("modules_after", "modules now"), ("cost_usd", "cost (USD)"),
            ("lead_time_quarters", "lead time (quarters)"), ("lead_time_from", "lead time from"),
            ("commit", "commit (Q-N: N quarters before needed)")])]
    parts.append("</section>")
    return parts


def _summary_section(data: Mapping[str, Any]) -> list[str]:
    """Headline, KPIs and notes."""
    parts = [
        "<section><h2>Summary</h2>",
        (f'<p class="{"status-ok" if data.get("headline_ok") else "status-bad"}">{esc(data["headline"])}</p>'
         if data.get("headline") else ""),
        _kpis(data.get("kpis", [])),
    ]
    for note in data.get("notes", []):
        parts.append(f'<p class="status-bad">{esc(note)}</p>')
    parts.append("</section>")
    return parts


def _map_sections(images: Mapping[str, tuple[bytes, str]]) -> list[str]:
    """The backbone after the plan (when drawn) and today, with the placement's traffic."""
    parts: list[str] = []
    if "after" in images:
        parts += ["<section><h2>The backbone after the plan</h2>",
                  '<p class="muted">Links coloured by utilisation of the routed traffic on the planned backbone '
                  "(upgrades and new routes installed: <code>scenario_after/</code>); new routes have a green band, "
                  "upgraded links a dashed violet one, and sites that gained GPUs are labelled with them. The same "
                  "map is <code>map_after.png</code>, <code>map.svg</code> and, interactive, "
                  "<code>map.html</code>.</p>", _img(images, "after", "Map after the plan"), "</section>"]
    parts += ["<section><h2>The backbone today, with the placement's traffic</h2>",
              '<p class="muted">Links coloured by utilisation of the routed traffic; sites sized by GPUs; '
              "metro-to-site serving arcs from the placement (before the upgrades).</p>",
              _img(images, "world", "World map"), "<h3>Pacific-centred view</h3>",
              _img(images, "pacific", "Pacific-centred map"), "</section>"]
    return parts


def _placement_section(data: Mapping[str, Any], images: Mapping[str, tuple[bytes, str]]) -> list[str]:
    """Where the GPUs go: sites, serving metros and the cost breakdown."""
    return ["<section><h2>Where the GPUs go (considered → chosen)</h2>",
            table_html(data.get("placement_sites", []), [
                ("site", "site"), ("name", "name"), ("region", "region"), ("gpus_before", "GPUs before"),
                ("gpus_added", "GPUs added"), ("gpus_after", "GPUs after"), ("gpus_max", "GPUs max"),
                ("mw_after", "MW after"), ("power_max_mw", "MW max"), ("capex_usd", "capex USD"),
                ("opex_usd", "opex USD")], max_rows=60,
                row_class=lambda r: "warn" if (r.get("gpus_added") or 0) > 0 else ""),
            "<h3>Serving metros</h3>",
            table_html(data.get("placement_metros", []), [
                ("metro", "metro"), ("class", "class"), ("demand_gpus", "demand GPUs"),
                ("served_gpus", "served GPUs"), ("slo_rtt_ms", "SLO ms"), ("sites", "served from"),
                ("rtt_ms", "worst RTT ms")], formats={"rtt_ms": ".1f", "slo_rtt_ms": ".0f"}, max_rows=80),
            _img(images, "cost", "Placement cost breakdown", chart=True), "</section>"]


def _workloads_section(data: Mapping[str, Any], images: Mapping[str, tuple[bytes, str]]) -> list[str]:
    """Training jobs and datasets: the data-gravity map (when jobs were placed), where each job runs, the backbone
    Gbps it makes by class, new replicas, and the routed traffic in Tbps by class (absent without training jobs)."""
    w = data.get("workloads")
    if not w:
        return []
    tbps = ", ".join(f"{r['traffic_class']} {r['tbps']:,.2f}" for r in w["tbps_by_class"])
    parts = ["<section><h2>AI workloads: training jobs and their data</h2>",
             f'<p>Routed backbone traffic by class, Tbps: {esc(tbps)}.</p>',
             table_html(w["jobs"], [("job", "job"), ("site", "site"), ("gpus", "GPUs"), ("sites", "spans"),
                                    ("sync_gbps", "sync Gbps"), ("checkpoint_gbps", "checkpoint Gbps"),
                                    ("checkpoint_site", "checkpoints to"), ("dataset_gbps", "dataset Gbps"),
                                    ("datasets_remote", "read remotely"),
                                    ("datasets_replicated", "read from a new replica"), ("usd_per_gpu", "USD/GPU"),
                                    ("cheapest_allowed_site", "cheapest allowed site"),
                                    ("cheapest_usd_per_gpu", "its USD/GPU"), ("why", "why here")],
                        formats={"sync_gbps": ",.1f", "checkpoint_gbps": ",.1f", "dataset_gbps": ",.2f",
                                 "usd_per_gpu": ",.0f", "cheapest_usd_per_gpu": ",.0f"},
                        max_rows=60)]
    parts[2:2] = _gravity_map(images)  # the map before the job table
    if w.get("not_considered"):
        parts.append(f'<p class="warn">The scenario\'s {w["not_considered"]} training jobs were not placed or routed in '
                     "this plan: it set <code>place.scenario_jobs: false</code> (they are placed with inference by "
                     "default).</p>")
    if w["unplaced"]:
        parts.append(f'<p class="bad">Not placed: {esc(", ".join(w["unplaced"]))} (the placement names why).</p>')
    unmet = {str(j["job"]): str(j.get("checkpoint_policy_note") or "") for j in w["jobs"]
             if j.get("checkpoint_policy_met") is False}
    if unmet:
        parts.append('<p class="warn">Checkpoint replica policy not met (no checkpoint copy): '
                     f'{esc("; ".join(f"{job}: {why}" for job, why in unmet.items()))}.</p>')
    parts += ["<h3>Datasets and new replicas</h3>",
              table_html(w["datasets"], [("dataset", "dataset"), ("size_pb", "PB"), ("homes", "homes"),
                                         ("residency", "residency")], formats={"size_pb": ",.3f"}, max_rows=60),
              table_html(w["replicas"], [("dataset", "dataset"), ("site", "new replica at"), ("size_pb", "PB"),
                                         ("cost_usd", "storage USD"), ("growth_gbps", "growth Gbps")],
                         formats={"growth_gbps": ",.2f"}, max_rows=60) if w["replicas"] else "",
              "</section>"]
    return parts


def _gravity_map(images: Mapping[str, tuple[bytes, str]]) -> list[str]:
    """The data-gravity map with what its marks mean (when the plan drew it: training jobs were placed)."""
    if "gravity" not in images:
        return []
    return ['<p class="muted">The data-gravity map (<code>map_gravity.png</code>): sites running training jobs have a '
            "red ring and name the jobs' GPUs; dataset homes a dark green square (dashed: a replica the placement "
            "adds); arcs are the routed workload flows between sites, coloured by traffic class (training sync, "
            "checkpoints, dataset reads, replication of dataset growth), wide by Gbps, with an arrowhead at the "
            "receiving site.</p>", _img(images, "gravity", "Data-gravity map")]


def _corridors_section(data: Mapping[str, Any]) -> list[str]:
    """Backbone Tbps by corridor and class: each region pair's and each corridor SRLG's lit Tbps, Tbps each way,
    utilisation (as one pipe, and its busiest link), and each class's Tbps east / west (absent without rows)."""
    c = data.get("corridors")
    if not c:
        return []
    classes = [(cls, f"{cls} Tbps E / W") for cls in c["classes"]]
    return ["<section><h2>Backbone Tbps by corridor and class</h2>",
            '<p class="muted">The routed traffic with the plan\'s traffic, before the upgrades (the route stage; '
            "<code>corridors.csv</code>). Corridors: the region pair of each link's end sites (NA-EMEA is "
            "transatlantic, NA-APAC transpacific, intra-&lt;region&gt; within one region), then the scenario's corridor "
            "SRLGs (a link may be in several, or none). E / W: eastbound and westbound Tbps (the shorter way round the "
            "globe). Utilisation: the larger direction over the corridor's lit Tbps, as if its links shared the load "
            "evenly; the busiest link beside it says how far they do not. <code>unlisted</code>: link load no listed "
            "path accounts for (a routing whose path table lists only its largest demands).</p>",
            table_html(c["rows"], [("corridor", "corridor"), ("view", "view"), ("links", "links"),
                                   ("lit_tbps", "lit Tbps"), ("eastbound_tbps", "east Tbps"),
                                   ("westbound_tbps", "west Tbps"), ("utilisation", "utilisation"),
                                   ("max_link_utilisation", "busiest link"), *classes],
                       formats={"lit_tbps": ",.1f", "eastbound_tbps": ",.2f", "westbound_tbps": ",.2f",
                                "utilisation": ".1%", "max_link_utilisation": ".1%"}, max_rows=60,
                       row_class=lambda r: "bad" if (r.get("max_link_utilisation") or 0) > 1 else
                       ("warn" if (r.get("utilisation") or 0) > 0.8 else "")),
            "</section>"]


def _traffic_section(data: Mapping[str, Any], images: Mapping[str, tuple[bytes, str]]) -> list[str]:
    """Utilisation and latency charts and the busiest links."""
    return ["<section><h2>Traffic: utilisation and latency</h2>",
            _img(images, "utilisation", "Link utilisation histogram", chart=True),
            _img(images, "latency", "Latency CDF per region pair", chart=True),
            "<h3>Busiest links</h3>",
            table_html(data.get("busiest_links", []), [("link", "link"), ("cable_system", "cable system"),
                                                       ("capacity_gbps", "capacity Gbps"),
                                                       ("utilisation", "utilisation")],
                       formats={"utilisation": ".1%"}, max_rows=15,
                       row_class=lambda r: "bad" if (r.get("utilisation") or 0) > 1 else
                       ("warn" if (r.get("utilisation") or 0) > 0.8 else "")),
            "</section>"]


_IMPACT_FORMATS = {"mlu": ".1%", "gap": ".1%", "p99_latency_inflation_ms": ".2f", "worst_latency_inflation_ms": ".2f",
                   "impact_gbps": ",.1f", "unmet_gbps": ",.1f", "slo_violation_gbps": ",.1f", "lost_gbps": ",.1f",
                   "paused_gbps": ",.1f"}


def _failures_table(block: Mapping[str, Any]) -> list[str]:
    """One sweep's worst failures and the links they drive highest (``paused Gbps`` beside unmet when a class whose
    failure policy is to pause was not offered in some failure state)."""
    paused = [("paused_gbps", "paused Gbps")] if any((r.get("paused_gbps") or 0) > 0
                                                     for r in block.get("worst", [])[:25]) else []
    return [table_html(block.get("worst", []), [
                ("scenario", "scenario"), ("impact_gbps", "impact Gbps"), ("unmet_gbps", "unmet Gbps"), *paused,
                ("slo_violation_gbps", "SLO viol. Gbps"), ("lost_gbps", "lost Gbps"), ("mlu", "needs"),
                ("gap", "gap"), ("p99_latency_inflation_ms", "p99 inflation ms"), ("worst_latency_inflation_ms", "worst ms")],
                formats=_IMPACT_FORMATS, max_rows=25,
                row_class=lambda r: "bad" if not r.get("survived", True) else
                ("warn" if (r.get("mlu") or 0) > 0.8 else "")),
            "<h3>Links driven highest, and by which failure</h3>",
            table_html(block.get("worst_by_link", []), [("link", "link"), ("worst_utilisation", "worst"),
                                                        ("worst_scenario", "scenario"),
                                                        ("baseline_utilisation", "baseline")],
                       formats={"worst_utilisation": ".1%", "baseline_utilisation": ".1%"}, max_rows=15)]


def _count_line(block: Mapping[str, Any], kind: str, what: str) -> str:
    """The sweep's count, then what its figures do not cover (the sweep's notes), beside it."""
    notes = "".join(f'<p class="muted">{esc(n)}</p>' for n in block.get("notes") or [])
    return (f'<p><b>{esc(block["not_survived"])} of {esc(block["scenarios"])} {esc(kind)} failures not carried</b> '
            f"{esc(what)}.</p>{notes}")


def _failures_section(data: Mapping[str, Any], images: Mapping[str, tuple[bytes, str]], kind: str) -> list[str]:
    """What breaks today (the scenario as given: the same sweep as ``backbone failures``), then the same failures
    with the plan's GPU traffic on today's links (what the upgrades are designed against), each labelled."""
    today, planned = data.get("failures_today"), data.get("failures_with_plan_traffic")
    parts = [f"<section><h2>What breaks today: worst {esc(kind)} failures</h2>",
             '<p class="muted">Impact = traffic that cannot be carried at ≤ 100 % utilisation (beyond what the '
             "intact network leaves unmet) + latency-SLO violations + traffic lost with failed sites, each shown "
             "apart; “needs” is the utilisation the traffic would need (above 100 % it is overload) on the routing "
             "found, and “gap” how far that routing may be above the optimum over every path (column generation "
             "runs where it can change whether a failure is carried).</p>"]
    if today:
        parts += [_count_line(today, kind, "today: today's network and today's traffic, the same figures as "
                                           "'backbone failures' on the scenario"),
                  _img(images, "impact", "Failure impact today", chart=True), *_failures_table(today)]
    parts.append("</section>")
    if planned:
        parts += [f"<section><h2>With the plan's GPU traffic, before the upgrades: worst {esc(kind)} failures</h2>",
                  _count_line(planned, kind, "on today's links carrying today's traffic plus the placement's new "
                                             "GPU traffic (what the upgrades are designed against; after the "
                                             "upgrades see Survivability)"),
                  *([] if today else [_img(images, "impact", "Failure impact with the plan's traffic", chart=True)]),
                  *_failures_table(planned), "</section>"]
    return parts


def _survivability_section(data: Mapping[str, Any], kind: str) -> list[str]:
    """Failures carried after the plan, the excused and the violated ones, before and after per failure."""
    sv = data.get("survivability")
    parts: list[str] = []
    if sv:
        parts += [f"<section><h2>Survivability: {esc(sv['survived'])} of {esc(sv['states'])} {esc(kind)} "
                  "failures carried after the plan</h2>"]
        if sv.get("not_survivable"):
            parts += ["<h3>Not survivable by any candidate (excused, with the reason)</h3>",
                      table_html(sv["not_survivable"], [("scenario", "scenario"), ("reason", "reason")],
                                 max_rows=100)]
        if sv.get("violated"):
            parts += ["<h3>Still not carried (neither designed for nor excused)</h3>",
                      f'<p class="status-bad">{esc(", ".join(sv["violated"]))}</p>']
        lc = data.get("link_survivability")
        if lc:
            parts += [f"<h3>Single-link failures: {esc(lc['survived'])} of {esc(lc['states'])} carried after the "
                      "plan (one more sweep; the design did not target them)</h3>",
                      f"<p>{esc(data.get('link_survivability_text', ''))}</p>"]
        parts += ["<h3>Every failure before and after the plan</h3>",
                  '<p class="muted">Before: today\'s links with the plan\'s GPU traffic; after: the planned '
                  "backbone with the same traffic.</p>",
                  table_html(data.get("before_after", []), [
                      ("scenario", "scenario"), ("impact_gbps_before", "impact before upgrades Gbps"),
                      ("mlu_before", "needs before upgrades"), ("impact_gbps_after", "impact after Gbps"),
                      ("mlu_after", "needs after"), ("survived_after", "carried after")],
                      formats={"mlu_before": ".1%", "mlu_after": ".1%", "impact_gbps_before": ",.1f",
                               "impact_gbps_after": ",.1f"}, max_rows=400,
                      row_class=lambda r: "bad" if r.get("survived_after") is False else ""),
                  "</section>"]
    return parts


def _upgrades_section(data: Mapping[str, Any]) -> list[str]:
    """What to buy: upgrades and new routes with their total cost."""
    design_note = data.get("design_note")
    return [f"<section><h2>What to buy: upgrades and new routes (total "
            f"{esc(fmt_value(data.get('upgrade_cost_usd')))} USD)</h2>",
            f'<p class="muted">{esc(design_note)}</p>' if design_note else "",
            table_html(data.get("upgrades", []), [("link", "link / route"), ("action", "action"), ("kind", "kind"),
                                                  ("cable_system", "cable system"), ("modules", "modules"),
                                                  ("added_gbps", "added Gbps"), ("cost_usd", "cost USD"),
                                                  ("lead_time_quarters", "lead time (quarters)"),
                                                  ("lead_time_from", "lead time from"),
                                                  ("protects_text", "failures it protects")],
                       max_rows=80), "</section>"]


def _stages_section(data: Mapping[str, Any]) -> list[str]:
    """Solver status per stage."""
    return ["<section><h2>Solver status</h2>",
            table_html(data.get("stages", []), [("stage", "stage"), ("status", "status"), ("backend", "backend"),
                                                ("gap", "gap"), ("seconds", "seconds"), ("note", "note")],
                       formats={"gap": ".4%", "seconds": ".1f"}),
            "</section>"]


def _assumptions_section(data: Mapping[str, Any]) -> list[str]:
    """The assumptions, one list item each."""
    parts = ["<section><h2>Assumptions</h2><ul>"]
    parts += [f"<li>{esc(a)}</li>" for a in data.get("assumptions", [])]
    parts.append("</ul></section>")
    return parts


def _provenance_section(data: Mapping[str, Any]) -> list[str]:
    """Scenario, versions, the plan file and the files written."""
    p = data.get("provenance", {})
    return ["<section><h2>Provenance</h2>",
            table_html([{"item": k, "value": v} for k, v in p.items() if k != "plan_text"],
                       [("item", "item"), ("value", "value")]),
            (f"<h3>Plan file</h3><pre>{esc(p['plan_text'])}</pre>" if p.get("plan_text") else ""),
            "<h3>Files</h3><p class=\"muted\">" + esc(", ".join(data.get("files", []))) + "</p>",
            "</section>"]
