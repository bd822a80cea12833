"""One meaning of unmet: the TE result's per-demand and summary unmet are the impact's (traffic that cannot be
carried at <= 100 % utilisation), also when the min-MLU routing overloads links (the notebook trap: 0 unmet at
MLU 128 % while the impact said 39,147.5 Gbps)."""

from __future__ import annotations

import pytest

import backbone
from backbone.model import Network


@pytest.fixture(scope="module")
def overloaded(small_world: Network) -> Network:
    mlu = backbone.solve_te(small_world, impact=False, bound=False).mlu
    return small_world.scale_demand(2.5 / mlu)  # the intact network needs 250 % of its busiest link


def test_an_overloaded_routing_reports_the_impacts_unmet_in_its_table_and_summary(overloaded: Network) -> None:
    r = backbone.solve_te(overloaded, verify=True)  # the independent check passes on the rewritten tables
    s, d = r.summary, r.demands
    assert r.mlu == pytest.approx(2.5)
    assert s.impact is not None
    impact = s.impact.unmet_gbps
    assert impact > 0
    assert d["unmet_gbps"].sum() == pytest.approx(impact) == pytest.approx(s.unmet_gbps)
    assert (d["carried_gbps"] + d["unmet_gbps"]).to_numpy() == pytest.approx(d["demand_gbps"].to_numpy())
    assert s.carried_gbps == pytest.approx(d["carried_gbps"].sum())
    assert s.carried_gbps + s.unmet_gbps == pytest.approx(s.demand_gbps)
    # what the routing puts on its paths (above capacity) is named apart
    assert d["routed_gbps"].sum() == pytest.approx(r.paths["gbps"].sum()) == pytest.approx(s.routed_gbps)
    assert s.routed_gbps == pytest.approx(s.demand_gbps)
    assert (d.loc[d["unmet_gbps"] > 0, "reason"] != "").all()
    assert sum(v.unmet_gbps for v in s.by_class.values()) == pytest.approx(impact)
    assert any("overloads links" in n for n in s.notes)


def test_the_te_task_writes_the_same_unmet(overloaded: Network, tmp_path) -> None:
    import pandas as pd

    from backbone.solver.tasks import run_task

    s = run_task("te", overloaded, {}, tmp_path).document()
    csv = pd.read_csv(tmp_path / "te_demands.csv")
    assert csv["unmet_gbps"].sum() == pytest.approx(s["unmet_gbps"], rel=1e-4) == pytest.approx(
        s["impact"]["unmet_gbps"], rel=1e-4)
    assert s["unmet_demands_total"] == int((csv["unmet_gbps"] > 0).sum()) > 0


def test_a_routing_within_capacity_is_unchanged(small_world: Network) -> None:
    r = backbone.solve_te(small_world)
    assert r.mlu < 1
    assert "routed_gbps" not in r.demands and "routed_gbps" not in r.summary.model_fields_set
    assert r.summary.impact is not None and r.summary.unmet_gbps == pytest.approx(r.summary.impact.unmet_gbps)
