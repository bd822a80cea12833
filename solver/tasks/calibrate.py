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
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from backbone.artifacts import ArtifactWriter
from backbone.calibrate import CalibrationResult, calibrate, load_measured, measured_frame
from backbone.model import Network
from backbone.solver.progress import ProgressFn
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.summaries import CalibrateSummary, Summary

Parameter = Literal["terrestrial_latency_factor", "submarine_latency_factor", "equipment_delay_ms"]


def _every_parameter() -> list[Parameter]:
    """Every fitted parameter (:data:`backbone.calibrate.FITTED_PARAMETERS`)."""
    return ["terrestrial_latency_factor", "submarine_latency_factor", "equipment_delay_ms"]


class MeasuredPair(BaseModel):
    """One measured round trip: site ids or ``'lat,lon'`` points, RTT in ms."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(alias="from", min_length=1, max_length=200, description="Site id or 'lat,lon'")
    to: str = Field(min_length=1, max_length=200, description="Site id or 'lat,lon'")
    rtt_ms: float = Field(gt=0, le=10_000, allow_inf_nan=False, description="Measured round trip, ms")
    source: str = Field("", max_length=500, description="Where the figure comes from")


class CalibrateOptions(BaseModel):
    """Options of the ``calibrate`` task (see :func:`backbone.calibrate.calibrate`)."""

    model_config = ConfigDict(extra="forbid")
    measured: list[MeasuredPair] | None = Field(
        None, max_length=5_000, description="Measured round trips (at most 5,000: the leave-one-out error refits "
                                           "once per pair); default: the shipped public RTT set")
    fit: list[Parameter] = Field(default_factory=lambda: _every_parameter(), min_length=1,
                                 description="Parameters to fit; the others keep the scenario's value")
    loss: Literal["soft_l1", "huber", "cauchy", "linear"] = "soft_l1"
    f_scale: float = Field(0.05, gt=0, le=1, description="Scale of the robust loss (relative error)")
    max_iterations: int = Field(5, ge=1, le=50, description="Fit / re-route rounds at most")


@dataclass(kw_only=True)
class CalibrateTaskResult(TaskResult):
    """The ``calibrate`` task's outcome: the JSON summary, the files, and the :class:`CalibrationResult` (the
    calibrated network and the per-pair table)."""

    summary_model: ClassVar[type[Summary]] = CalibrateSummary

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
    return CalibrateTaskResult("calibrate", result.to_dict(), writer.files, calibration=result)
