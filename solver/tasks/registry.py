"""The task registry: every shipped planning task, by kind (the CLI commands and the API's job kinds)."""

from __future__ import annotations

from backbone.solver.failures import FailureOptions
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.tasks.base import Task
from backbone.solver.tasks.calibrate import CalibrateOptions, run_calibrate_task
from backbone.solver.tasks.design import DesignOptions, run_design_task
from backbone.solver.tasks.failures import run_failures_task
from backbone.solver.tasks.place import run_place_task
from backbone.solver.tasks.plan import PlanOptions, run_plan_task
from backbone.solver.tasks.roadmap import RoadmapOptions, run_roadmap_task
from backbone.solver.tasks.te import TEOptions, run_te_task

TASKS: dict[str, Task] = {task.kind: task for task in (
    Task("te", run_te_task, TEOptions),
    Task("place", run_place_task, PlaceOptions),
    Task("failures", run_failures_task, FailureOptions),
    Task("design", run_design_task, DesignOptions),
    Task("plan", run_plan_task, PlanOptions),
    Task("calibrate", run_calibrate_task, CalibrateOptions),
    Task("roadmap", run_roadmap_task, RoadmapOptions),
)}
"""Task kind -> :class:`~backbone.solver.tasks.base.Task` (function and options model)."""
