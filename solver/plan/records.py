"""The plan's per-failure record: :class:`FailureBeforeAfter`, one row of ``plan.json``'s ``before_after``
(:func:`backbone.solver.plan.pipeline.failure_before_after` builds them; dumped only at the file and API edge)."""

from __future__ import annotations

from pydantic import ConfigDict

from backbone.solver.core.summary import TaskSummary

__all__ = ["FailureBeforeAfter"]


class FailureBeforeAfter(TaskSummary):
    """One failure state's impact, unmet traffic, utilisation and survival before and after the plan (the ``after``
    figures None when the state was not swept after it). NaN (unknown) stays NaN until the file edge."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)

    scenario: str
    """The failure state's id."""
    impact_gbps_before: float
    """Its impact before the plan (Gbps)."""
    unmet_gbps_before: float
    """Traffic it leaves unmet before the plan (Gbps; NaN when not measured)."""
    mlu_before: float
    """The utilisation its traffic needs before the plan."""
    survived_before: bool
    """Whether the network before the plan carries it."""
    impact_gbps_after: float | None
    """Its impact on the planned backbone (Gbps)."""
    unmet_gbps_after: float | None
    """Traffic it leaves unmet on the planned backbone (Gbps)."""
    mlu_after: float | None
    """The utilisation its traffic needs on the planned backbone."""
    survived_after: bool | None
    """Whether the planned backbone carries it."""
