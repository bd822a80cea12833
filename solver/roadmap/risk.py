"""The roadmap's starting risk: the periods whose backbone does not yet carry every failure state, said once."""

from __future__ import annotations

from collections.abc import Sequence

from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.roadmap.records import RiskPeriod, StartingRisk

__all__ = ["starting_risk", "starting_risk_record"]


def starting_risk_record(labels: Sequence[str], survivability: Sequence[Survivability],
                         unbuildable: Sequence[str] = (), why: str = "") -> StartingRisk | None:
    """The plan's starting risk, said once: the periods with violated failure states before the earliest period
    from which every later period carries every state it is not excused from (None when every period does).

    ``labels`` are the periods' labels and ``survivability`` their survivability, in order. ``unbuildable`` names
    the periods in which nothing can be online yet and ``why`` says why (lead times): when every period at risk is
    one of them, the text says so. Returns the :class:`~backbone.solver.roadmap.records.StartingRisk`:
    ``failure_kind``, ``periods`` (``period``, ``violated``), ``safe_from`` (a period label, None when even the last
    period has violated states), ``nothing_online``, ``text``."""
    bad = [i for i, sv in enumerate(survivability) if sv.violated]
    if not bad:
        return None
    kind = survivability[bad[0]].failure_kind
    first_ok = bad[-1] + 1
    at_risk = [RiskPeriod(period=labels[i], violated=len(survivability[i].violated)) for i in bad]
    where = ", ".join(f"{x.period} ({x.violated})" for x in at_risk)
    nothing = bool(unbuildable) and all(x.period in set(unbuildable) for x in at_risk)
    cause = f"nothing can be online in {', '.join(unbuildable)} ({why}), so " if nothing and why else ""
    safe = labels[first_ok] if first_ok < len(labels) else None
    if safe is not None:
        text = (f"Starting risk: {cause}{kind} failures not carried in {where}; every {kind} failure that is not "
                f"excused is carried from {safe} on.")
    else:
        text = (f"Risk: {kind} failures not carried in {where}, the last period included: no period from which "
                f"every {kind} failure that is not excused is carried.")
    return StartingRisk(failure_kind=kind, periods=at_risk, safe_from=safe, nothing_online=nothing, text=text)


def starting_risk(labels: Sequence[str], survivability: Sequence[Survivability]) -> list[str]:
    """:func:`starting_risk_record`'s text as a list of notes (empty when every period carries every state)."""
    risk = starting_risk_record(labels, survivability)
    return [risk.text] if risk is not None else []
