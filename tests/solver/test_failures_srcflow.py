"""Failure sweeps on the source-flow engine (``method="srcflow"``): each state's MLU against the exact edge LP
optimum and its own bound, warm against cold starts, engines agree, unknown unmet stays unknown, defaults kept."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from backbone.errors import ValidationError
from backbone.model import Network
from backbone.solver.failures import (
    FailureOptions,
    ScenarioRecord,
    SweepContext,
    enumerate_scenarios,
    evaluate_scenario,
    run_sweep,
    sweep,
)
from backbone.solver.failures.evaluation import choose_method
from backbone.solver.failures.impact import assess_state
from backbone.solver.te import TEOptions, solve_te
from tests.nets import random_te_net

TOL = 1e-6
SEEDS = (1, 2, 3)
FAST = {"engine": "serial", "method": "srcflow", "time_limit_s": 4.0}
"""Frank-Wolfe's tail on these small networks can be slow: the default 1 % gap target, and a short time limit
(a time-limited state reports the gap it reached, which is what the assertions hold it to)."""


def _edge_optimum(net: Network) -> float:
    """Min-MLU over every path: the exact edge formulation (no SLOs in these networks)."""
    return solve_te(net, TEOptions(objective="min-mlu", formulation="edge")).mlu


def _scenarios(net: Network) -> list[Any]:
    """Every single-link failure, two site failures and one derate."""
    return [*enumerate_scenarios(net, "link"),
            *enumerate_scenarios(net, "list", scenarios=[{"id": "two-sites", "sites": list(net.sites.index[1:3])},
                                                         {"id": "half", "links": list(net.links.index[:3]),
                                                          "derate": 0.5}])]


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_scenario_mlu_within_its_gap_of_the_edge_optimum(seed: int) -> None:
    """Each scenario's MLU is a routing's (never below the optimum), within its reported gap of the edge LP
    optimum, and its bound never above the optimum; unmet is known exactly when the state is not overloaded."""
    net = random_te_net(seed, n=8, m=14, tight=0.6)
    ctx = SweepContext.build(net, FailureOptions(**FAST))
    assert ctx.method == "srcflow" and ctx.baseline.warm is not None
    base_opt = _edge_optimum(net)
    assert ctx.baseline.mlu_lower_bound <= base_opt + TOL <= ctx.baseline.mlu + 2 * TOL
    overloaded = 0
    for sc in _scenarios(net):
        rec = evaluate_scenario(ctx, sc)
        imp = rec.impact
        opt = _edge_optimum(sc.apply(net))
        assert rec.method == "srcflow"
        assert imp.mlu_lower_bound <= opt + TOL, sc.id
        assert imp.mlu >= opt - TOL, sc.id
        assert imp.mlu - opt <= imp.gap * imp.mlu + TOL, sc.id
        assert imp.gap == pytest.approx((imp.mlu - imp.mlu_lower_bound) / imp.mlu)
        if imp.overloaded:  # no max-throughput at scale: unknown, never 0, and not survived
            overloaded += 1
            assert math.isnan(imp.unmet_gbps) and math.isnan(imp.impact_gbps) and not imp.survived
        else:
            assert math.isfinite(imp.unmet_gbps) and imp.survived == (imp.unmet_gbps <= ctx.tolerance_gbps)
    assert overloaded < len(_scenarios(net))


@pytest.mark.slow
def test_unmet_agrees_with_the_path_method_where_both_fit() -> None:
    """Not overloaded, no SLOs: unmet is the demand a failure cuts apart, whichever engine routes it."""
    net = random_te_net(4, n=8, m=12, tight=0.3)
    path = {r.scenario: r.impact
            for r in sweep(net, FailureOptions(kind="link", engine="serial", method="path")).scenarios}
    src = sweep(net, FailureOptions(kind="link", **FAST)).scenarios
    compared = 0
    for rec in src:
        r, p = rec.impact, path[rec.scenario]
        if not (r.overloaded or p.overloaded):
            compared += 1
            assert r.unmet_gbps == pytest.approx(p.unmet_gbps, abs=1e-6)
            assert r.unmet_disconnected_gbps == pytest.approx(p.unmet_disconnected_gbps, abs=1e-6)
            assert r.lost_gbps == p.lost_gbps and r.survived == p.survived
    assert compared >= 5


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_warm_and_cold_agree_within_the_gap(seed: int) -> None:
    net = random_te_net(seed, n=8, m=14, tight=0.6)
    opts = FailureOptions(**FAST)
    ctx = SweepContext.build(net, opts)
    for sc in enumerate_scenarios(net, "link")[:6]:
        failed = sc.apply(net)
        warm = assess_state(failed, time_limit_s=opts.time_limit_s, method="srcflow", warm=ctx.baseline.warm,
                            gap_tol=opts.gap_tol)
        cold = assess_state(failed, time_limit_s=opts.time_limit_s, method="srcflow", gap_tol=opts.gap_tol)
        assert warm.routing.summary.srcflow is not None and warm.routing.summary.srcflow.source_flows.warm_start
        assert cold.routing.summary.srcflow is not None and not cold.routing.summary.srcflow.source_flows.warm_start
        assert abs(warm.mlu - cold.mlu) <= warm.gap * warm.mlu + cold.gap * cold.mlu + TOL, sc.id
        assert max(warm.mlu_lower_bound, cold.mlu_lower_bound) <= min(warm.mlu, cold.mlu) + TOL
        rec = evaluate_scenario(ctx, sc).impact  # the sweep's own solve: the same warm start
        assert abs(rec.mlu - warm.mlu) <= rec.gap * rec.mlu + warm.gap * warm.mlu + TOL, sc.id


@pytest.mark.slow
def test_engines_agree() -> None:
    """Serial, a local process pool and a local Dask cluster give identical srcflow records."""
    net = random_te_net(3, n=8, m=14, tight=0.6)  # converges well within the time limit (deterministic)
    scenarios = enumerate_scenarios(net, "link")[:6]
    # time enough that no solve is stopped by the clock (a fresh worker's first solve also loads the compiled
    # kernels): then every engine computes the same iterations
    base = FailureOptions(kind="link", **{**FAST, "time_limit_s": 30.0})
    volatile = {"seconds"}

    def strip(rs: list[ScenarioRecord]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.to_dict().items() if k not in volatile} for r in rs]

    ctx = SweepContext.build(net, base)  # shipped to the workers, as sweep() does (the warm start they share)
    serial = strip(run_sweep(net, scenarios, base, ctx=ctx))
    local = strip(run_sweep(net, scenarios, base.model_copy(update={"engine": "local", "workers": 2,
                                                                    "batch_size": 2}), ctx=ctx))
    dask = strip(run_sweep(net, scenarios, base.model_copy(update={"engine": "dask", "workers": 2}), ctx=ctx))
    assert all(r["method"] == "srcflow" and r["status"] != "time_limit" for r in serial)  # none stopped by the clock
    assert json.dumps(serial) == json.dumps(local) == json.dumps(dask)


def test_unknown_unmet_is_shown_not_zero() -> None:
    """An overloaded intact network: every figure that would need the shortfall is unknown, and said so."""
    net = random_te_net(5, n=8, m=14, tight=1.0)
    res = sweep(net, FailureOptions(kind="link", **FAST))
    s = res.summary()
    assert s["baseline"]["overloaded"] and math.isnan(s["baseline"]["unmet_gbps"])
    assert math.isnan(s["baseline"]["unmet_by_class"]["bulk"]) and math.isnan(s["baseline"]["carried_gbps"])
    assert s["unmet_unknown"] == s["scenarios_run"] and s["survived"] == 0
    assert any("unknown" in n and "not 0" in n for n in s["notes"])
    table = res.table()
    assert table["unmet_gbps"].isna().all() and table["unmet_bulk_gbps"].isna().all()
    assert list(table["mlu"]) == sorted(table["mlu"], reverse=True)  # unknown impact: worst MLU first
    from backbone.artifacts import json_text

    assert '"unmet_gbps": null' in json_text(s)


def test_srcflow_refuses_slo_demands(submarine_cut: Network) -> None:
    with pytest.raises(ValidationError) as exc:
        sweep(submarine_cut, FailureOptions(kind="link", engine="serial", method="srcflow"))
    assert exc.value.problems[0].field == "method" and "ny-lon" in exc.value.problems[0].message


def test_auto_keeps_the_path_method_on_the_shipped_scenario() -> None:
    from backbone.io import load_scenario

    assert FailureOptions().method == "auto"
    shipped = load_scenario(None)
    assert choose_method(shipped, "auto") == "path"  # latency SLOs and ~1,500 demands: the path LP
    big = random_te_net(1, n=8, m=14)
    assert choose_method(big, "auto") == "path" and choose_method(big, "srcflow") == "srcflow"


def test_path_records_carry_the_bound(submarine_cut: Network) -> None:
    rec = sweep(submarine_cut, FailureOptions(kind="srlg", engine="serial")).scenarios[0]
    assert rec.method == "path"
    assert rec.impact.mlu_lower_bound <= rec.impact.mlu + TOL and 0 <= rec.impact.gap <= 1


def test_the_refusal_says_how_to_raise_the_bound(submarine_cut: Network) -> None:
    with pytest.raises(ValidationError) as exc:
        enumerate_scenarios(submarine_cut, "link", max_scenarios=2)
    msg = exc.value.problems[0].message
    assert "4 link scenarios exceed the bound of 2" in msg and "--max-scenarios 4" in msg
    assert len(enumerate_scenarios(submarine_cut, "link", max_scenarios=4)) == 4


@pytest.mark.slow
def test_cli_method_srcflow(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    net = random_te_net(3, n=8, m=14, tight=0.6)
    scen = save_scenario(net, tmp_path / "scen")
    r = CliRunner().invoke(app, ["failures", str(scen), "--kind", "link", "--method", "srcflow", "--gap-tol", "0.02", "--time-limit-s", "4",
                                 "--engine", "serial", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)["scenarios"]  # --json prints failures.json's object
    assert len(data) == len(net.links) and all(d["method"] == "srcflow" for d in data)
    assert all(d["gap"] is not None and d["mlu_lower_bound"] <= d["mlu"] + TOL for d in data)
    text = CliRunner().invoke(app, ["failures", str(scen), "--kind", "link", "--method", "srcflow", "--engine",
                                    "serial", "--time-limit-s", "4"])
    assert text.exit_code == 0 and "method srcflow" in text.output and "gap" in text.output
    bad = CliRunner().invoke(app, ["failures", str(scen), "--method", "fast"])
    assert bad.exit_code == 2 and "method" in bad.output
    few = CliRunner().invoke(app, ["failures", str(scen), "--kind", "link", "--max-scenarios", "3"])
    assert few.exit_code == 2 and "--max-scenarios" in few.output
    assert np.isfinite([d["mlu"] for d in data]).all()


def test_a_state_with_nothing_to_route(triangle: Network) -> None:
    """Losing the only demand's site leaves nothing to route: MLU 0, the demand lost, no division by zero."""
    res = sweep(triangle, FailureOptions(kind="site", **FAST))
    a = next(r.impact for r in res.scenarios if r.scenario == "site:A")
    assert a.mlu == 0 and a.lost_gbps == pytest.approx(15.0) and a.unmet_gbps == 0


def test_unknown_shortfall_leaves_capacity_unmet_unknown_and_slo_measured() -> None:
    """An overloaded state whose shortfall is not measured: its unmet, capacity part and impact are unknown
    (NaN, never 0), it does not survive, and its SLO part (no admissible path) is still a number."""
    from backbone.solver.failures.impact import failure_impact, survive_tolerance_gbps
    from benchmarks.synthetic import synthetic_backbone

    net = synthetic_backbone(12, seed=1)
    net = net.copy_with(demands=net.demands.assign(demand_gbps=net.demands["demand_gbps"] * 50.0))
    base = assess_state(net, shortfall=False)
    failed = net.copy_with(links=net.links.drop(net.links.index[:1]))
    state = assess_state(failed, shortfall=False)
    assert state.overloaded and not state.unmet_known
    rec = failure_impact(base, state, 0.0, survive_tolerance_gbps(net))
    assert np.isnan(rec.unmet_gbps) and np.isnan(rec.unmet_capacity_gbps) and np.isnan(rec.impact_gbps)
    assert np.isfinite(rec.slo_violation_gbps) and not rec.survived
