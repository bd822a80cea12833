"""Reuse across failure sweeps (issue #32): one process pool for many sweeps (:func:`sweep_pool`) and the intact
baseline solved once per network and options (:func:`intact_baseline`). Both must give the records a fresh sweep
gives, and must not reuse anything once a link of the network changed."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

import backbone.solver.failures.evaluation as evaluation
from backbone.model import Network
from backbone.solver.failures import (
    FailureOptions,
    ScenarioRecord,
    SweepContext,
    enumerate_scenarios,
    run_sweep,
)
from backbone.solver.failures.pool import active_pool, sweep_pool
from tests.solver.test_failures_untouched import spur_network


def _with_capacity(net: Network, link: str, gbps: float) -> Network:
    links = net.links.copy()
    links.loc[link, "capacity_gbps"] = gbps
    return replace(net, links=links)


def _figures(records: list[ScenarioRecord]) -> list[tuple[Any, ...]]:
    """What a record says, without its seconds: the state, its verdict and its numbers."""
    return [(r.scenario, r.status, r.impact.survived, r.impact.overloaded, _num(r.impact.mlu),
             _num(r.impact.unmet_gbps), r.untouched, sorted(r.link_utilisation.items())) for r in records]


def _num(x: float) -> float | None:
    """``x`` rounded, None for NaN (an overloaded state's shortfall a quick sweep leaves unmeasured)."""
    return None if math.isnan(x) else round(x, 9)


def _sweep(net: Network, **options: Any) -> list[ScenarioRecord]:
    opts = FailureOptions(kind="link", k_paths=2, shortfall=False, method="path", **options)
    return run_sweep(net, enumerate_scenarios(net, "link"), opts, None, SweepContext.build(net, opts))


def test_one_pool_runs_every_sweep_of_the_block_with_the_records_of_a_fresh_sweep() -> None:
    net = spur_network()
    tight = _with_capacity(net, "AB", 4.0)  # a link of the states changed: AC's failure is now overloaded
    fresh = {name: _figures(_sweep(n, engine="serial")) for name, n in (("net", net), ("tight", tight))}
    assert fresh["net"] != fresh["tight"]
    with sweep_pool(2) as pool:
        assert pool is not None and active_pool(2) is pool and active_pool(3) is None
        with sweep_pool(2) as inner:  # nested: the same pool
            assert inner is pool
        got = [_figures(_sweep(n, engine="local", workers=2)) for n in (net, tight, net)]
        assert pool.sweeps == 3  # no sweep started a pool of its own
    assert active_pool(2) is None
    # each process adopted the changed network's context instead of keeping the first one's
    assert got == [fresh["net"], fresh["tight"], fresh["net"]]


def test_no_shared_pool_for_one_worker() -> None:
    with sweep_pool(1) as pool:
        assert pool is None and active_pool(1) is None


def test_the_intact_baseline_is_solved_once_per_network_and_again_when_a_link_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluation, "_BASELINES", {})
    solves: list[str] = []
    real = evaluation._assess

    def counted(net: Network, *a: Any, **kw: Any) -> Any:
        solves.append(net.fingerprint())
        return real(net, *a, **kw)

    monkeypatch.setattr(evaluation, "_assess", counted)
    net = spur_network()
    quick = FailureOptions(kind="link", k_paths=2, shortfall=False, method="path")
    full = quick.model_copy(update={"shortfall": True})
    a = SweepContext.build(net, quick)
    b = SweepContext.build(net, full)  # the shortfall measurement of the same network: the same baseline
    assert b.baseline is a.baseline and len(solves) == 1
    assert b.untouched is None and a.untouched is not None  # the rest of the context is the options' own
    tight = _with_capacity(net, "AB", 4.0)
    c = SweepContext.build(tight, quick)  # a link changed: solved again
    assert c.baseline is not a.baseline and len(solves) == 2
    assert SweepContext.build(net, quick.model_copy(update={"k_paths": 3})).baseline is not a.baseline
    assert len(solves) == 3 and len(evaluation._BASELINES) <= evaluation.BASELINES_KEPT
    # the kept baseline gives the records a fresh solve gives
    monkeypatch.setattr(evaluation, "_BASELINES", {})
    assert _figures(_sweep(tight, engine="serial")) == _figures(_sweep(tight, engine="serial"))


def test_a_baseline_stopped_short_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluation, "_BASELINES", {})
    real = evaluation._assess

    def stopped(*a: Any, **kw: Any) -> Any:
        return replace(real(*a, **kw), status="time_limit")

    monkeypatch.setattr(evaluation, "_assess", stopped)
    net = spur_network()
    opts = FailureOptions(kind="link", k_paths=2, method="path")
    first = evaluation.intact_baseline(net, opts, "path")
    assert first.status == "time_limit" and evaluation.intact_baseline(net, opts, "path") is not first
    assert evaluation._BASELINES == {}
