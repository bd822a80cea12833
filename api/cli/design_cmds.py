"""``backbone design``: SNDlib network design, or the backbone's capacity upgrades."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    EXIT_VERIFY,
    FailurePolicyOpt,
    JsonOpt,
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
from backbone.serialize import count_text
from backbone.solver.design.options import DesignOptions

DEFAULT_SNDLIB_MODEL = "U-U-M-N-C-A-N-N"
"""Model used for an SNDlib file when neither --model nor --survive is given."""


DESIGN_HELP = {
    "model": f"SNDlib model code, e.g. U-U-M-N-C-A-N-N (default for SNDlib files: {DEFAULT_SNDLIB_MODEL}).",
    "verify": "Check the design with the independent checker; exit 5 on violations.",
}
"""Help where the command line says more than the option's description."""


def register(app: typer.Typer) -> None:
    """Add ``design`` to ``app``."""
    app.command("design")(design)


@options_command(DesignOptions, help=DESIGN_HELP)
@handle_errors
def design(
    scenario: ScenarioArg = None,
    model_file: Annotated[Optional[Path], typer.Option("--model-file", help="SNDlib model file instead of a code.")  # noqa: UP045
                          ] = None,
    solution_out: Annotated[Optional[Path], typer.Option("--solution-out", help="Write the design in SNDlib "  # noqa: UP045
                                                         "native solution format.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for result files.")] = None,  # noqa: UP045
    json_out: JsonOpt = False,
    policy: FailurePolicyOpt = None,
    *,
    options: dict[str, Any],
) -> None:
    """Design capacity at minimum cost.

    On an SNDlib network file: solve an SNDlib model (module counts per link; cost, lower bound
    and gap). On any other scenario: which links to upgrade and which candidate routes to build, in whole
    modules, so all demand fits within the utilisation ceiling. By default (--survive none) the intact state,
    every demand over any path within its latency SLO: the lower bound holds for every candidate route and
    every admissible path (column generation, then whole modules and routes by metric-inequality cuts; on the
    shipped scenario: optimal, cost 2.72 M USD, bound 2.72 M USD, gap 0 %, about 8 s at load 7 on 2 cores).
    With --survive link, srlg or srlg,link: every such failure too (the plan's design). The options are the
    design task's (API job options use the same names with underscores).
    """
    from backbone.errors import ValidationError
    from backbone.io import detect_format

    if policy is not None:
        options["failure_policy"] = failure_policy_flag(policy)
    net = load(scenario)
    is_sndlib = scenario is not None and detect_format(scenario) == "sndlib"
    if is_sndlib and options.get("model") is None and model_file is None and "survive" not in options:
        options["model"] = DEFAULT_SNDLIB_MODEL
        err_console.print(f"[dim]SNDlib network: solving model {DEFAULT_SNDLIB_MODEL} (use --model to choose)[/]")
    sndlib_mode = options.get("model") is not None or model_file is not None
    if solution_out is not None and not sndlib_mode:
        raise ValidationError("--solution-out needs an SNDlib model (--model or --model-file)")
    if model_file is not None:  # read here, on the CLI user's machine; the task takes the code
        from backbone.io.sndlib import parse_model_file

        options["model"] = parse_model_file(model_file).code
    out_dir = out
    tmp = None
    if out_dir is None and solution_out is not None:
        tmp = Path(tempfile.mkdtemp(prefix="backbone-design-"))
        out_dir = tmp
    try:
        result = run_with_progress("design", net, options, out_dir)
        if solution_out is not None:
            if "design.sol.txt" not in result.files or out_dir is None:
                raise ValidationError("no design was found in the time limit; no solution file written")
            shutil.copyfile(out_dir / "design.sol.txt", solution_out)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    summary = result.to_dict()
    if json_out:
        emit_json(summary)
    else:
        _print(summary)
    verification = summary.get("verification")
    if verification is not None and not verification.get("ok", False):
        raise typer.Exit(EXIT_VERIFY)


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.2f}"
    return str(x)


def _money(usd: Any) -> str:
    if usd is None:
        return "-"
    return f"{float(usd) / 1e6:,.2f} M USD" if abs(float(usd)) >= 1e5 else f"{float(usd):,.0f} USD"


def _intact_headline(s: dict[str, Any]) -> str:
    """The intact design's line: cost, the true lower bound and gap with how it was proven, the restricted optimum
    with its restriction (``survive`` none)."""
    b, r = s.get("bound") or {}, s.get("restricted_optimum") or {}
    gap = "-" if s["gap"] is None else f"{100 * s['gap']:.1f} %"
    return (f"design of the intact state (ceiling {s['ceiling']:.0%}, every demand over any path within its SLO): "
            f"{s['status']}, cost {_money(s['cost_usd'])}; lower bound {_money(s['lower_bound_usd'])}, gap {gap} "
            f"(LP over every candidate route and admissible path {_money(b.get('lp_bound_usd'))}, {b.get('status')}; "
            f"whole modules and routes {_money(b.get('integer_bound_usd'))}, {b.get('cut_status', 'skipped')}; "
            f"{b.get('seconds', 0):.1f} s); restricted optimum {_money(r.get('cost_usd'))} (its bound "
            f"{_money(r.get('bound_usd'))}, {r.get('status')}) among {r.get('restriction')}" + _unmet_text(s))


def _unmet_text(s: dict[str, Any]) -> str:
    """What the intact design leaves unmet, when it leaves any (capacity at its maximum everywhere)."""
    unmet = float((s.get("iterations") or [{}])[-1].get("unmet_gbps") or 0.0)
    return (f"; leaves {unmet:,.1f} Gbps of routable demand unmet (more than every link at its max_capacity_gbps "
            "and every candidate at its max_modules carries)" if unmet > 0 else "")


def _print(s: dict[str, Any]) -> None:
    from rich.table import Table

    if s["mode"] == "sndlib":
        head = (f"[bold]{s['network']}[/] model {s['model']}: {s['status']}, cost {_fmt(s['cost'])}, "
                f"lower bound {_fmt(s['lower_bound'])}, gap {_fmt(100 * s['gap']) + ' %' if s['gap'] is not None else '-'}"
                f" ({s['solve_seconds']:.1f} s)")
        out_console.print(head)
        t = Table("link", "modules (capacity x count)", "capacity")
        for link in s["links"]:
            if link["modules"]:
                mods = ", ".join(f"{m['capacity']:g} x {m['count']:g}" for m in link["modules"])
                t.add_row(link["id"], mods, f"{link['capacity']:g}")
        out_console.print(t)
    elif s["mode"] == "survivable":
        from backbone.solver.plan.report_data import bound_text

        sv = s["survivability"]
        if sv["failure_kind"] == "none":
            out_console.print(_intact_headline(s))
        else:
            out_console.print(f"survivable design ({sv['failure_kind']}, ceiling {s['ceiling']:.0%} intact / "
                              f"{s['failure_ceiling']:.0%} failed): {s['status']}, {bound_text(s)}; survives "
                              f"{sv['survived']} of {sv['states']} ({len(sv['not_survivable'])} excused, "
                              f"{len(sv['violated'])} violated); {count_text(len(s['iterations']), 'iteration')}, "
                              f"{count_text(s['states_examined'], 'state')} examined, {s['states_added']} added, "
                              f"{s['states_needed']} needed")
        t = Table("link / route", "action", "modules", "added Gbps", "cost USD", "lead time q", "protects")
        for u in s["upgrades"]:
            prot = [x for x in u["protects"] if x != "intact"]
            t.add_row(str(u["link"]), u["action"], str(u["modules"]), f"{u['added_gbps']:,.0f}",
                      f"{u['cost_usd']:,.0f}", "-" if u["lead_time_quarters"] is None else f"{u['lead_time_quarters']:,.0f}",
                      ("intact" if not prot and "intact" in u["protects"] else
                       count_text(len(prot), "failure") + (" + intact" if "intact" in u["protects"] else "")))
        out_console.print(t)
        for r in sv["not_survivable"][:20]:
            err_console.print(f"[yellow]not survivable[/] {r['scenario']}: {r['reason']}", highlight=False)
    else:
        gap = f"{100 * s['gap']:.2f} %" if s["gap"] is not None else "-"
        out_console.print(f"upgrades ({s['survivability']}, ceiling {s['ceiling']:.0%}): {s['status']}, cost "
                          f"{_fmt(s['cost_usd'])} USD, lower bound {_fmt(s['lower_bound_usd'])}, gap {gap}")
        t = Table("link", "modules", "added Gbps", "cost USD", "new")
        for u in s["upgrades"]:
            t.add_row(str(u["link"]), str(u["modules"]), f"{u['added_gbps']:,.0f}", f"{u['cost_usd']:,.0f}",
                      "yes" if u["new"] else "")
        out_console.print(t)
    for note in s.get("notes", []):
        err_console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    if "verification" in s:
        v = s["verification"]
        colour = "green" if v.get("ok") else "red"
        err_console.print(f"[{colour}]verification: {'ok' if v.get('ok') else 'FAILED'}[/] "
                          + (f"(recomputed cost {_fmt(v.get('total_cost'))})" if "total_cost" in v else
                             "; ".join(v.get("checked", []))))
    for f in s.get("files", []):
        err_console.print(f"[dim]wrote {f}[/]")
