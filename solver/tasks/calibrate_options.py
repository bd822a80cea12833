"""Options of the ``calibrate`` task (:class:`CalibrateOptions`): importable without the model layer's fit, so
the CLI builds ``backbone calibrate``'s flags from them cheaply (:mod:`backbone.solver.tasks.calibrate` runs the
task)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CalibrateOptions", "MeasuredPair", "Parameter"]

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
    loss: Literal["soft_l1", "huber", "cauchy", "linear"] = Field(
        "soft_l1", description="Robust loss: soft_l1, huber, cauchy or linear")
    f_scale: float = Field(0.05, gt=0, le=1, description="Scale of the robust loss (relative error)")
    max_iterations: int = Field(5, ge=1, le=50, description="Fit / re-route rounds at most")
