"""Failure states no flow crosses: the intact routing kept, untouched by the failure.

A state whose failed links carry no flow of the traffic it offers in the intact min-MLU routing leaves that routing
feasible: every path it uses survives, with its capacity and latency. So, for a sweep that asks only "is the state
carried within capacity and SLO?" (a quick sweep: ``shortfall=False``, ``exact_mlu=False``), the state provably
survives with the intact routing's figures, and no solve is needed:

* the routing is the intact one restricted to the demands the state offers (its paused classes leave it); its
  loads ``load_l = sum_p P[p,l] f_p`` over the kept paths ``p``, per direction, are recomputed from the intact
  routing's path table, so ``mlu`` is that routing's utilisation -- an upper bound on the state's optimum, not the
  optimum (the record says so: ``untouched``, and the routing's notes);
* ``mlu_lower_bound`` is the intact routing's proven bound when the state offers every intact demand (failing links
  never lowers the optimum, so it still bounds the state), and none when some class pauses;
* every demand keeps its paths, so its latency and its unmet Gbps (by reason) are the intact ones: nothing is
  unmet beyond the baseline, no SLO is newly violated, no latency inflates.

With ``verify`` the independent TE checker (:func:`backbone.solver.checks.te.check_te`) checks the kept routing on
the failed network by its own reasoning, as any state's: every path over existing links (a path over a failed link
is an unknown link there), loads recomputed from the paths within capacity, SLOs, reasons and the figures.

The rule applies only to cut links (no failed site, no derate), to the ``path`` engine (its routing lists its
paths), to an intact state within capacity whose unmet traffic is measured, and when the path table reproduces the
intact routing's link loads (:attr:`UntouchedRule.exact`). A state it does not settle is solved as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from backbone.solver.failures.impact import StateAssessment

if TYPE_CHECKING:
    from backbone.solver.te.summary import TERecord

__all__ = ["LOAD_TOL_GBPS", "UNTOUCHED_NOTE", "UntouchedRule"]

UNTOUCHED_NOTE = "intact routing kept: no flow crosses the failed links (its MLU bounds the state's optimum above)"
"""The note an untouched state's routing carries."""

LOAD_TOL_GBPS = 1e-6
"""Gbps: a path's flow above this counts as crossing a link; the path table's loads must match the links' within it
(relative to the link's capacity, at least this absolute)."""


@dataclass(frozen=True)
class UntouchedRule:
    """The intact routing's hops, once per sweep: which demand's flow crosses which link in which direction.

    Attributes
    ----------
    hops
        One row per (path, link) of the intact routing: ``demand``, ``link``, ``forward`` (from the link's
        ``site_a``), ``gbps``.
    exact
        Whether the hops reproduce the intact routing's ``flow_ab_gbps``/``flow_ba_gbps`` on every link (the rule
        is used only then).
    """

    hops: pd.DataFrame
    exact: bool
    carrying: frozenset[str] = frozenset()
    """The links some flow of an offered demand (not in ``paused``) crosses."""

    @classmethod
    def build(cls, baseline: StateAssessment, paused: pd.Index | None = None) -> UntouchedRule:
        """The hops of ``baseline``'s routing, whether they reproduce its link loads, and the links carrying flow of
        a demand not in ``paused`` (the demands a failure state does not offer)."""
        routing = baseline.routing
        paths = routing.paths
        if paths.empty or not {"path_links", "path_sites", "gbps", "demand"} <= set(paths.columns):
            return cls(pd.DataFrame(columns=["demand", "link", "forward", "gbps"]), paths.empty)
        paths = paths[(paths["gbps"].astype(float) > LOAD_TOL_GBPS) & (paths["path_links"].astype(str) != "")]
        table = pd.DataFrame({"demand": paths["demand"].astype(str).to_numpy(),
                              "gbps": paths["gbps"].astype(float).to_numpy(),
                              "link": paths["path_links"].astype(str).str.split(";").to_numpy(),
                              "from_site": paths["path_sites"].astype(str).str.split(">").str[:-1].to_numpy()})
        if len(table) and not bool((table["link"].map(len) == table["from_site"].map(len)).all()):
            return cls(pd.DataFrame(columns=["demand", "link", "forward", "gbps"]), False)
        hops = table.explode(["link", "from_site"], ignore_index=True) if len(table) else table
        links = routing.links
        known = hops["link"].isin(links.index)
        site_a = links["site_a"].reindex(hops["link"]).to_numpy()
        hops = pd.DataFrame({"demand": hops["demand"].to_numpy(), "link": hops["link"].to_numpy(),
                             "forward": hops["from_site"].to_numpy() == site_a, "gbps": hops["gbps"].to_numpy(float)})
        ab, ba = _directed_loads(hops, links.index)
        cap = links["capacity_gbps"].astype(float).to_numpy()
        tol = np.maximum(LOAD_TOL_GBPS, 1e-6 * cap)
        exact = bool(known.all()) and bool(
            (np.abs(ab - links["flow_ab_gbps"].astype(float).to_numpy()) <= tol).all()
            and (np.abs(ba - links["flow_ba_gbps"].astype(float).to_numpy()) <= tol).all())
        offered = hops["demand"].isin(paused) if paused is not None and len(paused) else None
        carrying = frozenset(hops["link"] if offered is None else hops["link"][~offered.to_numpy()])
        return cls(hops, exact, carrying)

    def crossed(self, failed_links: Sequence[str], offered: pd.Index | None = None) -> bool:
        """Whether some flow of a demand in ``offered`` (default: every demand not paused) crosses one of
        ``failed_links`` in the intact routing."""
        if offered is None:
            return not self.carrying.isdisjoint(failed_links)
        on = self.hops["link"].isin(list(failed_links)) & self.hops["demand"].isin(offered)
        return bool(on.any())

    def state(self, baseline: StateAssessment, failed_links: Sequence[str], links: pd.DataFrame,
              offered: pd.Index) -> StateAssessment | None:
        """The failure state's assessment with the intact routing kept, or None when the rule does not settle it.

        Parameters
        ----------
        baseline
            The intact network's assessment (within capacity, unmet measured).
        failed_links
            The links cut.
        links
            The failed network's links table (the failed links gone).
        offered
            The demands the state offers (paused classes and lost demands left out).
        """
        if not self.exact or baseline.overloaded or not baseline.unmet_known or self.crossed(failed_links):
            return None  # (the cheap test first: the links carrying a demand not paused)
        if self.crossed(failed_links, offered):
            return None
        routing = baseline.routing
        kept = self.hops[self.hops["demand"].isin(offered)]
        ab, ba = _directed_loads(kept, links.index)
        cap = links["capacity_gbps"].astype(float).to_numpy()
        util = np.where(cap > 0, np.maximum(ab, ba) / np.where(cap > 0, cap, 1.0), 0.0)
        table = routing.links.reindex(links.index).copy()
        table["capacity_gbps"] = cap
        table["flow_ab_gbps"], table["flow_ba_gbps"], table["utilisation"] = ab, ba, util
        mlu = float(util.max()) if util.size else 0.0
        every_demand = len(offered) == len(routing.demands.index)
        bound = routing.summary.lower_bound if every_demand else None
        gap = (mlu - bound) / mlu if bound is not None and mlu > 0 else None
        demands = routing.demands.loc[offered]
        paths = routing.paths[routing.paths["demand"].astype(str).isin(offered)]
        summary = routing.summary.updated(**_figures(routing.summary, demands, paths, mlu), lower_bound=bound,
                                          gap=gap, notes=[*routing.summary.notes, UNTOUCHED_NOTE])
        kept_routing = replace(routing, links=table, demands=demands, paths=paths, summary=summary,
                               verification=None, model=None)
        return StateAssessment(routing=kept_routing, unmet_gbps=baseline.unmet_gbps.loc[offered],
                               reason=baseline.reason.loc[offered], traffic_class=baseline.traffic_class.loc[offered],
                               mlu=mlu, status=baseline.status, solves=(), method=baseline.method)


def _figures(summary: TERecord, demands: pd.DataFrame, paths: pd.DataFrame, mlu: float) -> dict[str, Any]:
    """The record's figures for the kept routing over the offered ``demands`` (the same definitions as the routing's:
    the tables' MLU, carried and unmet Gbps, traffic-weighted latency, and the min-MLU objective's value)."""
    carried = float(demands["carried_gbps"].sum())
    routed = float(demands["routed_gbps"].sum()) if "routed_gbps" in demands else carried
    out: dict[str, Any] = {"mlu": mlu, "carried_gbps": carried, "unmet_gbps": float(demands["unmet_gbps"].sum())}
    if summary.weighted_latency_ms is not None and routed > 0:
        out["weighted_latency_ms"] = float((paths["gbps"] * paths["latency_ms"]).sum()) / routed
    if summary.objective in ("min-mlu", "ecmp") and summary.objective_value is not None:
        out["objective_value"] = mlu
    return out


def _directed_loads(hops: pd.DataFrame, link_index: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """Gbps per link from ``site_a`` and towards it (``sum_p P[p,l] f_p`` per direction), in ``link_index`` order."""
    by = hops.groupby(["link", "forward"])["gbps"].sum()
    if by.empty:
        zero = np.zeros(len(link_index))
        return zero, zero.copy()
    table = by.unstack("forward", fill_value=0.0)
    ab = table[True] if True in table.columns else pd.Series(0.0, index=table.index)
    ba = table[False] if False in table.columns else pd.Series(0.0, index=table.index)
    return ab.reindex(link_index, fill_value=0.0).to_numpy(float), ba.reindex(link_index, fill_value=0.0).to_numpy(float)
