"""The roadmap's wall clock: one time budget for every period and the global bound (``time_limit_s``).

Each period's stages keep their own limits (placement ``place.time_limit_s`` per solve, design
``design.time_limit_s`` per MIP and a design budget of :data:`~backbone.solver.roadmap.design.PERIOD_DESIGN_BUDGET_FACTOR`
times that). On a busy machine every sweep and solve takes longer, so those limits alone let the default roadmap
run for 15 minutes and more. The clock splits the roadmap's ``time_limit_s`` instead:

- each period gets an even share of what is left once the global bound's ``bound_time_limit_s`` is kept back,
  over the periods still to plan (a period that needs less leaves its time to the later ones);
- within it, the placement's time limit is at most :data:`PLACE_SHARE` of the share, and the survivable design's
  budget is what the share leaves after the placement, between :data:`MIN_DESIGN_FACTOR` and the design's own
  budget factor times ``design.time_limit_s`` (a design stopped by it says ``not_converged`` with its violated
  states);
- the global bound gets every second the periods did not use (at least ``bound_time_limit_s``): its period MIPs,
  which make its floors and so its gap, are what profits from a quick horizon.

``time_limit_s`` 0 switches the clock off: each stage has its own limits only, as before.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from backbone.solver.roadmap.records import TimeBudget

__all__ = ["MIN_DESIGN_FACTOR", "PLACE_SHARE", "RoadmapClock"]

PLACE_SHARE = 0.3
"""Most of a period's share its placement may take (it usually needs seconds; its MIP gap stops it first)."""

MIN_DESIGN_FACTOR = 1.0
"""Least design budget in multiples of ``design.time_limit_s``: one MIP solve between two sweeps."""

MIN_PLACE_S = 5.0
"""Least time limit of a period's placement solve."""


@dataclass
class RoadmapClock:
    """The time budget of one roadmap run (see the module doc).

    Attributes
    ----------
    limit_s
        Wall-clock seconds for the whole roadmap (periods and global bound); 0 or less: no total limit.
    bound_s
        Seconds kept back for the global bound (``bound_time_limit_s``).
    periods
        Number of periods.
    start
        ``time.perf_counter()`` at the start.
    spent_s
        Seconds each planned period took.
    """

    limit_s: float
    bound_s: float
    periods: int
    start: float = field(default_factory=time.perf_counter)
    spent_s: list[float] = field(default_factory=list)

    @property
    def on(self) -> bool:
        """Whether the roadmap has a total time limit."""
        return self.limit_s > 0

    def left_s(self) -> float:
        """Seconds left of the whole budget (inf without one)."""
        return self.start + self.limit_s - time.perf_counter() if self.on else math.inf

    def period_share_s(self, t: int) -> float:
        """Period ``t``'s share: what is left once the bound's time is kept back, over the periods still to plan."""
        return max(0.0, self.left_s() - self.bound_s) / max(1, self.periods - t)

    def place_limit_s(self, t: int, limit_s: float) -> float:
        """The placement's time limit in period ``t``: its own ``limit_s``, at most :data:`PLACE_SHARE` of the
        period's share (never under :data:`MIN_PLACE_S`)."""
        return float(limit_s) if not self.on else max(MIN_PLACE_S, min(float(limit_s),
                                                                       PLACE_SHARE * self.period_share_s(t)))

    def design_factor(self, t: int, period_start: float, time_limit_s: float, most: float) -> float:
        """The design's budget in multiples of ``time_limit_s`` in period ``t`` begun at ``period_start``: what is
        left of the period's share, between :data:`MIN_DESIGN_FACTOR` and ``most``."""
        if not self.on or time_limit_s <= 0:
            return most
        spent = time.perf_counter() - period_start
        # the share as it was when the period began: the placement's seconds come out of it
        share = max(0.0, self.left_s() + spent - self.bound_s) / max(1, self.periods - t)
        return min(most, max(MIN_DESIGN_FACTOR, (share - spent) / float(time_limit_s)))

    def bound_limit_s(self) -> float:
        """The global bound's time: every second left (at least ``bound_s``)."""
        return self.bound_s if not self.on else max(self.bound_s, self.left_s())

    def time_budget(self, bound_seconds: float | None) -> TimeBudget:
        """The record (:class:`~backbone.solver.roadmap.records.TimeBudget`): the budget, the bound's minimum, the
        seconds each period took and ``bound_seconds``, the seconds the global bound took (None when not run)."""
        return TimeBudget(time_limit_s=self.limit_s if self.on else None, bound_min_s=self.bound_s,
                          period_seconds=[round(x, 3) for x in self.spent_s],
                          bound_s=None if bound_seconds is None else round(bound_seconds, 3))
