"""The roadmap's report: one self-contained HTML page (inline CSS, images as data URIs, no script).

:func:`render_roadmap_report` takes plain values -- figures, tables as records, images as bytes -- like
:func:`backbone.report.render_report` (this module never imports ``solver``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backbone.report import CSS, data_uri, esc, table_html

__all__ = ["NETWORK_BUILD_ACTIONS", "jobs_section", "render_roadmap_report"]

NETWORK_BUILD_ACTIONS: tuple[str, ...] = ("upgrade", "new route")
"""The ``action`` of a roadmap build that adds backbone capacity (its other builds: ``gpus`` blocks and dataset
``replica`` storage, which the placement buys)."""


def render_roadmap_report(data: Mapping[str, Any], images: Mapping[str, tuple[bytes, str]]) -> str:
    """The roadmap page.

    Parameters
    ----------
    data
        ``title``, ``subtitle``, ``headline`` (and ``headline_ok``), ``kpis`` ([(label, value)]),
        ``notes`` (list of str), ``periods`` (records per period), ``builds`` (backbone builds),
        ``gpus`` (GPU builds), ``jobs`` and ``replicas`` (:func:`jobs_section`), ``ledger`` (records: period, budget_usd, available_usd, committed_usd,
        left_usd), ``assumptions``, ``verification`` (a check report or None), ``provenance``, ``files``.
    images
        ``{key: (bytes, fmt)}``: ``timeline`` and ``map_<year>`` (drawn as small multiples).

    Returns
    -------
    str
        A self-contained HTML document.
    """
    p = data.get("provenance", {})
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{esc(data.get('title', 'Backbone roadmap'))}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{esc(data.get('title', 'Backbone roadmap'))}</h1><p>{esc(data.get('subtitle', ''))}</p>"
        "</header><main>",
        "<section><h2>Summary</h2>",
        f'<p class="{"status-ok" if data.get("headline_ok") else "status-bad"}">{esc(data.get("headline", ""))}</p>',
        '<div class="kpis">' + "".join(f'<div class="kpi"><div class="v">{esc(v)}</div><div class="l">{esc(k)}'
                                       "</div></div>" for k, v in data.get("kpis", [])) + "</div>",
    ]
    parts += [f'<p class="status-bad">{esc(n)}</p>' for n in data.get("notes", [])]
    parts.append("</section>")
    parts += ["<section><h2>Period by period</h2>",
              '<p class="muted">capex is charged in the period a build is committed; “online capex” is what comes '
              "into service in the period. Survivability: failures of the kind carried by the period's backbone "
              "with the period's demand (re-swept).</p>",
              table_html(data.get("periods", []), [
                  ("period", "period"), ("jobs_placed", "jobs placed"), ("jobs_unplaced", "jobs unplaced"),
                  ("network_capex_usd", "backbone capex USD"), ("gpu_capex_usd", "GPU capex USD"),
                  ("storage_capex_usd", "replica storage USD"),
                  ("capex_online_usd", "online capex USD"),
                  ("opex_usd", "opex USD"), ("gpus_added", "GPUs online"), ("served_share", "served"),
                  ("mlu", "max util."), ("unmet_gbps", "unmet Gbps"), ("builds_online", "builds online"),
                  ("survived", "failures carried"), ("states", "of"), ("violated", "violated"),
                  ("excused", "excused"), ("design_mode", "design"), ("design_status", "design status"),
                  ("design_gap", "gap"), ("design_bound", "bound"), ("budget_shortfall_usd", "budget short USD")],
                  formats={"served_share": ".1%", "mlu": ".1%", "design_gap": ".2%", "unmet_gbps": ",.1f"},
                  row_class=lambda r: "bad" if (r.get("budget_shortfall_usd") or 0) > 1 or r.get("violated")
                  or r.get("jobs_unplaced") else "",
                  max_rows=100),
              "</section>"]
    parts += jobs_section(data.get("jobs", []), data.get("replicas", []))
    if "timeline" in images:
        parts += ["<section><h2>Timeline: commitments and online dates</h2>",
                  '<p class="muted">Bars run from commitment to service (the lead time); the line is the build in '
                  "service. <code>timeline.png</code>; every build is in <code>roadmap_builds.csv</code>.</p>",
                  f'<img src="{data_uri(*images["timeline"])}" alt="Roadmap timeline">', "</section>"]
    maps = sorted(k for k in images if k.startswith("map_"))
    if maps:
        parts += ["<section><h2>The backbone at the end of each year</h2>",
                  '<p class="muted">Links coloured by utilisation of the period\'s routed traffic; routes built by the '
                  "roadmap highlighted. Each period's backbone is a scenario: <code>periods/&lt;period&gt;/scenario/"
                  "</code>.</p><div class=\"grid2\">"]
        parts += [f'<div><h3>{esc(k.removeprefix("map_"))}</h3><img src="{data_uri(*images[k])}" '
                  f'alt="{esc(k)}"></div>' for k in maps]
        parts += ["</div></section>"]
    parts += ["<section><h2>What to build, when</h2>",
              table_html(data.get("builds", []), [
                  ("id", "link / route"), ("action", "action"), ("kind", "kind"), ("site_a", "from"),
                  ("site_b", "to"), ("modules", "modules"), ("added_gbps", "added Gbps"), ("cost_usd", "cost USD"),
                  ("lead_time_quarters", "lead (quarters)"), ("available_from", "RFS"), ("committed", "commit"),
                  ("online", "online")], max_rows=300),
              "<h3>GPU blocks</h3>",
              table_html(data.get("gpus", []), [("site_a", "site"), ("gpus", "GPUs"), ("cost_usd", "capex USD"),
                                                ("committed", "commit"), ("online", "online")], max_rows=200),
              "</section>"]
    parts += ["<section><h2>Budget</h2>",
              table_html(data.get("ledger", []), [("period", "period"), ("budget_usd", "budget USD"),
                                                  ("available_usd", "available (with carry-over) USD"),
                                                  ("committed_usd", "committed USD"), ("left_usd", "left USD")],
                         row_class=lambda r: "bad" if (r.get("left_usd") or 0) < -1 else "", max_rows=100),
              "</section>"]
    ver = data.get("verification")
    if ver:
        parts += ["<section><h2>Independent check</h2>",
                  f'<p class="{"status-ok" if ver.get("ok") else "status-bad"}">'
                  f'{"every check passed" if ver.get("ok") else "violations found"}: {esc(", ".join(ver["checked"]))}'
                  "</p>", table_html(ver.get("violations", []), [("check", "check"), ("id", "what"),
                                                                 ("message", "message")], max_rows=100),
                  "</section>"]
    parts += ["<section><h2>Assumptions and method</h2><ul>"]
    parts += [f"<li>{esc(a)}</li>" for a in data.get("assumptions", [])]
    parts.append("</ul></section>")
    parts += ["<section><h2>Provenance</h2>",
              table_html([{"item": k, "value": v} for k, v in p.items() if k != "plan_text"],
                         [("item", "item"), ("value", "value")]),
              (f"<h3>Roadmap file</h3><pre>{esc(p['plan_text'])}</pre>" if p.get("plan_text") else ""),
              "<h3>Files</h3><p class=\"muted\">" + esc(", ".join(data.get("files", []))) + "</p>",
              "</section></main></body></html>"]
    return "".join(parts)


def jobs_section(jobs: list[Mapping[str, Any]], replicas: list[Mapping[str, Any]]) -> list[str]:
    """The "Training jobs by period" section: one row per (period, job) running in it, placed (its sites and GPUs)
    or unplaced (highlighted, with the placement's reason), and the dataset replicas built; nothing when the roadmap
    placed no job.

    Parameters
    ----------
    jobs
        Records ``period``, ``job``, ``status`` (``placed`` / ``unplaced``), ``sites``, ``gpus``, ``reason``.
    replicas
        Records ``period``, ``dataset``, ``site``, ``cost_usd``.
    """
    if not jobs and not replicas:
        return []
    unplaced = [j for j in jobs if j.get("status") == "unplaced"]
    lead = (f'<p class="status-bad">{len(unplaced)} of {len(jobs)} (period, job) placements left unplaced: '
            + esc("; ".join(f"{j['period']} {j['job']}: {j['reason']}" for j in unplaced[:5]))
            + ("…" if len(unplaced) > 5 else "") + "</p>") if unplaced else \
        f'<p class="status-ok">every training job running in a period is placed ({len(jobs)} (period, job) rows)</p>'
    return ["<section><h2>Training jobs by period</h2>", lead,
            '<p class="muted">Each period places the jobs running in it (their start and end quarters). A dataset '
            "replica built in a period is a home of its dataset from then on: its storage is charged once, and later "
            "periods read the dataset there. <code>roadmap_jobs.csv</code>.</p>",
            table_html(list(jobs), [("period", "period"), ("job", "job"), ("status", "status"), ("sites", "sites"),
                                    ("gpus", "GPUs"), ("reason", "why unplaced")],
                       row_class=lambda r: "bad" if r.get("status") == "unplaced" else "", max_rows=400),
            "<h3>Dataset replicas built</h3>",
            table_html(list(replicas), [("period", "period"), ("dataset", "dataset"), ("site", "site"),
                                        ("cost_usd", "storage capex USD")], max_rows=200),
            "</section>"]
