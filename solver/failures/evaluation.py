"""Evaluating one failure scenario: re-route it and measure its impact against the intact baseline."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import SolverError
from backbone.failure_policy import carried_in_failure
from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.failures.impact import (
    OVERLOAD_TOL,
    StateAssessment,
    assess_state,
    failure_impact,
    survive_tolerance_gbps,
)
from backbone.solver.failures.options import FailureOptions
from backbone.solver.failures.records import ScenarioRecord, SweepBaseline
from backbone.solver.failures.scenarios import FailureScenario
from backbone.solver.failures.untouched import UntouchedRule
from backbone.solver.te.summary import TERecord

logger = logging.getLogger("backbone.solver.failures")


INTACT_GAP_SHARE = 0.2
"""``srcflow``: the intact state is solved to this share of ``gap_tol`` (it is solved once, and a warm start is
only as close to the optimum as it; ``benchmarks/bench_world_sweep.py`` does the same)."""


def choose_method(net: Network, method: str) -> str:
    """The min-MLU engine a sweep of ``net`` runs: ``path`` or ``srcflow`` (``auto`` picks by size and SLOs).

    Raises
    ------
    ValidationError
        ``srcflow`` asked for while some routable demand has a latency SLO (the engine ignores SLOs).
    """
    from backbone.errors import Problem, ValidationError
    from backbone.solver.te import AUTO_COLGEN_MIN_DEMANDS
    from backbone.solver.te.instance import build_instance

    if method == "path":
        return method
    inst = build_instance(net)
    routable = inst.routable
    slo = routable & inst.has_slo
    if method == "auto":
        big = int(routable.sum()) >= AUTO_COLGEN_MIN_DEMANDS  # where solve_te's auto leaves the path LP too
        return "srcflow" if big and not slo.any() else "path"
    if method != "srcflow":
        raise ValidationError(Problem(f"unknown method {method!r}", table="options", field="method"))
    if slo.any():
        first = str(inst.demand_ids[np.flatnonzero(slo)[0]])
        raise ValidationError(Problem(f"method 'srcflow' routes demands without latency SLOs, but {int(slo.sum())} "
                                      f"demands have one (e.g. {first}); use method 'path'", table="options",
                                      field="method"))
    return method


@dataclass
class SweepContext:
    """What a worker keeps per network: the intact network and its baseline (assessed once).

    With ``method="srcflow"`` the baseline keeps the intact state's per-source flows (``baseline.warm``): every
    scenario's solve starts from them. ``paused`` are the demands a failure state does not offer (their class
    pauses: :func:`backbone.failure_policy.carried_in_failure` under the scenario's and the options' policy); the
    intact baseline offers them.
    """

    net: Network
    options: FailureOptions
    baseline: StateAssessment
    tolerance_gbps: float
    method: str = "path"
    paused: pd.Index = field(default_factory=lambda: pd.Index([], dtype=object))
    untouched: UntouchedRule | None = None
    """The intact routing's hops when a state no offered flow crosses is settled without a solve
    (:mod:`backbone.solver.failures.untouched`: a quick sweep of the ``path`` engine, no ``exact_mlu``; ``verify``
    checks the kept routing like any state's); None otherwise."""

    @classmethod
    def build(cls, net: Network, options: FailureOptions, progress: ProgressFn | None = None) -> SweepContext:
        """Assess the intact network once (this also warms the candidate-path cache, or keeps the intact flows)."""
        method = choose_method(net, options.method)
        paused = net.demands.index[~carried_in_failure(net, options.failure_policy).to_numpy()]
        base = intact_baseline(net, options, method, progress)
        quick = not (options.shortfall or options.exact_mlu)
        rule = UntouchedRule.build(base, paused) if quick and base.method == "path" else None
        return cls(net, options, base, survive_tolerance_gbps(net), method, paused, rule)

    @property
    def baseline_latency_ms(self) -> pd.Series:
        """Traffic-weighted one-way latency per demand in the intact network."""
        return self.baseline.routing.demands["latency_ms"].astype(float)

    def baseline_record(self) -> SweepBaseline:
        """The baseline's figures (the same definitions as every scenario's)."""
        return SweepBaseline.from_state(self.baseline)


_BASELINES: dict[str, StateAssessment] = {}
"""The intact baselines this process assessed last (at most :data:`BASELINES_KEPT`), by :func:`baseline_key`."""

BASELINES_KEPT = 2
"""Intact baselines kept per process: a design's quick sweep and the measurement of its overloaded states share one."""


def baseline_key(net: Network, options: FailureOptions, method: str) -> str:
    """What the intact baseline depends on: the network's tables (its fingerprint), the engine and the options its
    solve reads (``k_paths``, ``backend``, ``time_limit_s``, ``gap_tol``). Not ``shortfall``, ``exact_mlu``,
    ``verify`` or the failure policy: the baseline always measures its shortfall and offers every demand."""
    return ":".join((net.fingerprint(), method, str(options.k_paths), str(options.backend),
                     repr(float(options.time_limit_s)), repr(float(options.gap_tol))))


def intact_baseline(net: Network, options: FailureOptions, method: str,
                    progress: ProgressFn | None = None) -> StateAssessment:
    """The intact state's assessment every scenario of a sweep of ``net`` is measured against, solved once per
    :func:`baseline_key` in this process (the last :data:`BASELINES_KEPT` are kept: the solve is deterministic, so a
    quick sweep and the shortfall measurement of the same network share it). Only an optimal solve is kept."""
    key = baseline_key(net, options, method)
    base = _BASELINES.get(key)
    if base is None:
        base = _assess(net, options, method, None, shortfall=True, progress=progress)
        if base.status != "optimal":  # a solve stopped short (e.g. a busy machine's time limit): not kept
            return base
        while len(_BASELINES) >= BASELINES_KEPT:
            _BASELINES.pop(next(iter(_BASELINES)))
        _BASELINES[key] = base
    return base


def _assess(net: Network, options: FailureOptions, method: str, scenario: FailureScenario | None,
            intact: Network | None = None, shortfall: bool | None = None, warm: Any = None,
            progress: ProgressFn | None = None) -> StateAssessment:
    if method == "srcflow":  # the intact state: to a share of the gap, flows kept; a scenario: warm from them
        gap = options.gap_tol * (INTACT_GAP_SHARE if scenario is None else 1.0)
        return assess_state(net, time_limit_s=options.time_limit_s, method="srcflow", warm=warm, gap_tol=gap,
                            keep_flows=scenario is None, progress=progress)
    provider = None
    if intact is not None and options.reuse and scenario is not None and scenario.derate is None and not scenario.sites:
        provider = _failure_path_provider(intact, scenario.links)
    # a failure state the path LP keeps within capacity is carried whatever column generation would add; the
    # intact state (the baseline every figure is measured against) always gets it
    above = None if scenario is None or options.exact_mlu else 1 + OVERLOAD_TOL
    # a quick sweep (no shortfall measured) only needs "overloaded": a path LP whose bound over every admissible path
    # is above 100 % settles it without column generation (assess_state ignores it when the shortfall is measured)
    try:
        return assess_state(net, options.k_paths, options.backend, options.time_limit_s, path_provider=provider,
                            shortfall=options.shortfall if shortfall is None else shortfall, escalate_above_mlu=above,
                            overloaded_above_mlu=above)
    except SolverError as exc:  # e.g. a busy machine: one more try with more time
        logger.warning("scenario %s: %s; solving again with %g s", scenario.id if scenario else "intact", exc,
                       FAILURE_RETRY_FACTOR * options.time_limit_s)
        return assess_state(net, options.k_paths, options.backend, FAILURE_RETRY_FACTOR * options.time_limit_s,
                            path_provider=provider, shortfall=options.shortfall if shortfall is None else shortfall,
                            escalate_above_mlu=above, overloaded_above_mlu=above)


FAILURE_RETRY_FACTOR = 4.0
"""A scenario whose solve runs out of time is solved once more with this multiple of ``time_limit_s``."""


def _failure_path_provider(intact: Network, failed_links: Sequence[str]) -> Callable[..., Any]:
    """Candidate paths on the failed topology from the intact network's cached ones.

    :func:`backbone.solver.paths.candidates.paths_after_failure` keeps the intact link index; the failed network's
    index drops the failed links, so the incidences are re-indexed onto it (failed columns are
    empty for every surviving path).
    """
    from backbone.solver.paths.candidates import paths_after_failure

    def provider(net: Network, pairs: pd.DataFrame, k_paths: int, max_latency_ms: Any, disjoint: bool) -> Any:
        from backbone.solver.paths.candidates import candidate_paths

        if disjoint:
            return candidate_paths(net, pairs, k_paths=k_paths, max_latency_ms=max_latency_ms, disjoint=True)
        ps = paths_after_failure(intact, list(failed_links), pairs, k_paths=k_paths, max_latency_ms=max_latency_ms)
        return ps.reindex_links(net.links.index)

    return provider


def evaluate_scenario(ctx: SweepContext, scenario: FailureScenario) -> ScenarioRecord:
    """Re-route one scenario and measure its impact against the baseline.

    Returns
    -------
    ScenarioRecord
        The scenario (``scenario``, ``kind``, ``failed``, ``links_down``, ``links_derated``, ``sites_down``,
        ``derate``), ``status``, its ``impact`` (:func:`backbone.solver.failures.impact.failure_impact`:
        ``impact_gbps``, ``unmet_gbps`` beyond the baseline's and by class, ``slo_violation_gbps``/``slo_violations``,
        ``lost_gbps``, ``paused_gbps`` (the demand of pausing classes, not offered in the state), ``mlu`` with ``mlu_lower_bound`` and ``gap``, ``overloaded``, ``survived``), ``method``,
        ``path_lp_only`` (the path LP's routing kept without column generation, ``escalate_above_mlu``),
        ``untouched`` (no offered flow crosses the failed links: the intact routing kept, no solve;
        :mod:`backbone.solver.failures.untouched`),
        ``carried_gbps`` (NaN with ``unmet_gbps`` when an overloaded state's shortfall is not measured),
        ``p50/p99/worst_latency_inflation_ms``, ``link_utilisation`` and ``seconds``.

    Raises
    ------
    VerificationError
        ``verify`` and the independent check of the state's routing fails.
    SolverError
        The state's solve fails twice (the second time with :data:`FAILURE_RETRY_FACTOR` times the time limit).
    """
    t0 = time.perf_counter()
    failed_net = scenario.apply(ctx.net)
    lost = ctx.net.demands.index.difference(failed_net.demands.index)
    paused = failed_net.demands.index.intersection(ctx.paused)  # their class pauses: not offered in the state
    paused_gbps = float(failed_net.demands.loc[paused, "demand_gbps"].sum()) if len(paused) else 0.0
    if len(paused):
        failed_net = failed_net.copy_with(demands=failed_net.demands.drop(index=paused))
    state = None
    if ctx.untouched is not None and scenario.derate is None and not scenario.sites:
        state = ctx.untouched.state(ctx.baseline, scenario.links, failed_net.links, failed_net.demands.index)
    untouched = state is not None
    if state is None:
        state = _assess(failed_net, ctx.options, ctx.method, scenario, intact=ctx.net, warm=ctx.baseline.warm)
    res = state.routing
    d = res.demands
    if ctx.options.verify:
        from backbone.solver.checks.te import check_te

        report = check_te(failed_net, res)
        if not report.ok:
            from backbone.errors import VerificationError

            raise VerificationError(f"scenario {scenario.id}: independent check failed: {report}")
    lost_gbps = float(ctx.net.demands.loc[lost, "demand_gbps"].sum()) if len(lost) else 0.0
    impact = failure_impact(ctx.baseline, state, lost_gbps, ctx.tolerance_gbps, paused_gbps)
    base_lat = ctx.baseline_latency_ms.reindex(d.index)
    both = d["carried_gbps"].to_numpy(float) > 1e-9
    infl = (d["latency_ms"] - base_lat).to_numpy(float)[both & base_lat.notna().to_numpy()]
    infl = infl[np.isfinite(infl)]
    util = state.link_utilisation
    return ScenarioRecord(
        scenario=scenario.id, kind=scenario.kind, failed=tuple(scenario.failed),
        links_down=len(scenario.links) if scenario.derate is None else 0,
        links_derated=len(scenario.links) if scenario.derate is not None else 0, sites_down=len(scenario.sites),
        derate=scenario.derate, status=state.status, impact=impact, method=state.method,
        path_lp_only=not untouched and _within_capacity_skip(res.summary), untouched=untouched,
        carried_gbps=float(d["demand_gbps"].sum()) - state.unmet_total_gbps,
        p50_latency_inflation_ms=_pct(infl, 50), p99_latency_inflation_ms=_pct(infl, 99),
        worst_latency_inflation_ms=float(infl.max()) if infl.size else 0.0,
        link_utilisation={str(k): round(float(v), 6) for k, v in util.items()},
        seconds=time.perf_counter() - t0)


def _within_capacity_skip(summary: TERecord) -> bool:
    """Whether the path LP's routing was kept without column generation because it carries the state within capacity
    (``escalate_above_mlu``). A quick sweep's overloaded state whose path LP bound is above 100 % skips column
    generation too (``overloaded_above_mlu``); its MLU then has its proven gap beside it, and it is overloaded, not
    path-LP-only."""
    auto = summary.auto
    return (auto is not None and bool(auto.column_generation_skipped)
            and "overloaded_above_mlu" not in auto.model_fields_set)


def _pct(x: np.ndarray, q: float) -> float:
    return float(np.percentile(x, q)) if x.size else 0.0
