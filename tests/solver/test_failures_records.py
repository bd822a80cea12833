"""The sweep's typed records (solver/failures/records.py, impact.py): built as classes by every engine, worker
processes included, and dumped to the JSON keys ``failures.json`` and the API have always had, only at that edge."""

from __future__ import annotations

import json
import math
import pickle
from dataclasses import fields

import pytest

from backbone.artifacts import json_text
from backbone.model import Network
from backbone.solver.failures import (
    SCENARIO_COLUMNS,
    FailureImpact,
    FailureOptions,
    ScenarioRecord,
    SweepBaseline,
    enumerate_scenarios,
    run_sweep,
    sweep,
)
from backbone.solver.failures.impact import assess_state

RECORD_KEYS = (
    "scenario", "kind", "failed", "links_down", "links_derated", "sites_down", "derate", "status",
    "impact_gbps", "unmet_gbps", "unmet_by_class", "unmet_disconnected_gbps", "unmet_capacity_gbps",
    "slo_violation_gbps", "slo_violations", "slo_violation_demands", "lost_gbps", "paused_gbps", "unmet_gbps_total",
    "mlu",
    "mlu_lower_bound", "gap", "overloaded", "survived",
    "method", "path_lp_only", "carried_gbps", "p50_latency_inflation_ms", "p99_latency_inflation_ms",
    "worst_latency_inflation_ms", "link_utilisation", "seconds", "untouched",
)
"""A scenario record's JSON keys, in order (``failures.json`` ``scenarios`` leaves out ``link_utilisation``)."""

BASELINE_KEYS = ("mlu", "mlu_lower_bound", "gap", "overloaded", "unmet_gbps", "unmet_known", "unmet_by_class",
                 "unmet_by_reason", "status", "solves", "method", "definition", "carried_gbps", "link_utilisation")


def test_records_dump_to_the_json_keys_and_read_back(submarine_cut: Network) -> None:
    res = sweep(submarine_cut, FailureOptions(kind="srlg", engine="serial"))
    assert res.scenarios and all(isinstance(r, ScenarioRecord) for r in res.scenarios)
    assert isinstance(res.baseline, SweepBaseline)
    # the keys: every field, the impact's flattened in where the record has always had them
    impact_keys = tuple(f.name for f in fields(FailureImpact))
    record_keys = tuple(f.name for f in fields(ScenarioRecord))
    assert record_keys[:record_keys.index("impact")] + impact_keys + record_keys[record_keys.index("impact") + 1:] \
        == RECORD_KEYS
    assert set(SCENARIO_COLUMNS) <= set(RECORD_KEYS)  # failures_scenarios.csv's columns
    summary = res.summary()
    for r in res.scenarios:
        assert tuple(r.to_dict()) == RECORD_KEYS
        # through the file edge (NaN -> null) and back, and again: the same text
        text = json_text(r.to_dict())
        assert json_text(ScenarioRecord.from_dict(json.loads(text)).to_dict()) == text
    assert [tuple(s) for s in summary["scenarios"]] == [tuple(k for k in RECORD_KEYS if k != "link_utilisation")] * len(
        res.scenarios)
    assert [s["scenario"] for s in summary["scenarios"]] == [r.scenario for r in res.worst_first()]
    assert tuple(res.baseline.to_dict()) == BASELINE_KEYS
    assert tuple(summary["baseline"]) == tuple(k for k in BASELINE_KEYS if k != "link_utilisation")
    # the baseline's figures are the assessment's own summary (one definition), plus carried and per-link figures
    state = assess_state(submarine_cut)
    assert tuple(state.summary().document()) == BASELINE_KEYS[:-2]
    assert res.baseline.impact.mlu == pytest.approx(state.mlu) and res.baseline.impact.definition == state.definition
    # one impact type: the baseline's impact is te's impact section, field for field
    assert type(res.baseline.impact) is type(state.summary())
    assert tuple(res.baseline.impact.document()) == BASELINE_KEYS[:-2]


def test_unknown_figures_stay_unknown_through_the_edge(submarine_cut: Network) -> None:
    """A record read back from JSON: null figures are NaN (unknown), never 0; the JSON summary's records (no
    ``link_utilisation``) read back too."""
    rec = sweep(submarine_cut, FailureOptions(kind="srlg", engine="serial")).scenarios[0]
    doc = {**rec.to_dict(), "unmet_gbps": None, "impact_gbps": None, "carried_gbps": None}
    doc.pop("link_utilisation")
    back = ScenarioRecord.from_dict(doc)
    assert math.isnan(back.impact.unmet_gbps) and math.isnan(back.impact.impact_gbps)
    assert math.isnan(back.carried_gbps) and back.link_utilisation == {}
    assert back.failed == rec.failed and back.impact.survived == rec.impact.survived
    with pytest.raises(KeyError, match="survived"):
        FailureImpact.from_dict({k: v for k, v in rec.to_dict().items() if k != "survived"})


def test_a_worker_process_sweep_returns_the_classes(submarine_cut: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local process pool's workers build the records and send them back pickled: typed, and the same
    figures as the serial engine's."""
    import backbone.solver.failures.engines as engines

    scenarios = enumerate_scenarios(submarine_cut, "link")
    serial_opts = FailureOptions(kind="link", engine="serial")
    serial = run_sweep(submarine_cut, scenarios, serial_opts)

    def not_here(*args: object) -> None:
        raise AssertionError("evaluated in the calling process, not in a worker")

    monkeypatch.setattr(engines, "evaluate_scenario", not_here)  # spawned workers import the real one
    pooled = run_sweep(submarine_cut, scenarios, serial_opts.model_copy(update={"engine": "local", "workers": 2,
                                                                                "batch_size": 1}))
    monkeypatch.undo()
    assert all(isinstance(r, ScenarioRecord) and isinstance(r.impact, FailureImpact) for r in pooled)
    assert [r.scenario for r in pooled] == [s.id for s in scenarios]

    def figures(r: ScenarioRecord) -> str:
        return json_text({k: v for k, v in r.to_dict().items() if k != "seconds"})

    assert [figures(r) for r in pooled] == [figures(r) for r in serial]
    assert [figures(pickle.loads(pickle.dumps(r))) for r in serial] == [figures(r) for r in serial]
    with pytest.raises(AttributeError):
        serial[0].scenario = "changed"  # type: ignore[misc]  # frozen: a record is what was measured
