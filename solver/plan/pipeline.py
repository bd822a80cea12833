"""The plan's pipeline stages that are algorithms: the placement's hand-over to routing and the upgrade stage.

* the scenario with the plan's demand growth (:func:`grown_network`);
* the traffic a placement puts on the backbone (:func:`placement_demands`) and the network after the placement
  (:func:`network_after_placement`), which the route stage takes;
* the upgrade stage (:func:`plan_upgrades`): the survivable design against the failure states
  :mod:`backbone.solver.plan.states` selects, its result as an :class:`UpgradeStage`, and each failure before and
  after the plan (:func:`failure_before_after`);
* the plan's overall status (:func:`overall_status`).

The plan's task (:mod:`backbone.solver.tasks.plan`) chains these with the other tasks; the stage options are in
:mod:`backbone.solver.plan.stage_options`, the failure-state selection in :mod:`backbone.solver.plan.states` and the
report's data, maps and charts in :mod:`backbone.solver.plan.report_data`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd

from backbone.errors import InfeasibleError
from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.design.summary import PlanDesign, SurvivableDesignSummary, UnbuiltDesign, built_design
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.failures.options import FailureOptions
from backbone.solver.plan.records import FailureBeforeAfter
from backbone.solver.plan.stage_options import PlanUpgradeOptions
from backbone.solver.plan.states import initial_design_states, survivability_summary

__all__ = ["UPGRADE_COLUMNS", "StageStatuses", "UpgradeStage", "failure_before_after", "grown_network",
           "network_after_placement", "overall_status", "placement_demands", "plan_upgrades"]

if TYPE_CHECKING:
    from backbone.solver.failures.records import ScenarioRecord

logger = logging.getLogger(__name__)


def grown_network(net: Network, demand_growth: float) -> Network:
    """``net`` with inference and traffic demand multiplied by ``demand_growth``."""
    work = net
    if demand_growth != 1.0:
        from dataclasses import replace

        m = work.metros.copy()
        m["inference_gpus"] = m["inference_gpus"] * demand_growth
        work = replace(work.scale_demand(demand_growth), metros=m)
    return work


def placement_demands(flows: pd.DataFrame, slo_by_class: dict[str, float]) -> pd.DataFrame:
    """Backbone traffic created by a placement: serving site -> metro access site, per class.

    ``flows`` is the placement's ``flows`` table (``period``, ``site``, ``access_site``,
    ``class``, ``gbps``); the busiest period is taken. Rows where the site is the access site
    carry no backbone traffic.
    """
    cols = ["src", "dst", "demand_gbps", "traffic_class", "slo_rtt_ms"]
    if flows.empty:
        return pd.DataFrame(columns=cols)
    remote = flows[flows["site"] != flows["access_site"]]
    if remote.empty:
        return pd.DataFrame(columns=cols)
    per_period = remote.groupby(["period", "site", "access_site", "class"], sort=True)["gbps"].sum().reset_index()
    peak = per_period.groupby(["site", "access_site", "class"], sort=True)["gbps"].max().reset_index()
    out = pd.DataFrame({
        "src": peak["site"].to_numpy(), "dst": peak["access_site"].to_numpy(),
        "demand_gbps": np.round(peak["gbps"].to_numpy(float), 6), "traffic_class": "inference",
        "slo_rtt_ms": peak["class"].map(slo_by_class).to_numpy(float),
    }, index=pd.Index([f"place:{s}>{a}:{c}" for s, a, c in zip(peak["site"], peak["access_site"], peak["class"],
                                                                strict=True)], name="id"))
    return out[out["demand_gbps"] > 0]


def network_after_placement(net: Network, sites: pd.DataFrame, extra_demands: pd.DataFrame) -> Network:
    """``net`` with the placement's GPUs and MW installed and its traffic added to the demands."""
    from dataclasses import replace

    s = net.sites.copy()
    if len(sites):
        added = sites["gpus_added"].reindex(s.index).fillna(0.0)
        s["gpus_installed"] = (s["gpus_installed"] + added.round().astype("int64")).astype("int64")
        mw = sites["mw_after"].reindex(s.index)
        s["power_available_mw"] = np.where(mw.notna(), np.maximum(s["power_available_mw"], mw.fillna(0.0)),
                                           s["power_available_mw"])
    demands = pd.concat([net.demands, extra_demands.reindex(columns=net.demands.columns)]) if len(extra_demands) \
        else net.demands
    return replace(net, sites=s, demands=demands)


@dataclass(frozen=True)
class StageStatuses:
    """The status each solving stage of a plan reported (its summary's ``status``), gathered once."""

    place: str
    """The placement's: ``optimal``, ``feasible``, ``partial`` (demand left unserved), ..."""
    route: str
    """The routing (TE) stage's."""
    failures: str
    """The failure sweep's."""
    upgrades: str
    """The upgrade stage's: the design's, or ``skipped`` / ``infeasible`` when nothing was built."""

    OK: ClassVar[frozenset[str]] = frozenset({"optimal", "feasible", "ok", "skipped"})
    """Statuses of a stage that did its job."""

    def all_ok(self) -> bool:
        """Whether every stage's status is one of :attr:`OK`."""
        return all(s in self.OK for s in (self.place, self.route, self.failures, self.upgrades))


def overall_status(statuses: StageStatuses, survivability: Survivability) -> str:
    """``ok`` when every stage solved and the plan survives every state it does not excuse; ``partial``
    otherwise (demand left unserved, a design that did not converge, states still violated) -- the
    report says which."""
    return "ok" if statuses.all_ok() and not survivability.violated else "partial"


UPGRADE_COLUMNS = ["link", "action", "kind", "modules", "added_gbps", "cost_usd", "lead_time_quarters", "lead_time_from",
                   "protects"]
"""Columns of the upgrade stage's table (``design_upgrades.csv``)."""


@dataclass
class UpgradeStage:
    """The upgrade stage: the design's record (:data:`~backbone.solver.design.summary.PlanDesign`: the survivable
    design's summary, or an :class:`~backbone.solver.design.summary.UnbuiltDesign` with status ``skipped`` or
    ``infeasible`` when nothing was built), what it buys, the network after the plan and its failure records,
    survivability, and per-failure before and after."""

    summary: PlanDesign
    upgrades: pd.DataFrame
    network_after: Network
    records_after: list[ScenarioRecord]
    kind: str
    survivability: Survivability
    before_after: list[FailureBeforeAfter]

    @property
    def built(self) -> SurvivableDesignSummary | None:
        """The survivable design's summary when one was built, else None (:func:`~backbone.solver.design.summary.built_design`)."""
        return built_design(self.summary)

    def table(self) -> pd.DataFrame:
        """:attr:`upgrades` as ``design_upgrades.csv`` holds it (``protects`` joined by ``;``)."""
        up = self.upgrades
        return up.assign(protects=up["protects"].map(lambda x: ";".join(x))) if len(up) else up


def plan_upgrades(routed: Network, sweep_records: list[ScenarioRecord], sweep_options: FailureOptions,
                  design: PlanUpgradeOptions, kind: str, skip: bool, progress: ProgressFn) -> UpgradeStage:
    """The plan's upgrade stage: the survivable design (:func:`backbone.solver.design.survivable.iterate.design_survivable`) of
    ``routed`` surviving every ``kind`` failure, started from the failures stage's ``sweep_records`` when they
    describe those states (:func:`~backbone.solver.plan.states.initial_design_states`).

    With ``skip`` nothing is designed (status ``skipped``): the network after the plan is ``routed`` and its
    records are the sweep's, whose kind survivability reports. A design no candidate can make feasible is kept as
    a result (status ``infeasible``, its reasons), not raised.
    """
    from backbone.solver.design.survivable.iterate import design_survivable

    upgrades = pd.DataFrame(columns=UPGRADE_COLUMNS)
    ds: PlanDesign = UnbuiltDesign(status="skipped", cost_usd=0.0,
                                   message="--skip-upgrades: nothing was designed; the network after the plan is the "
                                           "network before it (placement only)")
    after = routed
    records_after = sweep_records
    designed: Survivability | None = None
    if not skip:
        initial = initial_design_states(sweep_records, kind, sweep_options.kind, sweep_options.derate)
        try:
            from backbone.solver.failures.pool import sweep_pool

            with sweep_pool(sweep_options.workers if sweep_options.engine == "local" else 1):  # one for every sweep
                dres = design_survivable(routed, design.survive_options(kind, sweep_options.k_paths),
                                         sweep_options=sweep_options, initial_records=initial, progress=progress)
            ds = dres.typed_summary()
            upgrades = dres.upgrades
            after = dres.network_after
            records_after = dres.records_after
            designed = dres.survivability()
        except InfeasibleError as exc:
            ds = UnbuiltDesign(status="infeasible", cost_usd=None, reasons=exc.reasons, message=str(exc))
    survivability = survivability_summary(sweep_options.kind if skip else kind, designed, records_after)
    before_after = failure_before_after(sweep_records, records_after)
    return UpgradeStage(ds, upgrades, after, records_after, kind, survivability, before_after)


def failure_before_after(before: list[ScenarioRecord], after: list[ScenarioRecord]) -> list[FailureBeforeAfter]:
    """Per failure: impact and utilisation the traffic needs, before and after the plan (worst first)."""
    from backbone.solver.failures.impact import impact_key

    a = {r.scenario: r.impact for r in after}
    rows = []
    for r in sorted(before, key=lambda r: (tuple(-v for v in impact_key(r.impact)), r.scenario)):  # worst first
        i, x = r.impact, a.get(r.scenario)
        rows.append(FailureBeforeAfter(scenario=r.scenario, impact_gbps_before=i.impact_gbps,
                                       unmet_gbps_before=i.unmet_gbps, mlu_before=i.mlu, survived_before=i.survived,
                                       impact_gbps_after=None if x is None else x.impact_gbps,
                                       unmet_gbps_after=None if x is None else x.unmet_gbps,
                                       mlu_after=None if x is None else x.mlu,
                                       survived_after=None if x is None else x.survived))
    return rows
