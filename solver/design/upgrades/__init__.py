"""Capacity upgrades, in one package.

* :mod:`~backbone.solver.design.upgrades.paths` -- :func:`plan_path_upgrades`: upgrades routed the way TE routes (over
  latency-admissible candidate paths, per failure state), with :func:`verify_path_upgrades` (a TE re-solve);
* :mod:`~backbone.solver.design.upgrades.edge` -- :func:`design_upgrades`: upgrades routed over every path (the design
  core's edge-based routing; the ``design`` task's ``routing="edge"``);
* :mod:`~backbone.solver.design.upgrades.families` -- the per-state path, demand and capacity families shared with the
  survivable upgrade MIP (:mod:`backbone.solver.design.survivable.model`) and the roadmap bound.

The survivable variant (protect a chosen set of failures) is :mod:`backbone.solver.design.survivable.iterate`.
"""

from __future__ import annotations

from backbone.solver.design.upgrades.edge import (
    CandidateLink,
    DesignResult,
    FailureSets,
    design_upgrades,
    failure_states,
    instance_from_network,
)
from backbone.solver.design.upgrades.families import (
    UNMET_PENALTY_USD_PER_GBPS,
    state_capacity_rows,
    state_demand_rows,
    state_paths,
)
from backbone.solver.design.upgrades.paths import (
    INF,
    PathUpgradeResult,
    plan_path_upgrades,
    verify_path_upgrades,
)

__all__ = ["INF", "UNMET_PENALTY_USD_PER_GBPS", "CandidateLink", "DesignResult", "FailureSets", "PathUpgradeResult",
           "design_upgrades", "failure_states", "instance_from_network", "plan_path_upgrades", "state_capacity_rows",
           "state_demand_rows", "state_paths", "verify_path_upgrades"]
