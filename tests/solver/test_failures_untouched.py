"""A quick sweep's states no offered flow crosses keep the intact routing without a solve (issue #32): the state is
recorded as ``untouched``, a state whose failed link carries flow is solved as before, and every verdict equals a
full evaluation's (column generation for every state, ``exact_mlu``)."""

from __future__ import annotations

import pytest

from backbone.model import Network
from backbone.solver.failures import FailureOptions, ScenarioRecord, SweepContext, sweep
from backbone.solver.failures.untouched import UNTOUCHED_NOTE, UntouchedRule
from tests.nets import make_network, site


def spur_network(training_gbps: float = 0.0) -> Network:
    """A triangle A-B-C (10 Gbps links) carrying 8 Gbps A->C, with a spur B-D no bulk flow needs; with
    ``training_gbps`` a training-sync demand A->D (it pauses in a failure state) crosses the spur."""
    sites = [site("A", 0, 0), site("B", 1, 1), site("C", 2, 0), site("D", 1, 2)]
    links = [{"id": i, "site_a": a, "site_b": b, "capacity_gbps": 10, "length_km": 100, "latency_ms": 1}
             for i, a, b in (("AB", "A", "B"), ("BC", "B", "C"), ("AC", "A", "C"), ("BD", "B", "D"))]
    demands = [{"id": "d1", "src": "A", "dst": "C", "demand_gbps": 8, "traffic_class": "bulk"}]
    if training_gbps:
        demands.append({"id": "t1", "src": "A", "dst": "D", "demand_gbps": training_gbps,
                        "traffic_class": "training-sync"})
    return make_network(sites, links, demands, name="spur")


STATES = [{"links": ["BD"]}, {"links": ["AC"]}, {"links": ["AB"]}]


def _sweep(net: Network, **options: object) -> dict[str, ScenarioRecord]:
    opts = FailureOptions(kind="list", scenarios=STATES, k_paths=2, engine="serial", **options)  # type: ignore[arg-type]
    return {r.scenario: r for r in sweep(net, opts).scenarios}


@pytest.mark.parametrize("training_gbps", [0.0, 2.0])
def test_untouched_state_keeps_the_intact_routing_and_verdicts_match(training_gbps: float) -> None:
    net = spur_network(training_gbps)
    quick = _sweep(net, shortfall=False)
    full = _sweep(net, shortfall=False, exact_mlu=True)
    assert set(quick) == set(full) and len(quick) == 3
    spur = next(r for r in quick.values() if r.failed == ("BD",) or "BD" in r.scenario)
    assert spur.untouched and not spur.path_lp_only
    assert [r.scenario for r in quick.values() if r.untouched] == [spur.scenario]  # AC and AB carry flow: solved
    assert not any(r.untouched for r in full.values())
    for sid, r in quick.items():
        ref = full[sid]
        assert r.impact.survived == ref.impact.survived and r.impact.overloaded == ref.impact.overloaded
        assert r.impact.mlu >= ref.impact.mlu - 1e-6  # a routing of the state: never below its optimum
        assert r.impact.unmet_gbps == pytest.approx(ref.impact.unmet_gbps, abs=1e-6)
        assert r.impact.slo_violations == ref.impact.slo_violations
        assert r.impact.paused_gbps == pytest.approx(ref.impact.paused_gbps)
    assert spur.impact.survived and spur.impact.unmet_gbps == 0.0 and spur.worst_latency_inflation_ms == 0.0
    assert spur.carried_gbps == pytest.approx(8.0)
    assert spur.link_utilisation.keys() == {"AB", "BC", "AC"}
    # the kept routing carries the bulk demand as the intact one does; the paused training-sync leaves its spur
    assert spur.impact.mlu == pytest.approx(max(spur.link_utilisation.values()))
    if training_gbps:
        assert spur.impact.paused_gbps == pytest.approx(training_gbps)
        assert spur.impact.mlu_lower_bound != spur.impact.mlu_lower_bound  # NaN: the intact bound no longer bounds
    else:
        assert spur.impact.mlu_lower_bound <= full[spur.scenario].impact.mlu + 1e-6


def test_a_flow_crossing_the_failed_link_is_never_kept() -> None:
    """With training-sync surviving (not paused) its flow crosses the spur: that state is solved."""
    net = spur_network(2.0)
    quick = _sweep(net, shortfall=False, failure_policy={"training-sync": "survive"})
    assert not any(r.untouched for r in quick.values())


@pytest.mark.parametrize("options", [{"shortfall": True}, {"shortfall": False, "exact_mlu": True}])
def test_the_rule_is_only_for_quick_sweeps(options: dict[str, object]) -> None:
    ctx = SweepContext.build(spur_network(), FailureOptions(engine="serial", **options))  # type: ignore[arg-type]
    assert ctx.untouched is None


def test_rule_reproduces_the_intact_loads_and_settles_only_untouched_states() -> None:
    net = spur_network()
    ctx = SweepContext.build(net, FailureOptions(engine="serial", shortfall=False, k_paths=2))
    rule = ctx.untouched
    assert rule is not None and rule.exact
    offered = net.demands.index
    assert rule.crossed(["AC"], offered) and not rule.crossed(["BD"], offered)
    state = rule.state(ctx.baseline, ["BD"], net.fail_links(["BD"]).links, offered)
    assert state is not None and state.solves == () and UNTOUCHED_NOTE in state.routing.summary.notes
    assert state.mlu == pytest.approx(ctx.baseline.mlu)  # every demand offered: the intact figures
    assert state.mlu_lower_bound == pytest.approx(ctx.baseline.mlu_lower_bound)
    assert rule.state(ctx.baseline, ["AC"], net.fail_links(["AC"]).links, offered) is None
    assert UntouchedRule.build(ctx.baseline).hops["gbps"].sum() > 0


def test_untouched_is_in_the_record_and_the_summary() -> None:
    net = spur_network()
    res = sweep(net, FailureOptions(kind="list", scenarios=STATES, k_paths=2, engine="serial", shortfall=False))
    for r in res.scenarios:
        assert ScenarioRecord.from_dict(r.to_dict()) == r
    s = res.summary()
    assert s["untouched_states"] == 1
    assert any("no offered flow crosses" in n for n in s["notes"])
    old = {k: v for k, v in res.scenarios[0].to_dict().items() if k != "untouched"}  # a file written before it
    assert ScenarioRecord.from_dict(old).untouched is False


@pytest.mark.parametrize("training_gbps", [0.0, 2.0])
def test_the_independent_te_check_accepts_a_kept_routing(training_gbps: float) -> None:
    """``verify``: the TE checker re-checks the kept routing on the failed network from its tables."""
    quick = _sweep(spur_network(training_gbps), shortfall=False, verify=True)
    assert [r.failed for r in quick.values() if r.untouched] == [("BD",)]


def test_the_independent_te_check_refuses_a_routing_over_a_failed_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker does not trust the rule: a kept routing whose path crosses the cut link is refused."""
    from backbone.solver.checks.te import check_te

    net = spur_network()
    ctx = SweepContext.build(net, FailureOptions(engine="serial", shortfall=False, k_paths=2))
    assert ctx.untouched is not None
    monkeypatch.setattr(UntouchedRule, "crossed", lambda self, failed, offered=None: False)
    failed = net.fail_links(["AC"])
    state = ctx.untouched.state(ctx.baseline, ["AC"], failed.links, net.demands.index)
    assert state is not None
    report = check_te(failed, state.routing)
    assert not report.ok and any("unknown link" in v.message for v in report.violations)
    ok = ctx.untouched.state(ctx.baseline, ["BD"], net.fail_links(["BD"]).links, net.demands.index)
    assert ok is not None and check_te(net.fail_links(["BD"]), ok.routing).ok
