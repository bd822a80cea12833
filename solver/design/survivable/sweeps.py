"""The failure sweeps the survivable design runs on its designs (:mod:`backbone.solver.failures`: the same impact
and "survived" as ``failures`` and ``plan``)."""

from __future__ import annotations

import json
import math
from collections.abc import Collection

from backbone.failure_policy import class_failure_policy
from backbone.model import Network
from backbone.solver.failures import (
    FailureOptions,
    ScenarioRecord,
    SweepContext,
    enumerate_scenarios,
    run_sweep,
)

__all__ = ["measure_overloaded", "sweep_key", "sweep_states"]


def sweep_states(net: Network, kind: str, opts: FailureOptions, skip: Collection[str] = ()) -> list[ScenarioRecord]:
    """Every state of ``kind`` but those in ``skip`` (ids whose verdict the caller does not need); overloaded states
    are flagged, not measured (enough to add them)."""
    scenarios = [s for s in enumerate_scenarios(net, kind, max_scenarios=opts.max_scenarios)  # type: ignore[arg-type]
                 if s.id not in skip]
    quick = opts.model_copy(update={"shortfall": False})
    ctx = SweepContext.build(net, quick)
    return run_sweep(net, scenarios, quick, None, ctx)


def measure_overloaded(net: Network, kind: str, opts: FailureOptions,
                        records: list[ScenarioRecord]) -> list[ScenarioRecord]:
    """``records`` with the overloaded states' shortfall measured (max-throughput at 100 %)."""
    todo = {r.scenario for r in records if math.isnan(r.impact.unmet_gbps)}
    scenarios = [s for s in enumerate_scenarios(net, kind, max_scenarios=opts.max_scenarios)  # type: ignore[arg-type]
                 if s.id in todo]
    full_opts = opts.model_copy(update={"shortfall": True})
    ctx = SweepContext.build(net, full_opts)
    measured = {r.scenario: r for r in run_sweep(net, scenarios, full_opts, None, ctx)}
    return [measured.get(r.scenario, r) for r in records]


def sweep_key(net: Network, kind: str, sopts: FailureOptions) -> str:
    """What a quick sweep's records depend on: the network (its fingerprint, its metadata's failure policy), the kind
    and the options that change a figure (not where or in how many processes it runs)."""
    policy = json.dumps(class_failure_policy(net.meta, sopts.failure_policy), sort_keys=True)
    return ":".join((net.fingerprint(), kind, sopts.model_dump_json(exclude={"engine", "workers", "scheduler",
                                                                            "batch_size"}), policy))
