"""What changed failure by failure, and what to buy in which order, between two plan or roadmap folders.

Per failure: a plan's ``before_after`` (``plan.json``) says for each failure state whether the planned backbone
survives it and its impact after the plan, by the one impact definition; the two plans' rows are joined on the
state. The changeover list compares the two plans' purchases (``design.json`` ``upgrades``: link upgrades and new
routes; a roadmap's ``builds``) and orders what changed as a planner commits it: the earliest commit quarter first,
then the largest cost. A plan needs everything at once, so an item must be committed its lead time before that
quarter (``commit`` ``Q-4`` is four quarters before the capacity is needed): the longest lead time commits first.
A roadmap says when each build is committed (its first commit period).

Lead times: a new route's is its candidate's ``lead_time_quarters``; a link upgrade's is the scenario parameter
``upgrade_lead_quarters`` (:data:`backbone.model.DEFAULT_PARAMETERS`, the links table has none), for a roadmap
its option ``upgrade_lead_quarters``; ``lead_time_from`` says which. A plan written before upgrades carried a lead
time gets the scenario parameter of its ``scenario_after``.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from backbone.compare.inputs import ComparedInput
from backbone.report_roadmap import NETWORK_BUILD_ACTIONS

__all__ = ["CHANGEOVER_COLUMNS", "FAILURE_COLUMNS", "PURCHASE_COLUMNS", "changeover", "failure_changes", "plan_purchases"]

logger = logging.getLogger(__name__)

FAILURE_COLUMNS: tuple[str, ...] = ("scenario", "change", "survived_before", "survived_after",
                                    "impact_before_gbps", "impact_after_gbps", "impact_delta_gbps",
                                    "mlu_before", "mlu_after")
"""Columns of the per-failure table; ``before``/``after`` are the two plans (each after its own upgrades)."""

CHANGEOVER_COLUMNS: tuple[str, ...] = ("order", "commit", "link", "action", "change", "kind", "modules_before",
                                       "modules_after", "added_gbps", "cost_usd", "cost_delta_usd",
                                       "lead_time_quarters", "lead_time_from", "protects")
"""Columns of the changeover list."""

TOL_GBPS = 1e-6
"""Impacts closer than this are the same."""


def _after_states(side: ComparedInput) -> pd.DataFrame:
    rows = side.document("plan").get("before_after") or []
    frame = pd.DataFrame(rows, columns=["scenario", "survived_after", "impact_gbps_after", "mlu_after"])
    return frame.set_index("scenario")


def failure_changes(a: ComparedInput, b: ComparedInput) -> pd.DataFrame:
    """Failure states whose outcome changed between plan ``a`` and plan ``b``.

    ``change`` is ``newly survived`` (``b`` survives what ``a`` did not), ``newly broken``, ``impact
    changed`` (same outcome, different impact), ``only before`` or ``only after`` (a state swept by one plan);
    newly broken first, then by the size of the impact change.
    """
    if a.kind != "plan" or b.kind != "plan":
        return pd.DataFrame(columns=list(FAILURE_COLUMNS))
    sa, sb = _after_states(a), _after_states(b)
    ids = sa.index.union(sb.index, sort=False)
    before_ok = sa["survived_after"].reindex(ids)
    after_ok = sb["survived_after"].reindex(ids)
    ib = pd.to_numeric(sa["impact_gbps_after"], errors="coerce").reindex(ids)
    ia = pd.to_numeric(sb["impact_gbps_after"], errors="coerce").reindex(ids)
    delta = ia - ib
    only_before, only_after = after_ok.isna() & before_ok.notna(), before_ok.isna() & after_ok.notna()
    both = before_ok.notna() & after_ok.notna()
    was, now = before_ok.fillna(False).astype(bool), after_ok.fillna(False).astype(bool)
    change = np.select(
        [only_before, only_after, both & now & ~was, both & was & ~now, both & (delta.abs() > TOL_GBPS)],
        ["only before", "only after", "newly survived", "newly broken", "impact changed"], default="")
    out = pd.DataFrame({"scenario": ids, "change": change, "survived_before": before_ok.to_numpy(dtype=object),
                        "survived_after": after_ok.to_numpy(dtype=object), "impact_before_gbps": ib.to_numpy(),
                        "impact_after_gbps": ia.to_numpy(), "impact_delta_gbps": delta.to_numpy(),
                        "mlu_before": pd.to_numeric(sa["mlu_after"], errors="coerce").reindex(ids).to_numpy(),
                        "mlu_after": pd.to_numeric(sb["mlu_after"], errors="coerce").reindex(ids).to_numpy()})
    out = out[out["change"] != ""]
    rank = out["change"].map({"newly broken": 0, "newly survived": 1}).fillna(2)
    out = out.iloc[np.lexsort((-out["impact_delta_gbps"].abs().fillna(0.0).to_numpy(), rank.to_numpy()))]
    return out.reset_index(drop=True)[list(FAILURE_COLUMNS)]


LEAD_FROM_CANDIDATE = "candidate route"
LEAD_FROM_PARAMETER = "scenario upgrade_lead_quarters"
LEAD_FROM_ROADMAP = "roadmap upgrade_lead_quarters"
"""Where a purchase's lead time comes from (``lead_time_from``)."""

PURCHASE_COLUMNS = ["link", "action", "kind", "modules", "added_gbps", "cost_usd", "lead_time_quarters",
                    "lead_time_from", "commit", "commit_key", "protects"]
"""A side's purchases (:func:`plan_purchases`); ``commit_key`` orders the commits (smaller is earlier)."""


def plan_purchases(upgrades: list[dict[str, Any]], upgrade_lead_quarters: float) -> pd.DataFrame:
    """A plan's purchases (``design.json`` ``upgrades``) with their lead time and commit quarter, in commit order
    (earliest commit first, then the largest cost), indexed by link or route (columns :data:`PURCHASE_COLUMNS`).

    A link upgrade without a lead time of its own (a plan written before upgrades carried one) gets
    ``upgrade_lead_quarters``, the scenario parameter. ``commit`` is ``Q-<lead>``: quarters before the capacity is
    needed.
    """
    frame = pd.DataFrame(upgrades or [], columns=[c for c in PURCHASE_COLUMNS if c not in ("commit", "commit_key")])
    lead = pd.to_numeric(frame["lead_time_quarters"], errors="coerce")
    missing = lead.isna() & (frame["action"] == "upgrade")
    lead = lead.where(~missing, float(upgrade_lead_quarters))
    source = frame["lead_time_from"].where(frame["lead_time_from"].notna(), np.where(
        frame["action"] == "new route", LEAD_FROM_CANDIDATE, LEAD_FROM_PARAMETER))
    frame = frame.assign(lead_time_quarters=lead, lead_time_from=source,
                         commit=["–" if pd.isna(v) else f"Q-{v:.0f}" for v in lead], commit_key=-lead.fillna(0.0),
                         protects=frame["protects"].map(lambda v: ";".join(map(str, v)) if isinstance(v, list)
                                                        else v or ""))
    return _commit_order(frame).set_index("link")


def _commit_order(frame: pd.DataFrame) -> pd.DataFrame:
    order = np.lexsort((-pd.to_numeric(frame["cost_usd"], errors="coerce").fillna(0.0).to_numpy(dtype=float),
                        frame["commit_key"].to_numpy(dtype=float)))
    return frame.iloc[order]


def _roadmap_purchases(doc: dict[str, Any]) -> pd.DataFrame:
    builds = pd.DataFrame(doc.get("builds") or [],
                          columns=["id", "action", "kind", "modules", "added_gbps", "cost_usd", "lead_time_quarters",
                                   "committed", "committed_index"])
    builds = builds[builds["action"].isin(NETWORK_BUILD_ACTIONS)] if len(builds) else builds  # links, not GPUs/storage
    frame = builds.groupby("id", sort=False).agg(
        action=("action", "first"), kind=("kind", "first"), modules=("modules", "sum"),
        added_gbps=("added_gbps", "sum"), cost_usd=("cost_usd", "sum"),
        lead_time_quarters=("lead_time_quarters", "max"), commit=("committed", "min"),
        commit_key=("committed_index", "min")).reset_index().rename(columns={"id": "link"})
    frame["commit"] = frame["commit"].astype(str)
    key = pd.to_numeric(frame["commit_key"], errors="coerce")  # the period's index; else its label's rank
    frame["commit_key"] = key.fillna(frame["commit"].rank(method="dense") - 1e6)
    frame["lead_time_from"] = np.where(frame["action"] == "new route", LEAD_FROM_CANDIDATE, LEAD_FROM_ROADMAP)
    frame["protects"] = "first commit " + frame["commit"]
    return _commit_order(frame[PURCHASE_COLUMNS]).set_index("link")


def _purchases(side: ComparedInput) -> pd.DataFrame:
    """A side's purchases, one row per link or route (columns :data:`PURCHASE_COLUMNS` but ``link``)."""
    if side.kind == "plan":
        return plan_purchases(side.document("design").get("upgrades") or [],
                              side.network.parameters["upgrade_lead_quarters"])
    if side.kind == "roadmap":
        return _roadmap_purchases(side.document("roadmap"))
    return pd.DataFrame(columns=PURCHASE_COLUMNS).set_index("link")


def changeover(a: ComparedInput, b: ComparedInput) -> pd.DataFrame:
    """What ``b`` buys differently from ``a``, in the order a planner commits it (earliest ``commit`` first, then
    the largest cost; see the module doc): ``change`` ``new`` (only ``b`` buys it), ``more modules``, ``fewer
    modules`` or ``dropped`` (only ``a`` buys it). ``cost_usd`` is ``b``'s cost of the item (``a``'s for a dropped
    one), ``cost_delta_usd`` ``b``'s minus ``a``'s; ``lead_time_quarters`` with ``lead_time_from``. For a roadmap
    (its ``builds``, GPU blocks left out, summed per link over the periods) ``commit`` is the first commit period
    and ``protects`` says it too."""
    pa, pb = _purchases(a), _purchases(b)
    ids = pa.index.union(pb.index, sort=False)
    if not len(ids):
        return pd.DataFrame(columns=list(CHANGEOVER_COLUMNS))
    info = (pb.combine_first(pa) if len(pa) and len(pb) else pb if len(pb) else pa).reindex(ids)
    mb = pd.to_numeric(pa["modules"], errors="coerce").reindex(ids).fillna(0.0)
    ma = pd.to_numeric(pb["modules"], errors="coerce").reindex(ids).fillna(0.0)
    cb = pd.to_numeric(pa["cost_usd"], errors="coerce").reindex(ids).fillna(0.0)
    ca = pd.to_numeric(pb["cost_usd"], errors="coerce").reindex(ids).fillna(0.0)
    change = np.select([(mb == 0) & (ma > 0), (ma == 0) & (mb > 0), ma > mb, ma < mb],
                       ["new", "dropped", "more modules", "fewer modules"], default="")
    out = pd.DataFrame({"link": ids, "action": info["action"].to_numpy(), "change": change,
                        "kind": info["kind"].to_numpy(), "modules_before": mb.to_numpy(),
                        "modules_after": ma.to_numpy(), "added_gbps": info["added_gbps"].to_numpy(dtype=float),
                        "cost_usd": np.where(change == "dropped", cb, ca), "cost_delta_usd": (ca - cb).to_numpy(),
                        "lead_time_quarters": pd.to_numeric(info["lead_time_quarters"], errors="coerce").to_numpy(),
                        "lead_time_from": info["lead_time_from"].to_numpy(dtype=object),
                        "commit": info["commit"].to_numpy(dtype=object),
                        "commit_key": pd.to_numeric(info["commit_key"], errors="coerce").fillna(0.0).to_numpy(),
                        "protects": info["protects"].to_numpy(dtype=object)})
    out = _commit_order(out[out["change"] != ""])
    out.insert(0, "order", np.arange(1, len(out) + 1))
    return out.reset_index(drop=True)[list(CHANGEOVER_COLUMNS)]
