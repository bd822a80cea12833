"""The ``calibrate`` planning task: fit the latency model to measured round trips (API job kind).

The fit itself lives in the model layer (:func:`backbone.calibrate.calibrate`, which needs only
routing); this module gives it the planning service's shape, so the REST API can run it as a job.
Measurements arrive inline (never as a server path); without them the shipped public round-trip
set (``data/calibration/public_rtt.csv``) is used.

Files written: ``calibrated_scenario.json`` (the calibrated scenario in the canonical JSON form the
API accepts as a scenario) and ``calibration_pairs.csv`` (one row per measured pair).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backbone.artifacts import ArtifactWriter
from backbone.calibrate import CalibrationResult, calibrate, load_measured, measured_frame
from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.calibrate_options import CalibrateOptions
from backbone.solver.tasks.summaries import CalibrateSummary, CalibrationErrors


@dataclass(kw_only=True)
class CalibrateTaskResult(TaskResult[CalibrateSummary]):
    """The ``calibrate`` task's outcome: the JSON summary, the files, and the :class:`CalibrationResult` (the
    calibrated network and the per-pair table)."""

    calibration: CalibrationResult


def run_calibrate_task(net: Network, opts: CalibrateOptions, out_dir: Path | None,
                       progress: ProgressFn) -> CalibrateTaskResult:
    """Planning-service entry point for ``calibrate``."""
    from backbone.io import save_json
    from backbone.paths import public_rtt_path

    progress(0.05, "reading measurements")
    if opts.measured:
        measured = measured_frame([{"from": p.from_, "to": p.to, "rtt_ms": p.rtt_ms, "source": p.source}
                                   for p in opts.measured], file="options.measured")
        label = "options.measured"
    else:
        measured = load_measured(public_rtt_path())
        label = f"calibration/{public_rtt_path().name}"
    progress(0.2, f"fitting {len(opts.fit)} parameter(s) to {len(measured)} pair(s)")
    result = calibrate(net, measured, fit=tuple(opts.fit), loss=opts.loss, f_scale=opts.f_scale,
                       max_iterations=opts.max_iterations, source_label=label)
    writer = ArtifactWriter(out_dir)
    if writer.enabled:
        save_json(result.network, writer.path("calibrated_scenario.json"))
        writer.record("calibrated_scenario.json")
        writer.csv("calibration_pairs.csv", result.pairs.assign(path=result.pairs["path"].map(";".join)))
    progress(1.0, f"median error {result.before['median_abs_pct']:.1f} % -> {result.after['median_abs_pct']:.1f} %")
    return CalibrateTaskResult("calibrate", calibration_summary(result), writer.files, calibration=result)


def calibration_summary(result: CalibrationResult) -> CalibrateSummary:
    """The ``calibrate`` summary of a fit: its record (parameters, errors), notes and per-pair table."""
    return CalibrateSummary(
        date=result.date, pairs=len(result.pairs), loss=result.loss, fitted=list(result.fitted),
        parameters=result.parameters, previous_parameters=result.previous_parameters, iterations=result.iterations,
        converged=result.converged,
        errors=CalibrationErrors(before=result.before, after=result.after, leave_one_out=result.leave_one_out),
        notes=list(result.notes), pairs_table=result.pairs_records())
