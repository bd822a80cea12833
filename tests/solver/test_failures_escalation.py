"""A failure state's column generation runs where it can change the verdict (issue #32's CI budget): a state the
path LP keeps within capacity keeps the path LP's MLU with its proven gap, said beside it; ``exact_mlu`` runs column
generation for every state. Verdicts are the same either way."""

from __future__ import annotations

import pytest

from backbone.solver.failures import FailureOptions, sweep
from backbone.solver.te import AUTO_ESCALATE_GAP, TEOptions, solve_te
from tests.nets import grid


@pytest.mark.slow
def test_solve_te_escalates_only_above_the_given_mlu() -> None:
    net = grid()
    plain = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="exact"))
    assert plain.summary.gap > AUTO_ESCALATE_GAP  # single shortest paths leave a wide gap on this grid
    kept = solve_te(net, TEOptions(objective="min-mlu", k_paths=1), escalate_above_mlu=plain.summary.mlu)
    assert kept.summary.method == "exact" and kept.summary.mlu == pytest.approx(plain.summary.mlu)
    assert any("no column generation" in n for n in kept.summary.notes)
    escalated = solve_te(net, TEOptions(objective="min-mlu", k_paths=1), escalate_above_mlu=0.5 * plain.summary.mlu)
    assert escalated.summary.method == "colgen" and escalated.summary.mlu < plain.summary.mlu


@pytest.mark.slow
def test_sweep_states_within_capacity_keep_the_path_lp_and_say_so() -> None:
    net = grid().scale_demand(0.2)  # every single-link state within capacity
    states = [{"links": [link]} for link in net.links.index[:5]]
    quick = sweep(net, FailureOptions(kind="list", scenarios=states, k_paths=1, engine="serial"))
    exact = sweep(net, FailureOptions(kind="list", scenarios=states, k_paths=1, engine="serial", exact_mlu=True))
    q, e = quick.summary(), exact.summary()
    by_id = {r.scenario: r.impact for r in exact.scenarios}
    assert [r.impact.survived for r in quick.scenarios] == [by_id[r.scenario].survived for r in quick.scenarios]
    assert any(r.path_lp_only for r in quick.scenarios) and not any(r.path_lp_only for r in exact.scenarios)
    assert q["path_lp_states"] > 0 and e["path_lp_states"] == 0
    assert any(f"{q['path_lp_states']} of {q['scenarios_run']} scenarios are carried within capacity" in n
               for n in q["notes"])
    for r in quick.scenarios:  # the path LP's routing is a routing: never below the optimum over every path
        assert r.impact.mlu >= by_id[r.scenario].mlu - 1e-6
        assert r.impact.mlu_lower_bound <= by_id[r.scenario].mlu + 1e-6
    # the intact state (every figure's baseline) gets column generation either way
    assert quick.baseline.impact.mlu == pytest.approx(exact.baseline.impact.mlu, rel=1e-6)


@pytest.mark.slow
def test_solve_te_skips_column_generation_when_the_bound_proves_overload() -> None:
    """``overloaded_above_mlu``: a path LP whose bound over every admissible path is above it keeps its routing (no
    routing gets within it), with the bound and gap said; below the bound, column generation runs as before."""
    net = grid().scale_demand(3.0)
    plain = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="exact"))
    s = plain.summary
    assert s.gap is not None and s.lower_bound is not None
    assert s.gap > AUTO_ESCALATE_GAP and s.lower_bound > 1.0  # overloaded over every path, loosely routed
    kept = solve_te(net, TEOptions(objective="min-mlu", k_paths=1), escalate_above_mlu=1.0,
                    overloaded_above_mlu=0.5 * s.lower_bound)
    assert kept.summary.method == "exact" and kept.summary.mlu == pytest.approx(s.mlu)
    assert kept.summary.lower_bound == pytest.approx(s.lower_bound)
    assert kept.summary.auto is not None and kept.summary.auto.column_generation_skipped
    assert any("no routing gets within it" in n for n in kept.summary.notes)
    escalated = solve_te(net, TEOptions(objective="min-mlu", k_paths=1), escalate_above_mlu=1.0,
                         overloaded_above_mlu=2.0 * s.mlu)
    assert escalated.summary.method == "colgen" and escalated.summary.mlu < s.mlu
    # the bound was right: column generation's optimum is above the threshold the skip was given
    assert escalated.summary.mlu >= 0.5 * s.lower_bound


@pytest.mark.slow
def test_quick_sweep_settles_proven_overload_without_column_generation() -> None:
    """A sweep that does not measure shortfalls (the survivable design's) needs only the verdict: states whose path
    LP bound is above 100 % keep the path LP, overloaded either way and not "path-LP-only"; a measured sweep runs
    column generation as before. Verdicts are the same."""
    net = grid().scale_demand(3.0)
    states = [{"links": [link]} for link in net.links.index[:4]]
    quick = sweep(net, FailureOptions(kind="list", scenarios=states, k_paths=1, engine="serial", shortfall=False))
    exact = sweep(net, FailureOptions(kind="list", scenarios=states, k_paths=1, engine="serial", shortfall=False,
                                      exact_mlu=True))
    by_id = {r.scenario: r.impact for r in exact.scenarios}
    assert all(r.impact.overloaded and r.impact.mlu_lower_bound > 1.0 for r in quick.scenarios)
    assert [r.impact.survived for r in quick.scenarios] == [by_id[r.scenario].survived for r in quick.scenarios]
    assert [r.impact.overloaded for r in quick.scenarios] == [by_id[r.scenario].overloaded for r in quick.scenarios]
    assert not any(r.path_lp_only for r in quick.scenarios) and quick.summary()["path_lp_states"] == 0
    for r in quick.scenarios:  # the path LP's routing, with a bound that holds for column generation's optimum
        assert r.impact.mlu >= by_id[r.scenario].mlu - 1e-6
        assert r.impact.mlu_lower_bound <= by_id[r.scenario].mlu + 1e-6
    assert any(r.impact.mlu > by_id[r.scenario].mlu + 1e-6 for r in quick.scenarios)  # column generation did not run
