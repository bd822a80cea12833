"""``backbone info``, ``validate`` and ``route``: the model's commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backbone.api.cli.common import (
    JsonOpt,
    ScenarioArg,
    emit_json,
    err_console,
    handle_errors,
    load,
    out_console,
)


def register(app: typer.Typer) -> None:
    """Add the model commands to ``app``."""
    app.command("info")(info)
    app.command("validate")(validate)
    # "-33.87,151.21" is a point, not an option: unknown dash-words are passed on as arguments
    app.command("route", context_settings={"ignore_unknown_options": True})(route)


@handle_errors
def info(scenario: ScenarioArg = None, json_out: JsonOpt = False) -> None:
    """Summarise a scenario: sites, links, cable systems, SRLGs, demand, capacity, GPUs, power."""
    net = load(scenario)
    summary = net.summary()
    if json_out:
        emit_json(summary)
        return
    from rich.table import Table

    t = Table(title=f"scenario {summary['name']}", show_header=False)
    for k, v in summary.items():
        if k == "name":
            continue
        if isinstance(v, float):
            v = f"{v:,.1f}"
        elif isinstance(v, int):
            v = f"{v:,}"
        elif isinstance(v, dict):
            v = ", ".join(f"{a}: {b:,.0f}" if isinstance(b, float) else f"{a}: {b}" for a, b in v.items())
        t.add_row(k, str(v))
    out_console.print(t)


@handle_errors
def validate(scenario: ScenarioArg = None, json_out: JsonOpt = False) -> None:
    """Check a scenario without solving or writing anything.

    Exit 0 and a one-line summary on stderr when it is valid (with a warning naming the links in no SRLG,
    which an SRLG sweep fails each as its own group); otherwise every problem found
    (file, record, field, message), one per line on stderr, and exit 2. With --json the same
    goes to stdout as {"valid": ..., "problems": [...]}.
    """
    from backbone.errors import ValidationError

    try:
        net = load(scenario)
    except ValidationError as exc:
        if json_out:
            emit_json({"valid": False, "problems": [p.to_dict() for p in exc.problems]})
            raise typer.Exit(exc.exit_code) from None
        raise
    s = net.summary()
    from backbone.validate import srlg_coverage_warning

    warning = srlg_coverage_warning(net)
    if json_out:
        emit_json({"valid": True, "sites": s["sites"], "links": s["links"], "demands": s["demands"],
                   "candidates": s["candidates"], "datasets": s["datasets"], "training_jobs": s["training_jobs"],
                   "warnings": [warning] if warning else [],
                   "links_in_no_srlg": net.links_in_no_srlg()})
    else:
        from backbone.serialize import count_text

        err_console.print("[green]valid[/]: " + ", ".join(count_text(s[k], w) for k, w in (
            ("sites", "site"), ("links", "link"), ("srlgs", "SRLG"), ("metros", "metro"), ("demands", "demand"),
            ("candidates", "candidate"), ("datasets", "dataset"), ("training_jobs", "training job"))))
        if warning:
            err_console.print(f"[yellow]warning[/]: {warning}", highlight=False)


def _is_point(text: str) -> bool:
    """Whether ``text`` reads as a ``lat,lon`` point (or a bare number)."""
    try:
        [float(part) for part in text.split(",")]
    except ValueError:
        return False
    return text.count(",") <= 1


@handle_errors
def route(
    args: Annotated[list[str], typer.Argument(metavar="[SCENARIO] FROM TO",
                                              help="Optional scenario, then two site ids or 'lat,lon' points.")],
    json_out: JsonOpt = False,
) -> None:
    """Lowest-latency path between two sites or points (one-way latency and RTT).

    Points are written 'lat,lon' (negative values work as written: "-33.87,151.21").
    """
    from backbone.errors import ValidationError
    from backbone.route import shortest_route

    unknown = [a for a in args if a.startswith("-") and not _is_point(a)]
    if unknown:
        raise ValidationError(f"no such option: {unknown[0]} (route takes [SCENARIO] FROM TO [--json])")
    if len(args) not in (2, 3):
        raise ValidationError("route takes [SCENARIO] FROM TO")
    scenario = Path(args[0]) if len(args) == 3 else None
    source, target = args[-2], args[-1]
    net = load(scenario)
    r = shortest_route(net, source, target)
    d = r.to_dict()
    if json_out:
        emit_json(d)
        return
    out_console.print(f"[bold]{d['from_site']} -> {d['to_site']}[/]: {' > '.join(d['path'])}")
    if d["from_snap_km"] or d["to_snap_km"]:
        out_console.print(f"access: {d['from_snap_km']:.1f} km + {d['to_snap_km']:.1f} km to the nearest sites")
    out_console.print(f"length {d['length_km']:,.0f} km, one-way {d['latency_ms']:.2f} ms, RTT {d['rtt_ms']:.2f} ms")
