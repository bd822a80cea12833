"""``plan.json`` figures the diff and the deck compare: unmet traffic per class and latency-SLO violations after the
upgrades (by the one definition: :meth:`StateAssessment.unmet_by_class`, :func:`slo_violation_summary`), and the
residency check every plan runs (not only with ``--verify``)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from backbone.compare import diff
from backbone.io import load_scenario
from backbone.model import Network
from backbone.solver.checks.placement import residency_violations
from backbone.solver.failures.impact import FailureImpact, assess_state, slo_violation_summary
from backbone.solver.placement.options import PlaceOptions
from tests.conftest import SharedRun
from tests.records import scenario_record


def test_plan_json_has_unmet_by_class_and_slo_after_the_upgrades(small_world_grown_plan: SharedRun) -> None:
    plan = json.loads((small_world_grown_plan.out / "plan.json").read_text())
    te = json.loads((small_world_grown_plan.out / "te.json").read_text())
    after = assess_state(load_scenario(small_world_grown_plan.out / "scenario_after"))
    assert plan["unmet_by_class_gbps_after"] == pytest.approx(after.unmet_by_class())
    assert sum(plan["unmet_by_class_gbps_after"].values()) == pytest.approx(plan["unmet_gbps_after"])
    assert plan["unmet_by_class_gbps"] == pytest.approx(te["impact"]["unmet_by_class"])
    failures = json.loads((small_world_grown_plan.out / "failures.json").read_text())
    impacts = [FailureImpact.from_dict(r) for r in failures["scenarios"]]  # failures.json's records, read back
    assert plan["slo_violations"] == slo_violation_summary(impacts, plan["slo_violations"]["intact_gbps"]).document()
    slo = plan["slo_violations_after"]
    assert set(slo) == {"states", "worst_gbps", "demands", "intact_gbps"}
    assert 0 <= slo["states"] <= len(plan["before_after"])
    assert slo["intact_gbps"] == pytest.approx(after.slo_unmet_gbps)


def test_slo_violation_summary_counts_states_with_any() -> None:
    impacts = [scenario_record(s, slo_violation_gbps=g, slo_violations=n).impact
               for s, g, n in (("a", 0.0, 0), ("b", 12.5, 2), ("c", 3.0, 1))]
    assert slo_violation_summary(impacts, 1.5).document() == {"states": 2, "worst_gbps": 12.5, "demands": 3,
                                                               "intact_gbps": 1.5}
    assert slo_violation_summary([], None).worst_gbps == 0.0


def test_residency_violations_find_a_forbidden_assignment(small_world: Network) -> None:
    opts = PlaceOptions()  # the shipped EU rule: EU demand stays in EU sites
    assignments = pd.DataFrame([
        {"metro": "frankfurt", "class": "interactive", "site": "frankfurt", "period": 0, "gpus": 100.0},
        {"metro": "frankfurt", "class": "batch", "site": "ashburn", "period": 0, "gpus": 40.0},
        {"metro": "london", "class": "batch", "site": "ashburn", "period": 0, "gpus": 30.0},  # GB: no rule
    ])
    bad = residency_violations(small_world, opts, assignments)
    assert bad[["metro", "site", "metro_country", "site_country"]].values.tolist() == [
        ["frankfurt", "ashburn", "DE", "US"]]
    assert residency_violations(small_world, PlaceOptions(residency=[]), assignments).empty


def test_residency_is_in_every_plan_and_in_the_diff(small_world_default_plan: SharedRun,
                                                    small_world_grown_plan: SharedRun) -> None:
    """Without --verify: plan.json ``residency`` is there, and the diff's KPIs read it (and the per-class unmet and
    SLO violations after the upgrades)."""
    plans = [json.loads((r.out / "plan.json").read_text()) for r in (small_world_default_plan, small_world_grown_plan)]
    for plan in plans:
        assert "verification" not in plan  # the shared plans ran without --verify
        assert plan["residency"]["rules"] == 1 and plan["residency"]["violations"] == 0
    k = diff(small_world_default_plan.out, small_world_grown_plan.out).kpis.set_index("kpi")
    assert k.at["residency_violations", "before"] == 0 and k.at["residency_violations", "after"] == 0
    for cls, value in plans[1]["unmet_by_class_gbps_after"].items():
        assert k.at[f"unmet_intact_after_gbps[{cls}]", "after"] == pytest.approx(value)
    assert k.at["slo_violation_states_after", "after"] == plans[1]["slo_violations_after"]["states"]
    assert k.at["slo_violation_worst_after_gbps", "before"] == pytest.approx(plans[0]["slo_violations_after"]["worst_gbps"])
