"""The sweep's result: scenario records, the tables planners read, and :func:`sweep` that produces them."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backbone.failure_policy import class_failure_policy
from backbone.model import Network
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.failures.engines import dask_cluster, execute_sweep, worker_context
from backbone.solver.failures.impact import OVERLOAD_TOL, impact_key
from backbone.solver.failures.options import FailureOptions
from backbone.solver.failures.records import ScenarioRecord, SweepBaseline
from backbone.solver.failures.scenarios import enumerate_scenarios, implicit_groups, implicit_groups_note
from backbone.solver.failures.summary import FailuresSummary, SweepEngineInfo


@dataclass
class SweepResult:
    """Scenario records plus the tables planners read.

    Attributes
    ----------
    scenarios
        One record per scenario, in the order the scenarios were enumerated.
    baseline
        The intact network's figures.
    seconds
        Wall-clock time of the sweep, the baseline's solve included.
    failure_policy
        Each traffic class's failure policy in the sweep (:func:`backbone.failure_policy.class_failure_policy`):
        a pausing class is not offered in a failure state (``paused_gbps``).
    ran_on
        Where the states were evaluated (:class:`~backbone.solver.failures.summary.SweepEngineInfo`: the engine, the
        Dask scheduler, worker processes and threads); None when no state was swept.
    """

    scenarios: list[ScenarioRecord]
    baseline: SweepBaseline
    seconds: float
    failure_policy: dict[str, str] = field(default_factory=dict)
    ran_on: SweepEngineInfo | None = None

    def table(self) -> pd.DataFrame:
        """One row per scenario, worst impact first (impact, unmet + SLO, MLU, p99 inflation)."""
        df = scenario_table(self.scenarios)
        return worst_first(df)

    def state_utilisation(self) -> pd.DataFrame:
        """Every failure state's per-link utilisation, long (``failures_state_links.csv``): columns ``scenario``,
        ``link``, ``utilisation`` -- the figure each record carries (the one utilisation definition, by
        :func:`~backbone.solver.failures.impact.assess_state`), scenarios worst first as in :meth:`table`, links in
        each record's order. A state with no utilisation recorded has no rows.

        Example
        -------
        >>> sweep_result.state_utilisation().query("scenario == 'srlg:cable-marea'")  # doctest: +SKIP
        """
        records = self.worst_first()
        counts = np.array([len(r.link_utilisation) for r in records], dtype=int)
        if counts.sum() == 0:
            return pd.DataFrame({"scenario": pd.Series(dtype=str), "link": pd.Series(dtype=str),
                                 "utilisation": pd.Series(dtype=float)})
        return pd.DataFrame({
            "scenario": np.repeat([r.scenario for r in records], counts),
            "link": np.concatenate([np.asarray(list(r.link_utilisation), dtype=object) for r in records]),
            "utilisation": np.concatenate([np.fromiter(r.link_utilisation.values(), dtype=float,
                                                       count=len(r.link_utilisation)) for r in records]),
        })

    def worst_by_link(self) -> pd.DataFrame:
        """Per link: the highest utilisation over all scenarios and the scenario that drives it."""
        if not self.scenarios:
            return pd.DataFrame(columns=["link", "worst_utilisation", "worst_scenario", "baseline_utilisation"])
        util = pd.DataFrame({r.scenario: r.link_utilisation for r in self.scenarios})
        worst = util.max(axis=1)
        arg = util.fillna(-1.0).idxmax(axis=1)
        base = pd.Series(self.baseline.link_utilisation, dtype=float)
        out = pd.DataFrame({"worst_utilisation": worst, "worst_scenario": arg,
                            "baseline_utilisation": base.reindex(util.index)})
        return out.rename_axis("link").reset_index().sort_values("worst_utilisation", ascending=False,
                                                                  kind="stable")

    def worst_first(self) -> list[ScenarioRecord]:
        """The records, worst impact first in the table's one order (:func:`worst_first`, ties by scenario id): the
        order of ``failures.json``'s ``scenarios``."""
        return _in_table_order(self.scenarios, self.table())

    def summary(self, top: int = 20) -> dict[str, Any]:
        """The JSON summary's document (:meth:`typed_summary` dumped)."""
        return self.typed_summary(top).document()

    def typed_summary(self, top: int = 20) -> FailuresSummary:
        """The :class:`~backbone.solver.failures.summary.FailuresSummary`: every scenario (worst first), the ``top``
        worst ones, per-link worst, and the map values."""
        table = self.table()
        by_link = self.worst_by_link()
        worst = max(self.scenarios, key=lambda r: impact_key(r.impact)) if self.scenarios else None
        # every scenario in :meth:`worst_first` order, in failures.json and --json alike
        records = [{k: v for k, v in r.to_dict().items() if k != "link_utilisation"}
                   for r in _in_table_order(self.scenarios, table)]
        survived, unknown, gaps, restricted, undecided = _counts(self.scenarios)
        return FailuresSummary(
            status="ok",
            method=self.baseline.impact.method,
            scenarios_run=len(self.scenarios),
            survived=survived,
            not_survived=len(self.scenarios) - survived,
            overloaded=sum(1 for r in self.scenarios if r.impact.overloaded),
            unmet_unknown=unknown,
            max_gap=max(gaps) if gaps else None,
            overload_not_proven=undecided,
            path_lp_states=restricted,
            notes=sweep_notes(len(self.scenarios), unknown, undecided, self.baseline, restricted, gaps)
                  + [n for n in (implicit_groups_note(self.scenarios), paused_note(self.scenarios,
                                                                                   self.failure_policy),
                                 untouched_note(self.scenarios)) if n],
            failure_policy=dict(self.failure_policy),
            paused_states=sum(1 for r in self.scenarios if r.impact.paused_gbps > 0),
            untouched_states=sum(1 for r in self.scenarios if r.untouched),
            links_swept_as_own_group=implicit_groups(self.scenarios),
            seconds=self.seconds,
            scenarios_per_second=len(self.scenarios) / self.seconds if self.seconds > 0 else None,
            baseline=self.baseline.figures(),
            worst=table.head(top).to_dict("records"),
            scenarios=records,
            worst_by_link=by_link.head(top).to_dict("records"),
            ran_on=self.ran_on,
            map={
                "link_values": {"utilisation": {str(r.link): float(r.worst_utilisation)
                                                for r in by_link.itertuples() if np.isfinite(r.worst_utilisation)}},
                "failed_links": list(worst.failed) if worst and worst.kind == "link" else [],
                "title": f"Worst utilisation over {len(self.scenarios)} failure scenarios",
            },
        )


def _in_table_order(records: list[ScenarioRecord], table: pd.DataFrame) -> list[ScenarioRecord]:
    rank = {str(sid): i for i, sid in enumerate(table["scenario"])}
    return sorted(records, key=lambda r: rank[r.scenario])


def _counts(scenarios: list[ScenarioRecord]) -> tuple[int, int, list[float], int, int]:
    """Survived, unmet unknown, every known gap, path-LP-only (:attr:`ScenarioRecord.path_lp_only
    <backbone.solver.failures.records.ScenarioRecord.path_lp_only>`) and overload not proven."""
    impacts = [r.impact for r in scenarios]
    survived = sum(1 for i in impacts if i.survived)
    unknown = sum(1 for i in impacts if math.isnan(i.unmet_gbps))
    gaps = [i.gap for i in impacts if not math.isnan(i.gap)]
    restricted = sum(1 for r in scenarios if r.path_lp_only)
    undecided = sum(1 for i in impacts if i.overloaded and i.mlu_lower_bound <= 1 + OVERLOAD_TOL)
    return survived, unknown, gaps, restricted, undecided


def untouched_note(scenarios: list[ScenarioRecord]) -> str:
    """What the states no offered flow crosses report (empty when there are none)."""
    n = sum(1 for r in scenarios if r.untouched)
    if not n:
        return ""
    return (f"{n} of {len(scenarios)} scenarios fail only links no offered flow crosses in the intact routing: that "
            "routing is kept (no solve), so they survive with its latencies and nothing unmet; their MLU is that "
            "routing's, an upper bound on the state's optimum")


def sweep_notes(scenarios: int, unknown: int, undecided: int, baseline: SweepBaseline, restricted: int = 0,
                gaps: list[float] | None = None) -> list[str]:
    """What the sweep's headline numbers do not cover: unknown unmet traffic, overload not proven, the engine,
    states whose MLU is the path LP's (``restricted`` of them; ``gaps``: every state's gap)."""
    notes = []
    if restricted:
        notes.append(f"{restricted} of {scenarios} scenarios are carried within capacity by the path LP over the "
                     "candidate paths, so column generation did not run for them (it runs where it can change the "
                     "verdict; exact_mlu runs it for every state): their MLU is that routing's, within its proven "
                     f"gap of the optimum over every path (at most {100 * max(gaps or [0.0]):.1f} %)")
    if baseline.impact.method == "srcflow":
        notes.append("method srcflow: each state's MLU is the source-flow engine's routing over every path, within "
                     "its reported gap of the optimum (mlu_lower_bound is proven); latency SLOs are not routed")
    if unknown:
        notes.append(f"{unknown} of {scenarios} scenarios are overloaded with their shortfall not measured: their "
                     "unmet and impact are unknown (null), not 0, and they count as not survived")
    if undecided:
        notes.append(f"{undecided} overloaded scenarios have a lower bound <= 100 %: a better routing might fit them "
                     "(lower gap_tol or raise time_limit_s to decide)")
    if not baseline.impact.unmet_known:
        notes.append("the intact network is overloaded with its shortfall not measured: its unmet is unknown")
    return notes


def paused_note(records: Sequence[ScenarioRecord], policy: dict[str, str]) -> str:
    """What the sweep paused: the classes whose failure policy is to pause and the states where their demand was
    not offered ("" when no state paused any)."""
    paused = [r.impact.paused_gbps for r in records if r.impact.paused_gbps > 0]
    if not paused:
        return ""
    classes = ", ".join(c for c, p in policy.items() if p == "pause") or "none"
    return (f"{len(paused)} of {len(records)} scenarios pause up to {max(paused):,.1f} Gbps of the classes whose "
            f"failure policy is to pause ({classes}): not offered in the failure state, so neither unmet nor "
            "carried (paused_gbps); survival counts only the offered demand")


SCENARIO_COLUMNS = ("scenario", "kind", "failed", "status", "impact_gbps", "unmet_gbps", "slo_violation_gbps",
                    "lost_gbps", "paused_gbps", "mlu", "mlu_lower_bound", "gap", "overloaded", "survived", "slo_violations",
                    "unmet_disconnected_gbps",
                    "unmet_gbps_total", "p50_latency_inflation_ms", "p99_latency_inflation_ms",
                    "worst_latency_inflation_ms", "seconds")
"""Columns of the per-scenario table (``failures_scenarios.csv``); ``unmet_<class>_gbps`` follow."""


def scenario_table(records: Sequence[ScenarioRecord]) -> pd.DataFrame:
    """Scenario records as a table (``failed`` joined by ``;``, unmet per class as columns)."""
    from backbone.schema import TRAFFIC_CLASSES

    rows = [r.to_dict() for r in records]
    df = pd.DataFrame([{c: row[c] for c in SCENARIO_COLUMNS} for row in rows], columns=list(SCENARIO_COLUMNS))
    df["failed"] = df["failed"].map(lambda x: ";".join(x))
    for c in TRAFFIC_CLASSES:  # unknown (NaN) where the scenario's unmet is
        df[f"unmet_{c}_gbps"] = [float(r.impact.unmet_by_class.get(c, 0.0)) + 0.0 * r.impact.unmet_gbps
                                 for r in records]
    return df


def worst_first(df: pd.DataFrame) -> pd.DataFrame:
    """Sort scenario rows by impact, worst first: unknown impact (overloaded, shortfall not measured) first, by
    MLU; ties by scenario id for stability."""
    unknown = df["impact_gbps"].isna()
    out = df.assign(_unknown=unknown).sort_values(
        ["_unknown", "impact_gbps", "unmet_gbps", "mlu", "p99_latency_inflation_ms", "scenario"],
        ascending=[False, False, False, False, False, True], kind="stable")
    return out.drop(columns="_unknown").reset_index(drop=True)


def sweep(net: Network, options: FailureOptions, progress: ProgressFn | None = None) -> SweepResult:
    """Enumerate the failure set, evaluate the baseline and every scenario, and collect results."""
    progress = progress or no_progress
    t0 = time.perf_counter()
    scenarios = enumerate_scenarios(net, options.kind, options.derate, options.scenarios, options.max_scenarios)

    def sub(f: float, m: str) -> None:
        progress(0.05 + 0.93 * f, m)

    with dask_cluster(options if scenarios else options.model_copy(update={"engine": "serial"})) as cluster:
        # connected (engine dask) before the baseline's solve: a scheduler that is not there fails the sweep at once
        progress(0.02, f"baseline of {len(scenarios)} scenarios")
        ctx = worker_context(net, options, lambda f, m: progress(0.02 + 0.03 * f, f"baseline: {m}"))
        baseline = ctx.baseline_record()
        records, ran_on = execute_sweep(net, scenarios, options, sub, ctx, cluster)
    progress(1.0, "done")
    return SweepResult(records, baseline, time.perf_counter() - t0,
                       class_failure_policy(net.meta, options.failure_policy), ran_on)
