"""``backbone failures``: sweep failure scenarios (calls the ``failures`` planning task)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    FailurePolicyOpt,
    ScenarioArg,
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
from backbone.solver.failures.options import FailureOptions

MAX_ROWS = 15


FAILURES_HELP = {
    "kind": "link | srlg (every SRLG; a link in no SRLG as its own group) | site | srlg-pairs | list (with --list "
            "FILE) | srlg,link (both single-SRLG and single-link states).",
    "engine": "local (process pool) | dask | serial.",
    "scheduler": "Dask scheduler address (tcp://host:8786); none starts a local cluster.",
    "derate": "Derate the elements to this fraction of capacity instead of cutting them.",
}
"""Help where the command line says more than the option's description."""


def register(app: typer.Typer) -> None:
    """Add ``failures`` to ``app``."""
    app.command("failures")(failures)


@options_command(FailureOptions, flags={"k_paths": ("-k",)}, help=FAILURES_HELP)
@handle_errors
def failures(
    scenario: ScenarioArg = None,
    scenarios_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--list", help="For --kind list: YAML/JSON list of {id, links, srlgs, sites, derate}.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print failures.json (every scenario, worst impact first) "
                                                          "on stdout only.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for failures.json and CSV tables.")] = None,  # noqa: UP045
    policy: FailurePolicyOpt = None,
    *,
    options: dict[str, Any],
) -> None:
    """What breaks when a cable is cut: re-route every failure scenario and report its impact --
    traffic that cannot be carried at <= 100 % utilisation (per class), latency-SLO violations and
    traffic lost with failed sites, each apart -- the utilisation the traffic needs and latency
    inflation, worst impact first (the same figures as ``te`` and ``plan``).

    The options are the ``failures`` task's (API job options use the same names with underscores)."""

    from backbone.solver.failures import load_scenario_list

    opts = options
    if policy is not None:
        opts["failure_policy"] = failure_policy_flag(policy)
    if scenarios_file is not None:
        opts["scenarios"] = load_scenario_list(scenarios_file)
    net = load(scenario)
    result = run_with_progress("failures", net, opts, out)
    s = result.document()
    if json_out:
        emit_json({"kind": "failures", **s, "files": result.files})  # the same object as failures.json
    else:
        _print(s)
    if out is not None:
        err_console.print(f"wrote {', '.join(result.files)} to {out}", highlight=False)


def _print(s: dict[str, Any]) -> None:
    from rich.table import Table

    b = s["baseline"]
    gapped = s.get("method") == "srcflow" or bool(s.get("path_lp_states"))  # MLUs with a gap: show it
    unknown = f", {s['unmet_unknown']} with unmet unknown" if s.get("unmet_unknown") else ""
    base_gap = f" (gap {100 * b['gap']:.2f} %)" if gapped and _known(b.get("gap")) else ""
    where = ""
    if s.get("ran_on"):
        from backbone.solver.failures.summary import SweepEngineInfo, ran_on_text

        where = f" on {ran_on_text(SweepEngineInfo.model_validate(s['ran_on']))}"
    out_console.print(f"[bold]{count_text(s['scenarios_run'], 'scenario')}[/] in {s['seconds']:.1f} s{where} "
                      f"({s['scenarios_per_second'] or 0:.2f}/s, method {s.get('method', 'path')}); baseline: MLU "
                      f"{100 * b['mlu']:.1f} %{base_gap}, unmet {gbps_text(b['unmet_gbps'])} Gbps; survived "
                      f"{s['survived']} of {s['scenarios_run']} ({s['overloaded']} overloaded{unknown})",
                      highlight=False)
    t = Table(title="worst scenarios (impact = unmet + SLO violations + lost, Gbps)", title_justify="left")
    paused = any((r.get("paused_gbps") or 0) > 0 for r in s["worst"][:MAX_ROWS])  # pausing classes, not offered
    for col in ("scenario", "impact Gbps", "unmet Gbps", *(("paused Gbps",) if paused else ()), "SLO viol. Gbps",
                "lost Gbps", "needs util.",
                *(("gap",) if gapped else ()), "p50 / p99 / worst inflation ms"):
        t.add_column(col, justify="left" if col == "scenario" else "right")
    for r in s["worst"][:MAX_ROWS]:
        style = "red" if not r["survived"] else ("yellow" if r["mlu"] > 0.8 else "")
        gap = (f"{100 * r['gap']:.2f} %" if _known(r["gap"]) else "-",) if gapped else ()
        t.add_row(r["scenario"], gbps_text(r["impact_gbps"]), gbps_text(r["unmet_gbps"]),
                  *((f"{r['paused_gbps']:,.1f}",) if paused else ()), f"{r['slo_violation_gbps']:,.1f}",
                  f"{r['lost_gbps']:,.1f}", f"{100 * r['mlu']:.1f} %", *gap,
                  f"{r['p50_latency_inflation_ms']:.2f} / {r['p99_latency_inflation_ms']:.2f} / "
                  f"{r['worst_latency_inflation_ms']:.2f}", style=style)
    out_console.print(t)
    for note in s.get("notes", []):
        out_console.print(f"note: {note}", highlight=False)
    w = Table(title="links driven highest (worst scenario per link)", title_justify="left")
    for col in ("link", "worst utilisation", "scenario", "baseline"):
        w.add_column(col, justify="right" if col != "link" and col != "scenario" else "left")
    for r in s["worst_by_link"][:MAX_ROWS]:
        base = r.get("baseline_utilisation")
        w.add_row(str(r["link"]), f"{100 * r['worst_utilisation']:.1f} %", str(r["worst_scenario"]),
                  "-" if base is None or math.isnan(base) else f"{100 * base:.1f} %")
    out_console.print(w)


def _known(v: Any) -> bool:
    return v is not None and not math.isnan(v)


