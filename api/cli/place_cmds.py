"""``backbone place``: where the GPUs go (calls the ``place`` planning task)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    EXIT_VERIFY,
    ScenarioArg,
    emit_json,
    err_console,
    handle_errors,
    load,
    out_console,
    run_with_progress,
)

MAX_ROWS = 30
"""Rows shown per table in the terminal (the CSV files have everything)."""


def register(app: typer.Typer) -> None:
    """Add ``place`` to ``app``."""
    app.command("place")(place)


@handle_errors
def place(
    scenario: ScenarioArg = None,
    objective: Annotated[str, typer.Option(help="min-cost (serve all demand) or max-served (within --budget).")]
    = "min-cost",
    budget: Annotated[Optional[float], typer.Option("--budget", help="Budget in USD (capex + opex) for max-served.")]  # noqa: UP045
    = None,
    n_plus_one: Annotated[bool, typer.Option("--n-plus-one", help="Inference still served within SLO after "
                                                                   "losing any one site.")] = False,
    periods: Annotated[int, typer.Option(help="1 (peak hour) or 24 (follow-the-sun hourly profile).")] = 1,
    backend: Annotated[str, typer.Option(help="Solver backend (highs, ortools-scip, pulp-cbc, ...).")] = "highs",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Time limit per solve, seconds.")] = 60.0,
    verify: Annotated[bool, typer.Option("--verify", help="Check the plan independently from its tables.")] = False,
    options: Annotated[Optional[Path], typer.Option("--options", help="JSON/YAML file of further placement "  # noqa: UP045
                                                                     "options (residency, training, kw_per_gpu, ...).")]
    = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout only.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for place.json and place_*.csv.")] = None,  # noqa: UP045
) -> None:
    """Place inference and training GPUs: cheapest build (or most demand served) within latency SLOs,
    residency, power, block sizes and backbone capacity.

    When min-cost cannot serve all demand the best-effort plan (status "partial", unserved metros
    named) is still printed and written, and the exit code is 3.
    """
    opts: dict[str, Any] = _load_options(options)
    opts.update(objective=objective, n_plus_one=n_plus_one, periods=periods, backend=backend,
                time_limit_s=time_limit, verify=verify)
    if budget is not None:
        opts["budget_usd"] = budget
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
            err_console.print(f"[bold red]verification failed[/]: {verification['n_violations']} violation(s)")
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


def _load_options(path: Path | None) -> dict[str, Any]:
    from backbone.errors import NotFoundError, ValidationError

    if path is None:
        return {}
    if not path.exists():
        raise NotFoundError(f"options file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
    except Exception as exc:
        raise ValidationError(f"cannot parse options file: {exc}", file=str(path)) from None
    if not isinstance(data, dict):
        raise ValidationError("options file must hold a mapping of option names to values", file=str(path))
    return data


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
    tot = s["totals"]
    console.print(f"GPUs {tot['gpus_before']:,.0f} -> {tot['gpus_after']:,.0f} (+{tot['gpus_added']:,.0f}), "
                  f"{tot['mw_built']:,.1f} MW built; cost {s['cost_usd']:,.0f} USD (capex {s['capex_usd']:,.0f}, "
                  f"opex {s['opex_usd']:,.0f}); served {100 * s['served_share']:.2f} %; "
                  f"max link utilisation {100 * tot['max_link_utilisation']:.1f} %", highlight=False)
    for n in s.get("notes", []):
        console.print(f"[yellow]note:[/] {n}", highlight=False)
