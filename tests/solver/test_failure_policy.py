"""Each traffic class's failure policy (issue #29 item 4): a pausing class is not offered in a failure state.

Hand-built ring (tests/solver/test_survive.py's ``ring_needing_a_chord``, with classes): A-B-C-D at 100 Gbps a link,
no upgrade room, 150 Gbps A->C. Intact it fits; a cut of link AB leaves one way round, over 100 Gbps links. Only the chord A-C (1,010 USD with one module) makes the demand survive a cut.
"""

from __future__ import annotations

from typing import Any

import pytest

from backbone.errors import ValidationError
from backbone.failure_policy import DEFAULT_FAILURE_POLICY, carried_in_failure, class_failure_policy
from backbone.model import Network
from backbone.solver.design.survivable.iterate import SurviveOptions, design_survivable
from backbone.solver.failures import FailureOptions, sweep
from backbone.validate import build_network
from tests import nets

SERIAL = FailureOptions(engine="serial", kind="srlg")


def _link(i: str, a: str, b: str, cap: float) -> dict[str, Any]:
    return {"id": i, "site_a": a, "site_b": b, "capacity_gbps": cap, "max_capacity_gbps": cap,
            "module_gbps": 100, "module_cost_usd": 50, "length_km": 100, "latency_ms": 1}


def ring(sync_gbps: float = 150.0, policy: dict[str, str] | None = None) -> Network:
    """The ring with ``sync_gbps`` of training-sync A->C and 10 Gbps of inference A->B; SRLG ``cable-ab`` holds
    link AB (the other links are their own conduit groups); the scenario's ``failure_policy`` is ``policy``."""
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 1), nets.site("C", 2, 0), nets.site("D", 1, -1)]
    links = [_link("AB", "A", "B", 100), _link("BC", "B", "C", 100), _link("CD", "C", "D", 100),
             _link("DA", "D", "A", 100)]
    demands = [{"id": "sync", "src": "A", "dst": "C", "demand_gbps": sync_gbps, "traffic_class": "training-sync"},
               {"id": "serve", "src": "A", "dst": "B", "demand_gbps": 10, "traffic_class": "inference"}]
    srlgs = [{"id": "cable-ab", "name": "cable AB", "kind": "cable_system", "links": "AB"}]
    candidates = [{"id": "chord", "name": "chord", "site_a": "A", "site_b": "C", "kind": "terrestrial",
                   "link_kind": "terrestrial", "length_km": 100, "latency_ms": 1, "module_gbps": 100,
                   "module_cost_usd": 10, "fixed_cost_usd": 1000, "max_modules": 2, "lead_time_quarters": 3}]
    meta = {"failure_policy": policy} if policy is not None else None
    return build_network({"sites": sites, "links": links, "demands": demands, "srlgs": srlgs,
                          "candidates": candidates}, name="ring", meta=meta)


def test_defaults_pause_training_sync_only() -> None:
    assert DEFAULT_FAILURE_POLICY["training-sync"] == "pause"
    assert {c for c, p in DEFAULT_FAILURE_POLICY.items() if p == "survive"} == {
        "training", "inference", "checkpoint", "dataset", "replication", "bulk"}
    net = ring()
    assert carried_in_failure(net).to_dict() == {"sync": False, "serve": True}
    # the run's policy goes over the scenario's, which goes over the defaults
    assert carried_in_failure(ring(policy={"training-sync": "survive"})).to_dict() == {"sync": True, "serve": True}
    assert carried_in_failure(ring(policy={"training-sync": "survive"}),
                              {"training-sync": "pause"}).to_dict() == {"sync": False, "serve": True}
    assert class_failure_policy(net.meta, {"inference": "pause"})["inference"] == "pause"


def _cut(net: Network, **options: Any) -> Any:
    res = sweep(net, SERIAL.model_copy(update=options))
    return next(r for r in res.scenarios if r.scenario == "srlg:cable-ab"), res


def test_paused_state_survives_with_its_rate_paused() -> None:
    rec, res = _cut(ring())
    assert rec.impact.survived
    assert rec.impact.paused_gbps == pytest.approx(150.0)
    assert rec.impact.unmet_gbps == pytest.approx(0.0)  # unmet keeps its meaning: offered and not carried
    assert rec.carried_gbps == pytest.approx(10.0)  # the inference demand, rerouted the long way round
    assert res.baseline.impact.unmet_gbps == pytest.approx(0.0) and res.baseline.carried_gbps == pytest.approx(160.0)
    s = res.summary()
    assert s["failure_policy"]["training-sync"] == "pause" and s["paused_states"] == len(res.scenarios)
    assert any("pause" in n for n in s["notes"])
    assert next(r for r in s["scenarios"] if r["scenario"] == "srlg:cable-ab")["paused_gbps"] == pytest.approx(150.0)


@pytest.mark.parametrize("how", ["scenario", "run"])
def test_surviving_training_sync_is_not_carried(how: str) -> None:
    if how == "scenario":
        rec, res = _cut(ring(policy={"training-sync": "survive"}))
    else:
        rec, res = _cut(ring(), failure_policy={"training-sync": "survive"})
    assert not rec.impact.survived
    assert rec.impact.paused_gbps == 0.0
    # 160 Gbps the long way round over 100 Gbps links; inference ranks first, so training-sync is short
    assert rec.impact.unmet_gbps == pytest.approx(60.0)
    assert rec.impact.unmet_by_class["training-sync"] == pytest.approx(60.0)
    assert res.summary()["paused_states"] == 0


def test_bad_run_policy_is_refused() -> None:
    from backbone.solver.core.options import validate_options

    with pytest.raises(ValidationError) as exc:
        validate_options(FailureOptions, {"failure_policy": {"training-sync": "wait", "inferense": "pause"}})
    fields = {p.field for p in exc.value.problems}
    assert "failure_policy.training-sync" in fields
    with pytest.raises(ValidationError) as exc:
        validate_options(FailureOptions, {"failure_policy": {"inferense": "pause"}})
    assert "inferense" in str(exc.value)


def test_design_buys_less_when_training_sync_pauses() -> None:
    """Paused, the cut state offers only the inference demand, which the ring carries: nothing to buy. Made to
    survive, the 150 Gbps need the chord (1,010 USD) -- the ring's known optimum."""
    opts = SurviveOptions(survive="srlg", bound_time_limit_s=10)
    paused = design_survivable(ring(), opts, sweep_options=SERIAL)
    survive = design_survivable(ring(), opts.model_copy(update={"failure_policy": {"training-sync": "survive"}}),
                                sweep_options=SERIAL)
    assert paused.converged and survive.converged
    assert paused.summary()["failure_policy"]["training-sync"] == "pause"
    assert survive.summary()["failure_policy"]["training-sync"] == "survive"
    assert paused.cost_usd == pytest.approx(0.0) and len(paused.upgrades) == 0
    assert survive.cost_usd == pytest.approx(1010.0)
    assert list(survive.upgrades["link"]) == ["chord"]
    assert paused.survived == paused.states_examined and survive.survived == survive.states_examined
    assert all(r.impact.paused_gbps == pytest.approx(150.0) for r in paused.records_after)
    assert all(r.impact.paused_gbps == 0.0 for r in survive.records_after)
    # the true bound follows the same policy: below each design's cost, and above the paused one's 0
    assert paused.lower_bound_usd == pytest.approx(0.0)
    assert survive.lower_bound_usd is not None and 0.0 < survive.lower_bound_usd <= 1010.0 + 1e-6
    # the policy given to the sweeps alone reaches the design too (the plan's failures stage)
    via_sweeps = design_survivable(ring(), opts, sweep_options=SERIAL.model_copy(
        update={"failure_policy": {"training-sync": "survive"}}))
    assert via_sweeps.cost_usd == pytest.approx(1010.0)


def test_independent_checker_applies_the_same_policy() -> None:
    """The edge-LP checker leaves the paused demand out of the cut state with the policy, and finds the 60 Gbps
    short without it."""
    from backbone.solver.checks.survivability import check_survivability

    paused = check_survivability(ring(), "srlg")
    assert paused.ok
    row = next(r for r in paused.details if r.scenario == "srlg:cable-ab")
    assert row.paused_gbps == pytest.approx(150.0) and row.independent_unmet_gbps == pytest.approx(0.0)
    survive = check_survivability(ring(), "srlg", failure_policy={"training-sync": "survive"})
    assert not survive.ok
    row = next(r for r in survive.details if r.scenario == "srlg:cable-ab")
    assert row.paused_gbps == 0.0 and row.independent_unmet_gbps == pytest.approx(60.0)
    # the scenario's own policy travels with the scenario (scenario_after) and reaches the checker
    assert not check_survivability(ring(policy={"training-sync": "survive"}), "srlg").ok


def test_the_option_is_declared_once_for_failures_design_and_plan() -> None:
    """``failure_policy`` (:data:`backbone.solver.core.options.FailurePolicyOption`) has one meaning and one check in
    the failures, design and plan options (the plan's in its failures stage, which its design follows)."""
    from backbone.solver.core.options import FailurePolicyOption
    from backbone.solver.design.options import DesignOptions
    from backbone.solver.tasks import parse_options

    for model in (FailureOptions, DesignOptions, SurviveOptions):
        assert model.model_fields["failure_policy"].annotation == FailurePolicyOption.__origin__, model.__name__
    good = {"training-sync": "survive"}
    assert parse_options("failures", {"failure_policy": good}).failure_policy == good
    assert parse_options("design", {"failure_policy": good}).failure_policy == good
    assert parse_options("plan", {"failures": {"failure_policy": good}}).failures.failure_policy == good
    for kind, given, field in (("failures", {"failure_policy": {"bulk": "later"}}, "failure_policy.bulk"),
                               ("design", {"failure_policy": {"bulk": "later"}}, "failure_policy.bulk"),
                               ("plan", {"failures": {"failure_policy": {"bulk": "later"}}},
                                "failures.failure_policy.bulk")):
        with pytest.raises(ValidationError) as err:
            parse_options(kind, given)
        assert [p.field for p in err.value.problems] == [field], kind
