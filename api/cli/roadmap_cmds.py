"""``backbone roadmap``: a multi-period build plan -- what to commit each period, and when it comes online."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    EXIT_VERIFY,
    ScenarioArg,
    SurviveOpt,
    emit_json,
    err_console,
    handle_errors,
    load,
    out_console,
    run_with_progress,
)
from backbone.api.cli.options import options_command
from backbone.serialize import count_text
from backbone.solver.roadmap.options import RoadmapOptions

EXIT_BUDGET_INFEASIBLE = 3
"""Exit code when a budget left some period short (the roadmap is written in full, each shortfall explained)."""


def register(app: typer.Typer) -> None:
    """Add ``roadmap`` to ``app``."""
    app.command("roadmap")(roadmap)


@options_command(RoadmapOptions, exclude=("plan_file", "plan_text"))
@handle_errors
def roadmap(
    scenario: ScenarioArg = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for roadmap.json, CSVs, periods/, charts, report.html.")]
    = Path("roadmap-out"),
    plan_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--plan", help="YAML roadmap file: growth, lead times, budgets, power steps, stage options; flags given on "
                       "the command line override it.")] = None,
    budget: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--budget", help="Capex budget per period in USD (overrides the roadmap file's budget_usd_per_period).")]
    = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print roadmap.json on stdout only.")] = False,
    survive: SurviveOpt = None,
    *,
    options: dict[str, Any],
) -> None:
    """Plan builds period by period (rolling horizon): grow demand, place GPUs, design upgrades and new
    routes so each period's backbone survives every single-SRLG failure, within lead times,
    ready-for-service dates and budgets. Writes OUT/roadmap.json, CSVs, OUT/periods/<period>/scenario/
    (run any command on them), timeline.png, maps per year and report.html. Exit 3 when a budget left a
    period short (explained per period), 5 when --verify finds a violation."""
    from backbone.solver.tasks.roadmap import load_roadmap_file

    if budget is not None:
        options["budget_usd_per_period"] = budget
    opts: dict[str, Any] = load_roadmap_file(plan_file, options) if plan_file else options
    if survive is not None:
        opts["design"] = {**(opts.get("design") or {}), "survive": survive}
    net = load(scenario)
    result = run_with_progress("roadmap", net, opts, out, transient=not json_out)
    s = result.document()
    if json_out:
        emit_json({"kind": "roadmap", **s, "files": result.files})
    else:
        _print(s)
    err_console.print(f"report: {out / 'report.html'}", highlight=False)
    ver = s.get("verification")
    if ver is not None and not ver["ok"]:
        err_console.print(f"[bold red]verification failed[/]: {count_text(len(ver['violations']), 'violation')}")
        for v in ver["violations"][:10]:
            err_console.print(f"  {v['check']} {v['id']}: {v['message']}", highlight=False, markup=False)
        raise typer.Exit(EXIT_VERIFY)
    if s["status"] == "budget_limited":
        for x in s["budget_shortfalls"]:
            err_console.print(f"budget short in {x['period']}: {x['reason']}", highlight=False, markup=False)
        raise typer.Exit(EXIT_BUDGET_INFEASIBLE)


def _design_gap(design: dict[str, Any]) -> str:
    """A period design's gap, ``restricted`` beside it where its bound is the MIP's restricted one."""
    from backbone.solver.roadmap.rolling import design_bound

    _, gap, restriction = design_bound(design)
    return "-" if gap is None else f"{100 * gap:.2f} %" + (" (restricted)" if restriction else "")


def _print(s: dict[str, Any]) -> None:
    from rich.table import Table

    def money(v: Any) -> str:
        return "-" if v is None else f"{float(v) / 1e6:,.1f} M"

    t = Table(title=f"roadmap of {s['scenario']} {s['start']} -> {s['end']} ({s['status']}); backbone capex "
                    f"{money(s.get('network_capex_usd'))} USD (gap "
                    + ("-" if s["gap"] is None else f"{100 * s['gap']:.2f} %")
                    + f"), GPU capex {money(s.get('gpu_capex_usd'))} USD", title_justify="left")
    jobs = any(p.get("jobs_placed") or p.get("jobs_unplaced") for p in s["periods"])
    for col in ("period", *(("jobs placed", "jobs unplaced") if jobs else ()), "backbone capex", "GPU capex", "opex",
                "GPUs online", "served", "max util.", "builds online", "carried", "violated", "excused", "design",
                "design gap", "budget short"):
        t.add_column(col, justify="left" if col in ("period", "design") else "right")
    for p in s["periods"]:
        sv = p["survivability"]
        unplaced = len(p.get("jobs_unplaced", []))
        job_cells = (str(len(p.get("jobs_placed", []))), f"[bold red]{unplaced}[/]" if unplaced else "0") if jobs else ()
        t.add_row(p["period"], *job_cells, money(p.get("network_capex_usd")), money(p.get("gpu_capex_usd")), money(p["opex_usd"]),
                  f"{sum(p['gpus_added_by_site'].values()):,.0f}", f"{100 * (p['served_share'] or 0):.1f} %",
                  f"{100 * (p['mlu'] or 0):.0f} %", str(len(p["builds"])), f"{sv['survived']}/{sv['states']}",
                  (f"[bold red]{len(sv['violated'])}[/]" if sv["violated"] else "0"), str(len(sv["not_survivable"])),
                  p["design"]["mode"] + ("" if p["design"]["mode"].endswith(str(p["design"]["status"]).replace("_", " "))
                                         else f" ({p['design']['status']})"), _design_gap(p["design"]),
                  money(p["budget_shortfall_usd"]) if p["budget_shortfall_usd"] > 1 else "")
    out_console.print(t)
    from backbone.solver.roadmap.rolling import design_bound

    for p in s["periods"]:
        _, gap, restriction = design_bound(p["design"])
        if restriction and gap is not None:
            err_console.print(f"{p['period']}: design gap {100 * gap:.2f} % {restriction}", highlight=False,
                              markup=False)
    for n in s["notes"]:
        err_console.print(n, highlight=False, markup=False)
    for j in s.get("jobs_unplaced", []):
        err_console.print(f"{j['period']}: training job {j['job']} ({j['gpus']:,.0f} GPUs) not placed: {j['reason']}",
                          highlight=False, markup=False)
