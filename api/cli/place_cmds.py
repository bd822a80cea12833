"""``backbone place``: where the GPUs go (calls the ``place`` planning task)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    EXIT_VERIFY,
    JsonOpt,
    ScenarioArg,
    emit_json,
    err_console,
    handle_errors,
    load,
    out_console,
    run_with_progress,
)
from backbone.api.cli.options import options_command
from backbone.serialize import count_text
from backbone.solver.placement.options import PlaceOptions

MAX_ROWS = 30
"""Rows shown per table in the terminal (the CSV files have everything)."""


PLACE_HELP = {
    "objective": "min-cost (serve all demand) or max-served (within --budget).",
    "verify": "Check the plan independently from its tables; exit 5 on violations.",
}
"""Help where the command line says more than the option's description."""


def register(app: typer.Typer) -> None:
    """Add ``place`` to ``app``."""
    app.command("place")(place)


@options_command(PlaceOptions, flags={"budget_usd": ("--budget",)}, help=PLACE_HELP)
@handle_errors
def place(
    scenario: ScenarioArg = None,
    options_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--options", help="YAML/JSON file of placement options (residency, training, classes, tokens_per_s, "
                          "...); flags given on the command line override it.")] = None,
    json_out: JsonOpt = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for place.json and place_*.csv.")] = None,  # noqa: UP045
    *,
    options: dict[str, Any],
) -> None:
    """Place inference and training GPUs: cheapest build (or most demand served) within latency SLOs,
    residency, power, block sizes and backbone capacity.

    When min-cost cannot serve all demand the best-effort plan (status "partial", unserved metros
    named) is still printed and written, and the exit code is 3. The options are the ``place`` task's (API job
    options and the --options file use the same names with underscores).
    """
    from backbone.solver.tasks.options_file import load_options_file

    opts = load_options_file(options_file, "place", options) if options_file is not None else options
    net = load(scenario)
    result = run_with_progress("place", net, opts, out)
    summary = result.to_dict()
    console = err_console if json_out else out_console
    _print_tables(console, summary)
    if out is not None:
        err_console.print(f"wrote {', '.join(result.files)} to {out}", highlight=False)
    verification = summary.get("verification")
    if json_out:
        emit_json(summary)
    if verification is not None:
        if verification["ok"]:
            err_console.print(f"[green]verified[/]: {', '.join(verification['checked'])}", highlight=False)
        else:
            err_console.print(f"[bold red]verification failed[/]: {count_text(verification['n_violations'], 'violation')}")
            for v in verification["violations"][:20]:
                err_console.print(f"  {v['message']}", markup=False, highlight=False)
            raise typer.Exit(EXIT_VERIFY)
    if summary["status"] == "partial":
        short = ", ".join(sorted({u["metro"] for u in summary.get("unserved_metros", [])})) or "none"
        err_console.print(f"[bold red]partial:[/] placement cannot serve all demand (unserved metros: {short}); "
                          "the best-effort plan is shown" + (" and written" if out is not None else ""),
                          highlight=False)
        for r in summary["infeasibility"]:
            err_console.print(f"  {r}", markup=False, highlight=False)
        raise typer.Exit(3)


def _print_tables(console: Any, s: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    gap, bound = s.get("gap"), s.get("lp_bound")
    extra = "" if gap is None else f", gap {100 * gap:.3f} %"
    extra += "" if bound is None else f", LP bound {bound:,.0f}"
    console.print(f"[bold]placement[/] {s['status']} ({s['backend']}, {s['solve_seconds']:.1f} s{extra})",
                  highlight=False)
    rows = sorted(s["sites"], key=lambda r: (-r["gpus_added"], -r["gpus_after"], r["id"]))
    cells = [(r["id"], f"{r['gpus_before']:,.0f}", f"+{r['gpus_added']:,.0f}", f"{r['gpus_after']:,.0f}",
              f"{r['gpus_max']:,.0f}", f"{r['mw_before']:,.1f}", f"{r['mw_after']:,.1f}", f"{r['power_max_mw']:,.0f}",
              f"{r['capex_usd'] / 1e6:,.1f}", f"{r['opex_usd'] / 1e6:,.1f}") for r in rows[:MAX_ROWS]]
    t = Table(title="sites: considered -> chosen", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
              collapse_padding=True)
    heads = ("site", "GPUs now", "added", "after", "max", "MW now", "after", "cap", "capex M$", "opex M$")
    for j, col in enumerate(heads):
        width = max([len(col)] + [len(c[j]) for c in cells])
        if j == 0:  # site names give way first on a narrow terminal
            t.add_column(col, overflow="ellipsis", no_wrap=True)
        else:
            t.add_column(col, justify="right", no_wrap=True, min_width=width)
    for r, c in zip(rows, cells, strict=False):
        style = "bold green" if r["gpus_added"] > 0 else ("" if r["gpus_after"] > 0 else "dim")
        t.add_row(*c, style=style)
    if len(rows) > MAX_ROWS:
        t.caption = f"{len(rows) - MAX_ROWS} more sites in place_sites.csv"
    console.print(t)
    m = Table(title="metros: serving sites (peak period)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("metro", "class", "demand GPUs", "served", "sites", "RTT ms"):
        m.add_column(col, justify="left" if col in ("metro", "class", "sites") else "right")
    by_unit: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for a in s["assignments"]:
        by_unit.setdefault((a["metro"], a["class"]), []).append(a)
    metros = sorted(s["metros"], key=lambda r: -r["demand_gpus"])
    for r in metros[:MAX_ROWS]:
        a = sorted(by_unit.get((r["metro"], r["class"]), []), key=lambda x: -x["gpus"])
        where = ", ".join(f"{x['site']} {100 * x['share']:.0f}%" for x in a[:3]) + (" ..." if len(a) > 3 else "")
        rtt = max((x["rtt_ms"] for x in a), default=None)
        style = "red" if r["unserved_gpus"] > 1e-6 else ""
        m.add_row(r["metro"], r["class"], f"{r['demand_gpus']:,.0f}", f"{r['served_gpus']:,.0f}", where or "-",
                  "-" if rtt is None else f"{rtt:.1f}", style=style)
    if len(metros) > MAX_ROWS:
        m.caption = f"{len(metros) - MAX_ROWS} more in place_metros.csv"
    console.print(m)
    _print_training(console, s)
    tot = s["totals"]
    console.print(f"GPUs {tot['gpus_before']:,.0f} -> {tot['gpus_after']:,.0f} (+{tot['gpus_added']:,.0f}), "
                  f"{tot['mw_built']:,.1f} MW built; cost {s['cost_usd']:,.0f} USD (capex {s['capex_usd']:,.0f}, "
                  f"opex {s['opex_usd']:,.0f}); served {100 * s['served_share']:.2f} %; "
                  f"max link utilisation {100 * tot['max_link_utilisation']:.1f} %", highlight=False)
    for n in s.get("notes", []):
        console.print(f"[yellow]note:[/] {n}", highlight=False)


def _print_training(console: Any, s: dict[str, Any]) -> None:
    """The training jobs: where each runs and the backbone Gbps it makes (data gravity), and new replicas."""
    from rich import box
    from rich.table import Table

    rows = s.get("training") or []
    if not rows:
        return
    t = Table(title="training jobs: sites and backbone traffic", title_justify="left", box=box.SIMPLE_HEAD,
              pad_edge=False)
    for col in ("job", "site", "GPUs", "sync Gbps", "checkpoint Gbps", "dataset Gbps", "read remotely",
                "USD/GPU", "cheapest allowed"):
        t.add_column(col, justify="left" if col in ("job", "site", "read remotely", "cheapest allowed") else "right")
    for r in rows[:MAX_ROWS]:
        cheap = r.get("cheapest_allowed_site") or ""
        cheap_text = f"{cheap} {r['cheapest_usd_per_gpu']:,.0f}" if cheap else "-"
        t.add_row(str(r["job"]), str(r["site"]), f"{r['gpus']:,.0f}", f"{r['sync_gbps']:,.1f}",
                  f"{r['checkpoint_gbps']:,.1f}", f"{r['dataset_gbps']:,.1f}", str(r["datasets_remote"] or "-"),
                  f"{r['usd_per_gpu']:,.0f}", cheap_text)
    if len(rows) > MAX_ROWS:
        t.caption = f"{len(rows) - MAX_ROWS} more in place_training.csv"
    console.print(t)
    unmet = {str(r["job"]): str(r.get("checkpoint_policy_note") or "") for r in rows
             if r.get("checkpoint_policy_met") is False}
    for job, why in unmet.items():
        console.print(f"[yellow]checkpoint policy not met:[/] {job}: {why} (no checkpoint copy)", highlight=False)
    by_class = s.get("workload_gbps_by_class") or {}
    reps = s.get("replicas") or []
    line = ", ".join(f"{k} {v:,.1f} Gbps" for k, v in sorted(by_class.items()) if v is not None) or "none"
    console.print(f"workload traffic: {line}; new dataset replicas: "
                  + (", ".join(f"{r['dataset']} at {r['site']} ({r['size_pb']:,.1f} PB)" for r in reps) or "none"),
                  highlight=False)
