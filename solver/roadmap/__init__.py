"""The multi-quarter roadmap: a rolling horizon of placements and survivable designs, and its bound.

* :mod:`~backbone.solver.roadmap.rolling`: :func:`plan_roadmap` and :class:`RoadmapResult`.
* :mod:`~backbone.solver.roadmap.records`: the typed records (builds, period records, the period design, the starting
  risk, the time budget); :mod:`~backbone.solver.roadmap.summary`: :class:`RoadmapSummary`, ``roadmap.json``'s model.
* :mod:`~backbone.solver.roadmap.options`: :class:`RoadmapOptions`.
* :mod:`~backbone.solver.roadmap.design`: one period's survivable design with lead times.
* :mod:`~backbone.solver.roadmap.clock`: periods, lead times and ready-for-service dates.
* :mod:`~backbone.solver.roadmap.budget`: the capex budget ledger.
* :mod:`~backbone.solver.roadmap.jobs`: each period's training jobs (placed or unplaced, with the reason) and the
  dataset replicas it builds.
* :mod:`~backbone.solver.roadmap.inputs`: each period's demand (grown) and the options' ids checked.
* :mod:`~backbone.solver.roadmap.risk`: the starting risk (periods that cannot yet carry every failure).
* :mod:`~backbone.solver.roadmap.bound`, :mod:`~backbone.solver.roadmap.bound_model` (its multi-period LP) and
  :mod:`~backbone.solver.roadmap.cuts`: the lower bound over every period.
* :mod:`~backbone.solver.roadmap.output`: the roadmap's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.roadmap.rolling import (
        RoadmapResult,
        budget_ledger,
        design_bound,
        grow_network,
        plan_roadmap,
        starting_risk,
        starting_risk_record,
    )

__all__ = ["RoadmapResult", "budget_ledger", "design_bound", "grow_network", "plan_roadmap", "starting_risk",
           "starting_risk_record"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={"rolling": __all__})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
