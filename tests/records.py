"""Hand-built failure sweep records for tests of their readers (one definition).

Import as ``from tests.records import scenario_record``.
"""

from __future__ import annotations

from typing import Any

from backbone.solver.failures import FailureImpact, ScenarioRecord


def scenario_record(scenario: str, **impact: Any) -> ScenarioRecord:
    """A single-link :class:`ScenarioRecord` named ``scenario`` that survived with no impact, except the
    :class:`FailureImpact` fields given in ``impact`` (``survived=False``, ``impact_gbps=5.0``, ...)."""
    figures: dict[str, Any] = {
        "impact_gbps": 0.0, "unmet_gbps": 0.0, "unmet_by_class": {}, "unmet_disconnected_gbps": 0.0,
        "unmet_capacity_gbps": 0.0, "slo_violation_gbps": 0.0, "slo_violations": 0, "slo_violation_demands": (),
        "lost_gbps": 0.0, "paused_gbps": 0.0, "unmet_gbps_total": 0.0, "mlu": 0.5, "mlu_lower_bound": 0.5, "gap": 0.0,
        "overloaded": False, "survived": True, **impact}
    return ScenarioRecord(scenario=scenario, kind="link", failed=(scenario.split(":")[-1],), links_down=1,
                          links_derated=0, sites_down=0, derate=None, status="optimal",
                          impact=FailureImpact(**figures), method="path", path_lp_only=False, carried_gbps=0.0,
                          p50_latency_inflation_ms=0.0, p99_latency_inflation_ms=0.0,
                          worst_latency_inflation_ms=0.0, link_utilisation={}, seconds=0.0)
