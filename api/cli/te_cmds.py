"""``backbone te``: traffic engineering (calls the ``te`` planning task).

Exit codes: 0 done (even with unmet demand -- it is reported, not an error), 2 bad input,
3 infeasible, 4 solver error, 5 ``--verify`` found violations in the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
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
from backbone.serialize import count_text, gbps_text
from backbone.solver.te.options import TEOptions

EXIT_VERIFY_FAILED = 5
"""``--verify`` found the result violates a constraint (a bug worth reporting)."""

MAX_ROWS = 15
"""Rows shown per table in the terminal (the CSV files have everything)."""


TE_HELP = {
    "objective": "min-mlu | max-throughput | max-min-fair | min-latency, or ecmp (simulate shortest-path ECMP "
                 "routing: what the network does without TE).",
    "verify": "Check the result independently; exit 5 on violations.",
}
"""Help where the command line says more than the option's description."""


def register(app: typer.Typer) -> None:
    """Add ``te`` to ``app``."""
    app.command("te")(te)


@options_command(TEOptions, flags={"k_paths": ("-k",)}, help=TE_HELP)
@handle_errors
def te(
    scenario: ScenarioArg = None,
    json_out: JsonOpt = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for te.json and te_*.csv/.parquet.")] = None,  # noqa: UP045
    *,
    options: dict[str, Any],
) -> None:
    """Route the scenario's demands: min-MLU, max-throughput by class priority, max-min fair, or
    min-latency under a utilisation ceiling; latency SLOs are hard; unmet demand is reported with
    its reason. ``--objective ecmp`` shows today's shortest-path ECMP routing instead.

    Every option below is a field of the ``te`` task's options model (the API's job options use the same
    names with underscores); ``-k`` is short for ``--k-paths``."""
    opts = options
    net = load(scenario)
    result = run_with_progress("te", net, opts, out)
    summary = result.to_dict()
    if json_out:
        emit_json(summary)
    else:
        _print_tables(out_console, summary, out)
    if out is not None:
        err_console.print(f"wrote {', '.join(result.files)} to {out}", highlight=False)
    verification = summary.get("verification")
    if verification is not None:
        if verification["ok"]:
            err_console.print(f"[green]verified[/]: {', '.join(verification['checked'])}", highlight=False)
        else:
            err_console.print(f"[bold red]verification failed[/]: {count_text(len(verification['violations']), 'violation')}")
            for v in verification["violations"][:20]:
                err_console.print(f"  {v['check']} {v['table']}:{v['id']}: {v['message']}", markup=False,
                                  highlight=False)
            raise typer.Exit(EXIT_VERIFY_FAILED)


def _fmt(v: Any, spec: str = ",.2f") -> str:
    return "-" if v is None else format(v, spec)


def _print_tables(console: Any, s: dict[str, Any], out: Path | None) -> None:
    console.print(_summary_table(s))
    for note in s.get("notes", []):
        console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    if s.get("by_class"):
        console.print(_class_table(s["by_class"]))
    console.print(_busiest_table(s))
    if s.get("corridors"):
        console.print(_corridor_table(s["corridors"]))
    if s.get("unmet_demands"):
        console.print(_unmet_table(s))


def _summary_table(s: dict[str, Any]) -> Any:
    """The headline table: status, objective, utilisation, carried, unmet, impact, latency, bounds, time."""
    from rich.table import Table

    t = Table(title=f"te {s['objective']} ({s['formulation']}, {s['backend']})", show_header=False,
              title_justify="left")
    fell_back = any(st.get("note") for st in s.get("stages", []))
    nothing = not s.get("demand_gbps", 0.0) > 0
    t.add_row("status", s["status"] + (" (interior point failed; re-solved with simplex, see notes)" if fell_back
                                       else "") + (" [bold yellow](no demand: nothing to route)[/]" if nothing else ""))
    t.add_row("objective value", _fmt(s.get("objective_value"), ",.6g"))
    mlu_style = "bold red" if s.get("overloaded") else ""
    t.add_row("max link utilisation", f"[{mlu_style}]{100 * s['mlu']:.2f} %[/]" if mlu_style else
              f"{100 * s['mlu']:.2f} %")
    t.add_row("carried / demand", f"{s['carried_gbps']:,.1f} / {s['demand_gbps']:,.1f} Gbps")
    t.add_row("unmet", f"{s['unmet_gbps']:,.1f} Gbps" + "".join(
        f"; {k}: {v['gbps']:,.1f} Gbps ({v['demands']} demands)" for k, v in s.get("unmet_by_reason", {}).items()))
    imp = s.get("impact")
    if imp:
        t.add_row("impact (at <= 100 %)", _impact_text(imp),
                  style="bold red" if imp.get("overloaded") or (imp["unmet_gbps"] or 0) > 0 else "")
    t.add_row("weighted / worst latency", f"{_fmt(s.get('weighted_latency_ms'))} / {_fmt(s.get('worst_latency_ms'))}"
              " ms one-way")
    _add_solve_rows(t, s)
    return t


def _impact_text(imp: dict[str, Any]) -> str:
    """The impact row: the utilisation needed and the traffic that cannot be carried at <= 100 %."""
    by = ", ".join(f"{k} {v:,.1f}" for k, v in imp["unmet_by_class"].items() if v > 0)
    at_most = (f"at most (shortfall solve {imp.get('status')}) "
               if imp.get("overloaded") and imp.get("status") != "optimal" else "")
    if imp.get("unmet_known", True):
        told = f"{at_most}{gbps_text(imp['unmet_gbps'])} Gbps cannot be carried" + (f" ({by})" if by else "")
    else:
        told = "traffic that cannot be carried: unknown (not measured at this scale)"
    return f"needs {100 * imp['mlu']:.1f} % utilisation; {told}"


def _add_solve_rows(t: Any, s: dict[str, Any]) -> None:
    """Rows of how it was solved: method, bounds and gaps, times and the LP's size."""
    if s.get("method"):
        t.add_row("method", s["method"])
    if s.get("lower_bound") is not None:
        t.add_row("lower bound / gap", f"{s['lower_bound']:.6g} / {_fmt(s.get('gap'), '.3%')}")
    if s.get("edge_bound") is not None:
        t.add_row("edge bound / gap", f"{s['edge_bound']:.6g} / {_fmt(s.get('gap_to_edge_bound'), '.3%')}")
    t.add_row("time", f"paths {s.get('paths_seconds', 0):.2f} s, build {s.get('build_seconds', 0):.2f} s, "
              f"solve {s.get('solve_seconds', 0):.2f} s, total {s.get('total_seconds', 0):.2f} s")
    lp = s.get("lp") or {}
    if lp:
        t.add_row("LP", f"{lp['rows']:,} rows, {lp['cols']:,} cols, {lp['nonzeros']:,} nonzeros, "
                  + count_text(len(s.get('stages', [])), 'stage'))


def _class_table(by_class: dict[str, Any]) -> Any:
    """Demand, carried and unmet traffic per traffic class."""
    from rich.table import Table

    c = Table(title="by traffic class", title_justify="left")
    for col in ("class", "demand Gbps", "carried Gbps", "unmet Gbps", "carried %"):
        c.add_column(col, justify="left" if col == "class" else "right")
    for cls, v in by_class.items():
        share = v["carried_gbps"] / v["demand_gbps"] if v["demand_gbps"] > 0 else 1.0
        c.add_row(cls, f"{v['demand_gbps']:,.1f}", f"{v['carried_gbps']:,.1f}", f"{v['unmet_gbps']:,.1f}",
                  f"{100 * share:.1f}", style="red" if v["unmet_gbps"] > 1e-6 else "")
    return c


def _busiest_table(s: dict[str, Any]) -> Any:
    """The busiest links by utilisation (at most ``MAX_ROWS``)."""
    import pandas as pd
    from rich.table import Table

    util = pd.Series(s["map"]["link_values"]["utilisation"]).sort_values(ascending=False)
    u = Table(title=f"busiest links (of {len(util)})", title_justify="left")
    u.add_column("link")
    u.add_column("utilisation", justify="right")
    for link, v in util.head(MAX_ROWS).items():
        u.add_row(str(link), f"{100 * v:.1f} %", style="bold red" if v > 1 + 1e-9 else ("yellow" if v > 0.8 else ""))
    return u


def _corridor_table(rows: list[dict[str, Any]]) -> Any:
    """Routed Tbps per region-pair corridor: each direction, lit capacity, utilisation (the corridor as one pipe, and
    its busiest link) and the Tbps of each class (both directions); the corridor SRLGs are in corridors.csv."""
    from rich.table import Table

    region = [r for r in rows if r["view"] == "region"]
    by_class: dict[str, list[str]] = {}
    for r in region:
        if r["traffic_class"] != "all":
            by_class.setdefault(r["corridor"], []).append(f"{r['traffic_class']} {r['gbps'] / 1000:,.1f}")
    t = Table(title="routed Tbps by corridor (region pairs; corridor SRLGs in corridors.csv)", title_justify="left")
    for col in ("corridor", "east Tbps", "west Tbps", "lit Tbps", "utilisation", "busiest link", "by class, Tbps"):
        t.add_column(col, justify="left" if col in ("corridor", "by class, Tbps") else "right")
    for r in (r for r in region if r["traffic_class"] == "all"):
        t.add_row(r["corridor"], f"{r['eastbound_gbps'] / 1000:,.1f}", f"{r['westbound_gbps'] / 1000:,.1f}",
                  f"{r['capacity_gbps'] / 1000:,.1f}", f"{100 * r['utilisation']:.1f} %",
                  f"{100 * r['max_link_utilisation']:.1f} %", ", ".join(by_class.get(r["corridor"], [])) or "-",
                  style="bold red" if r["max_link_utilisation"] > 1 + 1e-9 else "")
    return t


def _unmet_table(s: dict[str, Any]) -> Any:
    """The demands left unmet, with their reason (at most ``MAX_ROWS``)."""
    from rich.table import Table

    d = Table(title=f"unmet demand ({s['unmet_demands_total']} demands)", title_justify="left")
    for col in ("demand", "src -> dst", "class", "demand Gbps", "unmet Gbps", "reason"):
        d.add_column(col, justify="right" if "Gbps" in col else "left")
    for r in s["unmet_demands"][:MAX_ROWS]:
        d.add_row(r["id"], f"{r['src']} -> {r['dst']}", r["traffic_class"], f"{r['demand_gbps']:,.1f}",
                  f"{r['unmet_gbps']:,.1f}", r["reason"], style="red")
    if s["unmet_demands_total"] > MAX_ROWS:
        d.caption = "all of them in te_demands.csv (--out DIR)"
    return d
