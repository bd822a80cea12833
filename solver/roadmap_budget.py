"""The roadmap's budget arithmetic: what each period may commit, with carry-over.

Capex is charged in the period a build is committed; a period may spend its own budget plus
``carry_over`` x what the period before left (:func:`budget_ledger`).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["BUDGET_TOL_USD", "affordable", "budget_ledger", "fits_budget", "headroom"]

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


def affordable(budgets: list[float], committed: list[float], carry: float, rows: list[dict[str, Any]]) -> float:
    """Capex of ``rows`` that fits: the headroom of their earliest commit period, at most their cost."""
    if not rows:
        return 0.0
    c = min(b["committed_index"] for b in rows)
    return min(sum(b["cost_usd"] for b in rows), headroom(budgets, committed, carry, c))
