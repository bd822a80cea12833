"""Max-throughput skips a class stage whose optimum the min-MLU routing already proves (issue #32).

A class whose traffic, with every class before it, the min-MLU routing carries within capacity once the later
classes' flow is dropped has 0 unmet at its lexicographic optimum: its stage is held at 0 without an LP, named in
``stages_skipped``. Hand-computed on one 100 Gbps link (arc a->b).
"""

from __future__ import annotations

import pytest

from backbone.solver.failures.impact import assess_state
from backbone.solver.te import TEOptions, resolve_te, solve_te
from tests.nets import make_network


def one_link(training_gbps: float, bulk_gbps: float):  # noqa: ANN201
    sites = [{"id": "a", "lon": 0.0, "lat": 0.0, "region": "NA"}, {"id": "b", "lon": 1.0, "lat": 0.0, "region": "NA"}]
    links = [{"id": "l0", "site_a": "a", "site_b": "b", "capacity_gbps": 100.0, "latency_ms": 1.0}]
    demands = [{"id": "t", "src": "a", "dst": "b", "traffic_class": "training", "demand_gbps": training_gbps},
               {"id": "u", "src": "a", "dst": "b", "traffic_class": "bulk", "demand_gbps": bulk_gbps}]
    return make_network(sites, links, demands, name="one-link")


@pytest.mark.parametrize(("training", "bulk", "unmet", "skipped"), [
    (50.0, 100.0, {"training": 0.0, "bulk": 50.0}, ["max-throughput-training"]),  # training alone fits: skipped
    (150.0, 10.0, {"training": 50.0, "bulk": 10.0}, []),  # training alone overloads the link: its stage runs
])
def test_stage_skipped_only_when_the_class_fits(training: float, bulk: float, unmet: dict[str, float],
                                                skipped: list[str]) -> None:
    net = one_link(training, bulk)
    routing = solve_te(net, TEOptions(objective="min-mlu", k_paths=2, method="exact"))
    assert routing.mlu == pytest.approx((training + bulk) / 100.0)
    state = assess_state(net, 2, routing=routing)
    assert state.stages_skipped == tuple(skipped)  # what the impact record and the benchmark print
    by_class = state.unmet_by_class()
    for cls, v in unmet.items():
        assert by_class[cls] == pytest.approx(v, abs=1e-6)
    capped = solve_te(net, TEOptions(objective="max-throughput", k_paths=2, method="exact", utilisation_ceiling=1.0))
    assert capped.summary.stages_skipped == []  # no routing to test with: every stage runs, same answer
    assert capped.demands["unmet_gbps"].to_dict() == pytest.approx(
        {"t": unmet["training"], "u": unmet["bulk"]}, abs=1e-6)
    again = resolve_te(routing, "max-throughput", utilisation_ceiling=1.0)
    assert again is not None and again.summary.stages_skipped == skipped


def test_te_task_impact_says_which_stages_were_skipped() -> None:
    """``backbone te``'s impact record names the skipped class stages (empty when every stage ran)."""
    import time

    from backbone.solver.tasks.te import add_bound_and_impact

    for training, skipped in ((50.0, ["max-throughput-training"]), (150.0, [])):
        net = one_link(training, 100.0)
        opts = TEOptions(k_paths=2, method="exact")
        result = add_bound_and_impact(net, opts, solve_te(net, opts), time.perf_counter())
        assert result.summary.impact is not None and result.summary.impact.stages_skipped == skipped
