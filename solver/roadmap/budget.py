"""The roadmap's budget arithmetic: what each period may commit, with carry-over.

Capex is charged in the period a build is committed; a period may spend its own budget plus
``carry_over`` x what the period before left (:func:`budget_ledger`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from backbone.model import Network
from backbone.serialize import finite_or_none

if TYPE_CHECKING:
    from backbone.solver.roadmap.options import RoadmapOptions
    from backbone.solver.roadmap.records import RoadmapBuild

__all__ = ["BUDGET_TOL_USD", "adds_no_overshoot", "affordable", "budget_ledger", "fits_budget", "headroom", "overshoot_usd",
           "place_within_budget"]

BUDGET_TOL_USD = 1.0
"""Rounding slack when comparing spend with a budget."""


def budget_ledger(budgets: list[float], committed: list[float], carry_over: float) -> list[float]:
    """Budget available in each period: its own plus ``carry_over`` x what the previous period left."""
    available, left = [], 0.0
    for b, c in zip(budgets, committed, strict=True):
        a = b + carry_over * left
        available.append(a)
        left = max(0.0, a - c) if math.isfinite(a) else math.inf
    return available


def fits_budget(budgets: list[float], committed: list[float], carry: float) -> bool:
    """Whether every period's commitments are within what it has available."""
    avail = budget_ledger(budgets, committed, carry)
    return all(c <= a + BUDGET_TOL_USD for c, a in zip(committed, avail, strict=True))


def overshoot_usd(budgets: list[float], committed: list[float], carry: float) -> list[float]:
    """How far each period's commitments exceed what it has available (0 where they fit)."""
    avail = budget_ledger(budgets, committed, carry)
    return [max(0.0, c - a) for c, a in zip(committed, avail, strict=True)]


def adds_no_overshoot(budgets: list[float], committed: list[float], trial: list[float], carry: float) -> bool:
    """Whether committing ``trial`` instead of ``committed`` leaves no period further over its budget.

    Equal to :func:`fits_budget` of ``trial`` when ``committed`` fits; when a period is already over (spend that
    had to be committed, such as a dataset replica's storage, past its budget), that overshoot alone does not stop
    later periods from building within their own budgets.
    """
    before = overshoot_usd(budgets, committed, carry)
    after = overshoot_usd(budgets, trial, carry)
    return all(a <= b + BUDGET_TOL_USD for a, b in zip(after, before, strict=True))


def headroom(budgets: list[float], committed: list[float], carry: float, c: int) -> float:
    """Most extra capex period ``c`` can commit with every later period still within its budget."""
    avail = budget_ledger(budgets, committed, carry)
    room = math.inf
    for j in range(c, len(budgets)):
        slack = avail[j] - committed[j]
        if not math.isfinite(slack):
            continue
        factor = carry ** (j - c) if j > c else 1.0
        if factor <= 0:
            break
        room = min(room, max(0.0, slack) / factor)
    return room


def affordable(budgets: list[float], committed: list[float], carry: float, rows: Sequence[RoadmapBuild]) -> float:
    """Capex of the builds ``rows`` that fits: the headroom of their earliest commit period, at most their cost."""
    if not rows:
        return 0.0
    c = min(b.committed_index for b in rows)
    return min(sum(b.cost_usd for b in rows), headroom(budgets, committed, carry, c))


def place_within_budget(net: Network, place_opts: Any, gpu_c: int, budgets: list[float], committed: list[float],
           opts: RoadmapOptions) -> tuple[Any, str, float]:
    """The period's placement; when its capex exceeds the commit period's headroom, the placement that
    serves the most demand within it (capex only). Returns ``(result, note, shortfall_usd)``."""
    from backbone.solver.placement import solve_placement

    res = solve_placement(net, place_opts)
    capex = float(res.tables["sites"]["capex_usd"].sum())
    if gpu_c < 0:
        lead = opts.gpu_lead_quarters
        return res, (f"no GPU block can be online yet ({lead} quarter(s) from order to service)"
                     if lead else ""), 0.0
    room = headroom(budgets, committed, opts.carry_over, gpu_c)
    if capex <= room + BUDGET_TOL_USD:
        return res, "", 0.0
    capped = place_opts.model_copy(update={"objective": "max-served", "budget_usd": max(0.0, room),
                                           "horizon_years": 0.0})
    res2 = solve_placement(net, capped)
    capex2 = float(res2.tables["sites"]["capex_usd"].sum())
    note = (f"the least-cost GPU blocks need {capex / 1e6:,.1f} M USD of capex, the budget of "
            f"{opts.labels()[gpu_c]} allows {room / 1e6:,.1f} M USD: {capex2 / 1e6:,.1f} M USD spent serving the most "
            "demand within it")
    served, served2 = finite_or_none(res.totals.get("served_share")) or 0.0, finite_or_none(res2.totals.get("served_share")) or 0.0
    if served2 >= served - 1e-6:  # the budget changed where, not how much: no shortfall
        return res2, note + " (cheaper-to-buy sites, all the demand the least-cost plan serves)", 0.0
    return res2, note + f" ({100 * served2:.1f} % of inference served instead of {100 * served:.1f} %)", \
        max(0.0, capex - room)
