"""What a survivable design claims: of the states of one failure kind, how many the designed backbone carries, which
it excuses (no candidate can help, each with its reason and Gbps) and which are still violated.

:class:`Survivability` is :meth:`SurvivableDesign.survivability()
<backbone.solver.design.survivable.iterate.SurvivableDesign.survivability>`, ``design.json``'s, ``plan.json``'s
and each roadmap period's ``survivability``; a plan that designed nothing counts it from its sweep
(:func:`backbone.solver.plan.states.survivability_summary`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ExcusedState", "Survivability"]


class ExcusedState(BaseModel):
    """A failure state the plan does not claim to survive because no candidate can help (``not_survivable``)."""

    model_config = ConfigDict(extra="forbid")

    scenario: str
    """The failure state's id (``srlg:tat-a``)."""
    reason: str
    """Why no design can carry it (cut apart, a site off the network, no path within the SLO)."""
    gbps: float
    """Demand (Gbps) no design can carry in this state: what the independent check re-measures."""


class Survivability(BaseModel):
    """How many states of one failure kind a backbone carries: survived, excused (not survivable, with reasons)
    and still violated. ``plan.json``'s and each roadmap period's ``survivability``."""

    model_config = ConfigDict(extra="forbid")

    failure_kind: str
    """The failure kind the states are of (``srlg``, ``link``, ``site``, ``srlg,link``)."""
    states: int
    """Failure states examined."""
    survived: int
    """States carried (neither excused nor violated)."""
    not_survivable: list[ExcusedState]
    """States excused: no candidate can help, each with its reason and Gbps."""
    violated: list[str]
    """States still not carried (empty when the design converged)."""
