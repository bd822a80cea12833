"""Failure and what-if analysis: sweep failure scenarios, re-route each and measure its impact.

A scenario fails links, SRLGs or sites, or derates them to a fraction of capacity (degraded,
not broken). Each scenario is re-routed on the failed topology -- candidate paths regenerated
for it -- and assessed exactly as the intact baseline is (:func:`backbone.solver.failures.impact.assess_state`:
min-MLU utilisation, and the traffic that cannot be carried at <= 100 % utilisation), then compared
with it (:func:`backbone.solver.failures.impact.failure_impact`): unmet traffic per class, latency-SLO
violations and traffic lost with failed sites, each apart, their sum ``impact_gbps`` (the ranking),
the utilisation the traffic needs (``mlu``; above 1.0 it is overload, never hidden), latency
inflation per demand (p50, p99, worst) and whether the state ``survived``.

* :mod:`~backbone.solver.failures.scenarios`: :class:`FailureScenario`, :func:`enumerate_scenarios`, the
  planner's scenario lists.
* :mod:`~backbone.solver.failures.options`: :class:`FailureOptions`.
* :mod:`~backbone.solver.failures.evaluation`: :class:`SweepContext` and :func:`evaluate_scenario`.
* :mod:`~backbone.solver.failures.records`: :class:`ScenarioRecord` (one per scenario, its
  :class:`~backbone.solver.failures.impact.FailureImpact` inside) and :class:`SweepBaseline`, typed until they are
  written (``to_dict``).
* :mod:`~backbone.solver.failures.engines`: :func:`run_sweep` and :func:`execute_sweep` (serial, local process
  pool, Dask; the latter also says where the states ran, :class:`SweepEngineInfo`).
* :mod:`~backbone.solver.failures.result`: :class:`SweepResult`, the scenario table and :func:`sweep`.

Execution
---------
Serially, on a local process pool or on a Dask cluster, with the same deterministic result:
see :mod:`backbone.solver.failures.engines`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.failures.engines import dask_cluster, execute_sweep, run_sweep, worker_context
    from backbone.solver.failures.evaluation import FAILURE_RETRY_FACTOR, SweepContext, evaluate_scenario
    from backbone.solver.failures.impact import FailureImpact
    from backbone.solver.failures.options import FailureOptions
    from backbone.solver.failures.records import ScenarioRecord, SweepBaseline
    from backbone.solver.failures.result import (
        SCENARIO_COLUMNS,
        SweepResult,
        scenario_table,
        sweep,
        worst_first,
    )
    from backbone.solver.failures.scenarios import (
        DEFAULT_MAX_SCENARIOS,
        FailureKind,
        FailureScenario,
        enumerate_scenarios,
        load_scenario_list,
    )
    from backbone.solver.failures.summary import SweepEngineInfo


__all__ = [
    "DEFAULT_MAX_SCENARIOS", "FAILURE_RETRY_FACTOR", "SCENARIO_COLUMNS", "FailureImpact", "FailureKind",
    "FailureOptions", "FailureScenario", "ScenarioRecord", "SweepBaseline", "SweepContext", "SweepEngineInfo",
    "SweepResult", "dask_cluster", "enumerate_scenarios", "evaluate_scenario", "execute_sweep", "load_scenario_list", "run_sweep",
    "scenario_table", "sweep", "worker_context", "worst_first",
]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "engines": ["dask_cluster", "execute_sweep", "run_sweep", "worker_context"],
    "evaluation": ["FAILURE_RETRY_FACTOR", "SweepContext", "evaluate_scenario"],
    "impact": ["FailureImpact"],
    "options": ["FailureOptions", "DEFAULT_MAX_SCENARIOS", "FailureKind"],
    "records": ["ScenarioRecord", "SweepBaseline"],
    "result": ["SCENARIO_COLUMNS", "SweepResult", "scenario_table", "sweep", "worst_first"],
    "scenarios": ["FailureScenario", "enumerate_scenarios", "load_scenario_list"],
    "summary": ["SweepEngineInfo"],
})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
