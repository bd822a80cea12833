"""Former home of :func:`design_upgrades`, which now lives in :mod:`backbone.solver.upgrades.edge`.

Kept so ``from backbone.solver.design_task import design_upgrades`` keeps working; new code imports from
:mod:`backbone.solver.upgrades`.
"""

from __future__ import annotations

from backbone.solver.upgrades.edge import (
    CandidateLink,
    DesignResult,
    FailureSets,
    design_upgrades,
    failure_states,
    instance_from_network,
)

__all__ = ["CandidateLink", "DesignResult", "FailureSets", "design_upgrades", "failure_states",
           "instance_from_network"]
