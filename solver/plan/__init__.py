"""The plan: place GPUs, route, sweep failures, design the upgrades, check the planned backbone.

* :mod:`~backbone.solver.plan.pipeline`: the stages' algorithms (:func:`plan_upgrades`, :func:`overall_status`).
* :mod:`~backbone.solver.plan.states`: the failure states a plan designs against and its survivability.
* :mod:`~backbone.solver.plan.summary`: ``plan.json``'s summary (:class:`~backbone.solver.plan.summary.PlanSummary`).
* :mod:`~backbone.solver.plan.report_data`: what the plan's report shows, as the typed records of
  :mod:`~backbone.solver.plan.report_records`.
* :mod:`~backbone.solver.plan.stage_options`: each stage's options and the plan's defaults.

The ``plan`` task that runs them is :mod:`backbone.solver.tasks.plan`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.plan.pipeline import (
        UPGRADE_COLUMNS,
        StageStatuses,
        UpgradeStage,
        failure_before_after,
        grown_network,
        network_after_placement,
        overall_status,
        placement_demands,
        plan_upgrades,
    )

__all__ = ["UPGRADE_COLUMNS", "StageStatuses", "UpgradeStage", "failure_before_after", "grown_network",
           "network_after_placement", "overall_status", "placement_demands", "plan_upgrades"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={"pipeline": __all__})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
