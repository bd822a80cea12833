"""AI capacity placement: where the GPUs go, under latency, power, cost, residency and network limits.

* :mod:`~solver.placement.options`: :class:`PlaceOptions` and the documented defaults (classes and
  SLOs, residency rules, follow-the-sun profile).
* :mod:`~solver.placement.inputs`: demand units, candidate sites, metro -> site RTT, routes.
* :mod:`~solver.placement.formulation`: the MIP, one function per constraint family.
* :mod:`~solver.placement.result`: solve, planner tables, infeasibility diagnosis.
* :mod:`~solver.placement.task`: the ``place`` planning task (JSON + CSV).

The independent checker is :func:`solver.checks.placement.check_placement`.
"""

from __future__ import annotations

from solver.placement.options import DEFAULT_RESIDENCY, PlaceOptions, ResidencyRule, TrainingJob
from solver.placement.result import PlacementResult, solve_placement
from solver.placement.task import placement_summary, run_place_task

run_place_task.options_model = PlaceOptions  # type: ignore[attr-defined]

__all__ = ["DEFAULT_RESIDENCY", "PlaceOptions", "PlacementResult", "ResidencyRule", "TrainingJob",
           "placement_summary", "run_place_task", "solve_placement"]
