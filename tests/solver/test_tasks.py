"""The task registry and the typed task results: every shipped kind is registered with its function and options
model, and every task's summary matches its documented summary model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pydantic
import pytest

from backbone.errors import ValidationError
from backbone.model import Network
from backbone.solver.tasks import Task, run_task, task_for
from backbone.solver.tasks.registry import TASKS
from backbone.solver.tasks.summaries import PlanSummary, TypedSummary

KINDS = ("te", "place", "failures", "design", "plan", "calibrate", "roadmap")


def test_every_shipped_kind_is_registered_with_its_function_and_options() -> None:
    assert tuple(TASKS) == KINDS
    for kind, task in TASKS.items():
        assert isinstance(task, Task) and task.kind == kind and callable(task.run)
        task.options_model.model_validate({})  # the defaults are valid options


def test_an_unknown_kind_or_a_broken_extra_is_a_validation_error() -> None:
    with pytest.raises(ValidationError) as err:
        task_for("teh")
    assert err.value.problems[0].field == "kind" and "choose one of" in err.value.problems[0].message
    with pytest.raises(ValidationError) as err:
        task_for("ghost", {"ghost": "no_such_module:run"})
    assert "not available" in err.value.problems[0].message


@pytest.mark.slow
@pytest.mark.parametrize("kind, options, objects", [
    ("te", {}, ("te",)),
    ("place", {"time_limit_s": 30}, ("placement",)),
    ("failures", {"engine": "serial"}, ("sweep",)),
    ("design", {"time_limit_s": 20}, ("design",)),
], ids=["te", "place", "failures", "design"])
def test_each_task_returns_its_typed_result_and_a_summary_matching_its_model(
        small_world: Network, tmp_path: Path, kind: str, options: dict, objects: tuple[str, ...]) -> None:
    result = run_task(kind, small_world, options, tmp_path)
    summary = result.summary  # built as the model, every field declared; dumped only at the edge
    assert isinstance(summary, TypedSummary) and result.to_dict()["status"] == summary.status
    document = result.document()
    assert type(summary).model_validate(document).document() == document  # the document is the model's
    with pytest.raises(pydantic.ValidationError, match="surprise"):
        type(summary).model_validate({**document, "surprise": 1})
    for name in objects:
        assert getattr(result, name) is not None
    assert result.files[-1] == f"{kind}.json" and all((tmp_path / f.rstrip("/")).exists() for f in result.files)


@pytest.mark.slow
def test_the_plan_result_carries_every_stage(small_world: Network) -> None:
    result = run_task("plan", small_world, {"skip_upgrades": True, "maps": False,
                                             "failures": {"engine": "serial"}})
    summary = result.summary
    assert isinstance(summary, PlanSummary) and summary.scenario_after is None and result.files == []
    route = result.route  # type: ignore[attr-defined]
    assert len(route.extra_demands) == len(route.routed.demands) - len(small_world.demands)
    assert route.te.te.demands["carried_gbps"].sum() == pytest.approx(summary.carried_gbps)
    assert result.after.state.mlu == pytest.approx(summary.mlu_after)  # type: ignore[attr-defined]
    assert result.upgrade.summary.status == "skipped"  # type: ignore[attr-defined]
    # built as the model, dumped once at the edge: the document is the model's, and the model declares every field
    document = result.document()
    assert document == summary.document() and PlanSummary.model_validate(document) == summary
    assert summary.stages[0].stage == "place" and summary.failures_today.scenarios == summary.failure_scenarios
    assert "verification" not in document and "compared_with" not in document  # not computed: left out
    with pytest.raises(pydantic.ValidationError, match="surprise"):
        PlanSummary.model_validate({**document, "surprise": 1})


def test_a_typed_summary_document_has_plain_values_and_leaves_out_what_was_not_computed() -> None:
    import numpy as np

    from backbone.solver.roadmap.summary import BudgetShortfall

    class Probe(TypedSummary):
        OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)
        cost_usd: float | None
        table: dict[str, Any]
        shortfalls: list[BudgetShortfall]
        verification: dict[str, Any] | None = None

    probe = Probe(cost_usd=None, table={"n": np.int64(3), "x": np.array([1.5])},
                  shortfalls=[{"period": "2027Q1", "shortfall_usd": 2, "reason": "over budget"}])
    assert probe.shortfalls[0].shortfall_usd == 2.0
    doc = probe.document()
    assert doc == {"cost_usd": None, "table": {"n": 3, "x": [1.5]},
                   "shortfalls": [{"period": "2027Q1", "shortfall_usd": 2.0, "reason": "over budget"}]}
    assert type(doc["table"]["n"]) is int  # numpy values become Python ones
    probe.verification = {"ok": True}
    assert probe.document()["verification"] == {"ok": True}
    with pytest.raises(pydantic.ValidationError):
        probe.cost_usd = "a lot"  # type: ignore[assignment]  # assignments are validated
    with pytest.raises(pydantic.ValidationError, match="extra"):
        Probe(cost_usd=1.0, table={}, shortfalls=[], extra=1)


def test_calibrate_summary_matches_its_model(shipped: Network) -> None:
    result = run_task("calibrate", shipped, {"max_iterations": 1})
    summary = result.summary
    assert summary.pairs == len(result.calibration.pairs) > 0  # type: ignore[attr-defined]
    assert summary.errors.after == result.calibration.after  # type: ignore[attr-defined]
    assert result.document() == result.calibration.to_dict()  # type: ignore[attr-defined]


@pytest.mark.parametrize("options", [
    {}, {"objective": "ecmp"}, {"objective": "max-throughput", "method": "exact"}, {"formulation": "edge"},
    {"objective": "min-latency", "verify": True}, {"method": "colgen", "bound": True},
], ids=["default", "ecmp", "max-throughput-exact", "edge", "min-latency-verified", "colgen-bound"])
def test_the_te_summary_holds_every_figure_the_routing_reports_and_no_other(small_world: Network,
                                                                            options: dict[str, Any]) -> None:
    """TESummary declares every key any TE method reports: the document is the routing's record plus the task's
    figures, no key dropped, none invented, the values unchanged (extra keys would fail: ``extra`` is forbidden)."""
    import json
    import math

    result = run_task("te", small_world, options)
    record, document = result.te.summary.document(), result.document()  # type: ignore[attr-defined]
    added = {"unmet_demands", "unmet_demands_total"} | ({"verification"} if options.get("verify") else set())
    assert set(document) == set(record) | added
    assert document["unmet_demands_total"] == int((result.te.demands["unmet_gbps"] > 0).sum())  # type: ignore[attr-defined]
    plain = json.loads(json.dumps({k: v for k, v in record.items() if k != "total_seconds"}, default=float))
    for key, value in plain.items():
        got = document[key]
        if isinstance(value, float) and math.isnan(value):
            assert isinstance(got, float) and math.isnan(got), key
        else:
            assert got == value, key
