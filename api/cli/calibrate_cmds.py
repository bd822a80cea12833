"""``backbone calibrate``: fit the latency model to measured round trips, write the calibrated scenario."""

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
)
from backbone.api.cli.options import options_command
from backbone.serialize import count_text
from backbone.solver.tasks.calibrate_options import CalibrateOptions


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to ``app``."""
    app.command("calibrate")(calibrate)


@options_command(CalibrateOptions)
@handle_errors
def calibrate(
    scenario: ScenarioArg = None,
    measured: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--measured", help="CSV of measured round trips: from,to,rtt_ms (site ids or 'lat,lon' points), optional "
                           "source (default: the shipped public RTT set, data/calibration/public_rtt.csv).",
        show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--out", help="Folder for the calibrated scenario (canonical folder); without it, report only.",
        show_default=False)] = None,
    fit: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--fit", help="Parameter to fit (repeat; default: terrestrial_latency_factor, submarine_latency_factor, "
                      "equipment_delay_ms).")] = None,
    json_out: JsonOpt = False,
    *,
    options: dict[str, Any],
) -> None:
    """Fit latency factors per link kind and a per-link overhead to measured RTTs; write the calibrated scenario.

    The fit never goes below the fibre floor (factors >= 1, overhead >= 0); every command run on the
    written scenario uses its calibrated latencies. Reports the fitted parameters and the median and
    worst error before, after and leave-one-out. The other options are the ``calibrate`` task's
    (:class:`~backbone.solver.tasks.calibrate_options.CalibrateOptions`, as in the API); the measurements
    come from a CSV file here, inline in the API.
    """
    from backbone.calibrate import calibrate as run_calibration
    from backbone.calibrate import load_measured
    from backbone.io import save_scenario
    from backbone.paths import public_rtt_path
    from backbone.solver.tasks import validate_options

    opts = validate_options(CalibrateOptions, {**options, **({"fit": fit} if fit else {})})
    net = load(scenario)
    path = measured or public_rtt_path()
    pairs = load_measured(path)
    result = run_calibration(net, pairs, fit=tuple(opts.fit), loss=opts.loss, f_scale=opts.f_scale,
                             max_iterations=opts.max_iterations, source_label=path.name)
    if out is not None:
        save_scenario(result.network, out)
    summary = {**result.to_dict(), "out": None if out is None else str(out)}
    if json_out:
        emit_json(summary)
        return
    _print_tables(summary)


def _print_tables(summary: dict[str, Any]) -> None:
    from rich.table import Table

    params = Table(title=f"calibration on {summary['pairs']} measured pairs ({summary['loss']} loss, "
                         f"{count_text(summary['iterations'], 'round')}{'' if summary['converged'] else ', not converged'})")
    params.add_column("parameter")
    params.add_column("before", justify="right")
    params.add_column("after", justify="right")
    for name, value in summary["parameters"].items():
        params.add_row(name, f"{summary['previous_parameters'][name]:.4f}", f"{value:.4f}")
    out_console.print(params)
    errors = Table(title="RTT error against the measurements (absolute; bias = median signed)")
    errors.add_column("model", no_wrap=True)
    for col in ("median ms", "worst ms", "median %", "worst %", "bias %"):
        errors.add_column(col, justify="right")
    for label, key in (("before", "before"), ("after", "after"), ("leave-one-out", "leave_one_out")):
        e = summary["errors"][key]
        errors.add_row(label, f"{e['median_abs_ms']:.1f}", f"{e['worst_abs_ms']:.1f}", f"{e['median_abs_pct']:.1f}",
                       f"{e['worst_abs_pct']:.1f}", f"{e['median_signed_pct']:+.1f}")
    out_console.print(errors)
    worst = sorted(summary["pairs_table"], key=lambda r: -abs(r["error_pct"]))[:8]
    pairs = Table(title="largest errors after calibration")
    for col in ("from", "to", "measured ms", "before ms", "after ms", "error %"):
        pairs.add_column(col, justify="right" if "ms" in col or "%" in col else "left")
    for r in worst:
        pairs.add_row(r["from_site"], r["to_site"], f"{r['measured_rtt_ms']:.1f}", f"{r['before_rtt_ms']:.1f}",
                      f"{r['after_rtt_ms']:.1f}", f"{r['error_pct']:+.1f}")
    out_console.print(pairs)
    for note in summary["notes"]:
        err_console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    if summary["out"]:
        err_console.print(f"wrote {summary['out']}", highlight=False)
    else:
        err_console.print("no --out: nothing written", highlight=False)
