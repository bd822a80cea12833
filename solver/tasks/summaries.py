"""Summary models: each task's summary (``<kind>.json``, ``--json``, the API's job result) as a typed model.

Every task builds its summary as the model itself (a :class:`~backbone.solver.core.summary.TypedSummary`: every
field declared, units in the names, ``extra`` forbidden) and the model is dumped only at the file and API edge
(:meth:`TaskResult.to_dict <backbone.solver.tasks.base.TaskResult.to_dict>`). The models live where their data
does and are re-exported here: :class:`TESummary` and :class:`CalibrateSummary` here (the tasks build them),
:class:`PlaceSummary` in :mod:`backbone.solver.placement.summary`, :class:`PlanSummary` in
:mod:`backbone.solver.plan.summary`, :class:`FailuresSummary` in :mod:`backbone.solver.failures.summary`,
the design's three modes (:data:`DesignSummary`) in :mod:`backbone.solver.design.summary`, :class:`RoadmapSummary`
in :mod:`backbone.solver.roadmap.summary`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from backbone.solver.checks.records import CheckRecord
from backbone.solver.core.summary import TaskSummary, TypedSummary
from backbone.solver.design.summary import (
    DesignBound,
    DesignIteration,
    DesignSummary,
    RestrictedOptimum,
    SndlibDesignSummary,
    SurvivableDesignSummary,
    UpgradeDesignSummary,
)
from backbone.solver.failures.summary import FailuresSummary, SloViolations
from backbone.solver.placement.summary import PlaceSummary
from backbone.solver.plan.records import FailureBeforeAfter
from backbone.solver.plan.summary import (
    ComparedWith,
    FailuresToday,
    PlanSummary,
    PlanVerification,
    Residency,
    StageRow,
)
from backbone.solver.roadmap.summary import RoadmapSummary
from backbone.solver.te.summary import TERecord

__all__ = ["CalibrateSummary", "CalibrationErrors", "ComparedWith", "DesignBound", "DesignIteration",
           "DesignSummary", "FailureBeforeAfter", "FailuresSummary", "FailuresToday", "PlaceSummary", "PlanSummary",
           "PlanVerification", "Residency", "RestrictedOptimum", "RoadmapSummary", "SloViolations",
           "SndlibDesignSummary", "StageRow", "SurvivableDesignSummary", "TESummary", "TypedSummary",
           "UnmetDemand", "UpgradeDesignSummary"]


class UnmetDemand(BaseModel):
    """One of the largest unmet demands of a routing (``te.json``'s ``unmet_demands``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """The demand's id."""
    src: str
    """Its source site."""
    dst: str
    """Its destination site."""
    traffic_class: str
    """Its traffic class."""
    demand_gbps: float
    """What it asks for."""
    unmet_gbps: float
    """What the routing leaves unmet."""
    reason: str
    """Why (``capacity``, ``no path within SLO``, ...)."""


class TESummary(TERecord):
    """``te``: how the traffic flows (utilisation, carried and unmet traffic, latency) and how it was solved.

    The routing's record (:class:`~backbone.solver.te.summary.TERecord`: :attr:`TEResult.summary
    <backbone.solver.te.result.TEResult.summary>`, with the edge bound, the impact and the corridors the task adds)
    plus the task's figures (the largest unmet demands, ``verification``), built by the ``te`` task
    (:func:`backbone.solver.tasks.te.te_summary`); ``total_seconds`` is the whole run's. The record's fields only
    some runs report are in the document only when they were given, ``verification`` only when it ran.
    """

    model_config = ConfigDict(frozen=False, validate_assignment=True)

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)

    unmet_demands: list[UnmetDemand]
    """The largest unmet demands (at most 100; ``te_demands.csv`` has all): id, ends, class, Gbps, reason."""
    unmet_demands_total: int
    """Demands with unmet traffic."""
    verification: CheckRecord | None = None
    """The independent checker's record (with ``verify``)."""


class CalibrationErrors(BaseModel):
    """``calibrate``'s ``errors``: :func:`~backbone.calibrate.error_stats` of the model before the fit, after it and of
    the leave-one-out predictions (median and worst absolute error, in % and ms)."""

    model_config = ConfigDict(extra="forbid")

    before: dict[str, float]
    """The input model's errors."""
    after: dict[str, float]
    """The calibrated model's errors."""
    leave_one_out: dict[str, float]
    """Each pair predicted by a fit without it."""


class CalibrateSummary(TaskSummary):
    """``calibrate``: the fitted latency parameters and the errors before, after and left out.

    Built by the ``calibrate`` task as this model from the
    :class:`~backbone.calibrate.CalibrationResult`, fields in the order ``scenario.yaml``'s ``calibration`` record
    and ``backbone calibrate --json`` use.
    """

    date: str
    """When the fit ran (ISO date)."""
    pairs: int
    """Measured pairs fitted."""
    loss: str
    """The robust loss."""
    fitted: list[str]
    """The parameters fitted."""
    parameters: dict[str, float]
    """Their fitted values."""
    previous_parameters: dict[str, float]
    """Their values before the fit."""
    iterations: int
    """Fit / re-route rounds run."""
    converged: bool
    """Whether the paths stopped changing."""
    errors: CalibrationErrors
    """Errors before, after and left out."""
    notes: list[str]
    """What a planner should know about the fit."""
    pairs_table: list[dict[str, Any]]
    """One record per measured pair (``calibration_pairs.csv`` without ``path``)."""
