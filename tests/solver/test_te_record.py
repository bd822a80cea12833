"""The TE routing's record (:class:`backbone.solver.te.summary.TERecord`) and the plan's design record
(:data:`backbone.solver.design.summary.PlanDesign`) are typed where the data lives: built once, never written into,
dumped only at the edge."""

from __future__ import annotations

import math
import time

import pydantic
import pytest

from backbone.model import Network
from backbone.solver.design.summary import SurvivableDesignSummary, UnbuiltDesign, built_design
from backbone.solver.plan.report_data import bound_text, headline_text
from backbone.solver.tasks.te import add_bound_and_impact, add_corridors
from backbone.solver.te import NO_DEMAND_NOTE, TEOptions, solve_te
from backbone.solver.te.summary import ClassTraffic, LPStage, TERecord


def test_the_record_is_typed_and_frozen(triangle: Network) -> None:
    r = solve_te(triangle, TEOptions(objective="max-throughput", k_paths=2))
    s = r.summary
    assert isinstance(s, TERecord) and isinstance(s.stages[0], LPStage)
    assert all(isinstance(v, ClassTraffic) for v in s.by_class.values())
    assert s.carried_gbps == pytest.approx(sum(v.carried_gbps for v in s.by_class.values()))
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        s.mlu = 0.0  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="extra"):
        s.updated(mlu_pct=75.0)  # a misspelt figure is refused, not carried along
    changed = r.with_summary(notes=["a planner's note"])
    assert changed.summary.notes == ["a planner's note"] and r.summary.notes == s.notes
    assert changed.links is r.links and changed.summary.mlu == s.mlu


def test_the_bound_impact_and_corridors_steps_leave_the_routing_as_it_was(triangle: Network) -> None:
    """``add_bound_and_impact`` and ``add_corridors`` (what ``backbone te`` and the facade run) return a new
    result; the routing they were given keeps its record: nothing writes into it."""
    opts = TEOptions(k_paths=2, bound=True)
    routing = solve_te(triangle, opts)
    before = routing.summary.document()
    bounded = add_bound_and_impact(triangle, opts, routing, time.perf_counter())
    with_corridors, table = add_corridors(triangle, bounded)
    assert routing.summary.document() == before
    assert {"impact", "edge_bound", "corridors"}.isdisjoint(routing.summary.model_fields_set)
    assert bounded.summary.impact is not None and bounded.summary.edge_bound == pytest.approx(routing.mlu)
    assert bounded.summary.gap_to_edge_bound == pytest.approx(0.0, abs=1e-9)
    assert [row.document() for row in with_corridors.summary.corridors or []] == table.to_dict("records")
    document = with_corridors.to_dict()  # the edge: plain values, only the sections that were computed
    assert "fallback" not in document and document["mlu"] == routing.mlu


def test_a_network_without_traffic_says_so_in_every_record(triangle: Network) -> None:
    empty = triangle.copy_with(demands=triangle.demands.assign(demand_gbps=0.0))
    for objective in ("min-mlu", "ecmp"):
        s = solve_te(empty, TEOptions(objective=objective)).summary
        assert s.notes[0] == NO_DEMAND_NOTE and s.demand_gbps == 0.0
        assert s.weighted_latency_ms is None or math.isnan(s.weighted_latency_ms)


def test_an_unbuilt_design_has_a_status_and_a_reason_but_no_bound() -> None:
    skipped = UnbuiltDesign(status="skipped", cost_usd=0.0, message="--skip-upgrades: nothing was designed")
    infeasible = UnbuiltDesign(status="infeasible", cost_usd=None, reasons=["no candidate reaches x"],
                               message="infeasible")
    assert built_design(skipped) is None and built_design(infeasible) is None
    assert skipped.document() == {"status": "skipped", "cost_usd": 0.0,
                                  "message": "--skip-upgrades: nothing was designed"}
    assert infeasible.document()["reasons"] == ["no candidate reaches x"]
    with pytest.raises(pydantic.ValidationError):
        UnbuiltDesign(status="optimal", cost_usd=1.0, message="built")  # type: ignore[arg-type]
    assert bound_text(infeasible) == "cost –; lower bound –, gap –"
    from backbone.solver.design.survivable.survivability import Survivability

    sv = Survivability(failure_kind="srlg", survived=5, states=7, not_survivable=[], violated=["a", "b"])
    text = headline_text(sv, infeasible, False, 0, 0)
    assert text.startswith("After the plan (–: 0 links upgraded, 0 new routes)") and "lower bound" not in text
    built = SurvivableDesignSummary.model_construct(cost_usd=2e6, lower_bound_usd=1.5e6, gap=0.25)
    assert built_design(built) is built
    assert "(2.0 M USD, lower bound 1.5 M, gap 25.0 %:" in headline_text(sv, built, False, 1, 0)


@pytest.mark.slow  # column generation and the source-flow engine on a small network: seconds
def test_the_method_sections_are_typed_and_keep_their_keys() -> None:
    """Each method's section of the record is a frozen model built where its figures are made; the document holds
    the keys the run reported, in the order the section lists them (``backbone te --json`` kept its keys)."""
    from backbone.solver.te import solve_source_flows
    from backbone.solver.te.sections import AutoFigures, ColgenFigures, LPSize, PathsTable, SourceFlowFigures
    from tests.nets import random_te_net

    net = random_te_net(0, n=8, m=14)  # no SLOs: column generation starts from flow deviation
    cg = solve_te(net, TEOptions(method="colgen", k_paths=1)).summary
    assert isinstance(cg.colgen, ColgenFigures) and cg.colgen.flow_deviation is not None
    assert list(cg.document()["colgen"])[:7] == ["iterations", "columns", "master_builds", "masters_warm_started",
                                                 "latency_limited_searches", "latency_limited_seconds",
                                                 "flow_deviation"]
    assert list(cg.document()["colgen"]["flow_deviation"]) == ["iterations", "mlu", "lower_bound", "seconds",
                                                               "columns"]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        cg.colgen.columns = 0  # type: ignore[misc]
    assert isinstance(cg.lp, LPSize) and list(cg.document()["lp"]) == ["rows", "cols", "nonzeros"]
    assert LPSize().document() == {}  # no LP solved (the time-limit fallback): an empty section, as before
    sf, _ = solve_source_flows(net, 30.0)
    s = sf.summary
    assert isinstance(s.srcflow, SourceFlowFigures) and isinstance(s.paths_table, PathsTable)
    assert s.srcflow.source_flows.pairs == s.paths_table.demands and s.srcflow.paths == s.paths_table.paths
    assert set(s.document()["srcflow"]["source_flows"]) == {"sources", "pairs", "iterations", "seconds", "flow_mlu",
                                                            "lower_bound", "gap_tol", "warm_start"}
    kept = AutoFigures.model_validate({"path_lp_mlu": 0.9, "path_lp_lower_bound": 0.8, "path_lp_gap": 0.1,
                                       "column_generation_skipped": True, "escalate_above_mlu": 1.0})
    assert list(kept.document()) == ["path_lp_mlu", "path_lp_lower_bound", "path_lp_gap",
                                     "column_generation_skipped", "escalate_above_mlu"]
    assert kept.updated(colgen_seconds=1.5).document()["colgen_seconds"] == 1.5 and kept.colgen_seconds is None
