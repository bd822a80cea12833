"""``backbone plan``: the main job -- scenario in, planner's report out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    FailurePolicyOpt,
    ScenarioArg,
    SurviveOpt,
    emit_json,
    err_console,
    failure_policy_flag,
    handle_errors,
    load,
    out_console,
    run_with_progress,
)
from backbone.api.cli.options import options_command
from backbone.serialize import count_text, gbps_text
from backbone.solver.tasks.plan_options import PlanOptions

EXIT_VERIFY_FAILED = 5


PLAN_HELP = {
    "demand_growth": "Demand growth factor (overrides the plan file).",
    "skip_upgrades": "Do not plan upgrades.",
    "verify": "Run every independent check; exit 5 on violations.",
}
"""Help where the command line says more than the option's description."""


def register(app: typer.Typer) -> None:
    """Add ``plan`` to ``app``."""
    app.command("plan")(plan)


@options_command(PlanOptions, exclude=("plan_file", "plan_text"), flags={"demand_growth": ("--growth",)},
                 help=PLAN_HELP)
@handle_errors
def plan(
    scenario: ScenarioArg = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for report.html, maps and results.")] = Path("plan-out"),
    plan_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--plan", help="YAML plan file: objectives, SLOs, budgets, growth, failure kinds, solver limits; flags given "
                       "on the command line override it.")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Worker processes for the failure sweep.")] = None,  # noqa: UP045
    json_out: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout only.")] = False,
    survive: SurviveOpt = None,
    policy: FailurePolicyOpt = None,
    *,
    options: dict[str, Any],
) -> None:
    """Place GPUs, route the resulting traffic, sweep every single-SRLG failure, design the upgrades and
    new routes that survive them (every state, no cap), and write report.html, maps, machine-readable
    results and the planned backbone as a scenario (``OUT/scenario_after``). ``--verify`` re-sweeps
    the planned backbone independently; exit 5 when a state it does not excuse is not carried."""

    from backbone.solver.tasks.plan import STAGES, load_plan_file

    opts: dict[str, Any] = load_plan_file(plan_file, options) if plan_file else options
    if workers is not None:
        opts["failures"] = {**(opts.get("failures") or {}), "workers": workers}
    if survive is not None:
        opts["design"] = {**(opts.get("design") or {}), "survive": survive}
    if policy is not None:  # the failures stage's option; the design and its checks follow it
        opts["failures"] = {**(opts.get("failures") or {}), "failure_policy": failure_policy_flag(policy)}
    net = load(scenario)
    current = {"stage": ""}

    def tick(console: Any, message: str) -> None:
        stage = message.split(":", 1)[0]
        if stage in STAGES and stage != current["stage"]:
            if current["stage"]:
                console.print(f"  [green]✓[/] {current['stage']}", highlight=False)
            current["stage"] = stage

    result = run_with_progress("plan", net, opts, out, transient=False, on_message=tick)
    s = result.document()
    if json_out:
        emit_json({k: v for k, v in s.items() if k not in ("map", "map_after")} | {"files": result.files})
    else:
        _print(s, out)
    err_console.print(f"report: {out / 'report.html'}", highlight=False)
    if s.get("survivability_check"):
        _print_survivability_check(s["survivability_check"])
    ver = s.get("verification")
    if ver and any(v is False for v in ver.values()):
        err_console.print(f"[bold red]verification failed[/]: {ver}")
        raise typer.Exit(EXIT_VERIFY_FAILED)


def _print_survivability_check(check: dict[str, Any]) -> None:
    """One line on stderr for the independent survivability check, and each mismatch (claimed vs independent)."""
    states = check.get("states") or []
    excused = sum(1 for r in states if r.get("claimed") == "excused")
    bad = [r for r in states if not r.get("match", True)]
    err_console.print(f"survivability check (independent edge LP): {count_text(len(states), 'state')} re-measured, "
                      f"{count_text(excused, 'excused state')} checked, {count_text(len(bad), 'mismatch', 'mismatches')}", highlight=False)
    for v in check.get("violations", [])[:20]:
        err_console.print(f"  {v['id']}: {v['message']}", highlight=False, markup=False)


def _print(s: dict[str, Any], out: Path) -> None:
    from rich.table import Table

    from backbone.solver.plan.report_data import KIND_WORDS

    def money(v: Any) -> str:
        return "-" if v is None else f"{float(v) / 1e6:,.1f} M USD"

    t = Table(title=f"plan of {s['scenario']} ({s['status']})", show_header=False, title_justify="left")
    t.add_row("headline", s["headline"])
    t.add_row("GPUs added", f"{s['gpus_added']:,.0f} ({money(s['placement_cost_usd'])}, gap "
              f"{'-' if s['placement_gap'] is None else format(s['placement_gap'], '.4%')})")
    t.add_row("inference served", f"{100 * (s['served_share'] or 0):.1f} %")
    t.add_row("max link utilisation", f"{100 * (s['mlu'] or 0):.1f} % -> {100 * (s['mlu_after'] or 0):.1f} % after "
              "(with the plan's traffic)")
    t.add_row("unmet at <= 100 %", f"{gbps_text(s['unmet_gbps'])} -> {gbps_text(s['unmet_gbps_after'])} Gbps after")
    sv = s["survivability"]
    today = s.get("failures_today")
    if today:
        t.add_row("what breaks today", f"{today['not_survived']} of {today['scenarios']} {s['failure_kind']} failures not "
                  "carried (today's network and traffic, as 'backbone failures' on the scenario)")
    t.add_row(f"{KIND_WORDS.get(s['failure_kind'], s['failure_kind'])} failures",
              f"{s['failure_scenarios']} swept with the plan's GPU traffic; "
              f"{s['failures_with_unmet_demand']} not carried before the upgrades, "
              f"{s['failures_with_unmet_demand_after']} after; {len(sv['not_survivable'])} excused, "
              f"{len(sv['violated'])} still violated")
    if s.get("links_swept_as_own_group"):
        n = len(s["links_swept_as_own_group"])
        t.add_row("", f"{count_text(n, 'link')} in no SRLG (new routes) swept as {'their' if n != 1 else 'its'} "
                  f"own group: {', '.join(s['links_swept_as_own_group'][:5])}{'…' if n > 5 else ''}")
    lc = s.get("link_survivability")
    if lc:
        t.add_row("single-link failures", f"{lc['survived']} of {lc['states']} carried after (not designed for; "
                  f"{len(lc['not_carried'])} not carried)")
    t.add_row("design", f"{count_text(s['links_upgraded'], 'link')} upgraded, {count_text(s['routes_built'], 'new route')}, "
              f"{money(s['upgrade_cost_usd'])} (lower bound {money(s['upgrade_lower_bound_usd'])}, gap "
              f"{'-' if s['upgrade_gap'] is None else format(s['upgrade_gap'], '.1%')}); "
              f"{count_text(s['design_iterations'], 'iteration')}, {count_text(s['states_examined'] or 0, 'state')} examined, "
              f"{s['states_added'] or 0} added, {s['states_needed'] or 0} needed")
    if s.get("upgrade_restricted_optimum"):
        r = s["upgrade_restricted_optimum"]
        t.add_row("restricted optimum", f"{money(r['cost_usd'])} (its bound {money(r['bound_usd'])}, {r['status']}) "
                  f"among {r['restriction']}")
    if s.get("upgrade_bound"):
        b = s["upgrade_bound"]
        t.add_row("lower bound", f"bound LP {b['status']} in {b['seconds']:.1f} s: relaxation over every candidate route and "
                  f"path, the intact state and {max(0, b['states'] - 1)} failure states" + (f"; {b['note']}" if b['note'] else ""))
    if s.get("scenario_after"):
        t.add_row("planned backbone", str(out / s["scenario_after"]))
    t.add_row("time", ", ".join(f"{k} {v:.1f} s" for k, v in s["stage_seconds"].items())
              + f"; total {s['total_seconds']:.1f} s")
    out_console.print(t)
