"""The report's AI workloads section says what the placement could not do for a job, beside its row."""

from __future__ import annotations

from typing import Any

from backbone.report import render_report


def job(name: str, met: bool, note: str = "") -> dict[str, Any]:
    """A placed job's row as the place summary gives it."""
    return {"job": name, "site": "lulea", "gpus": 512.0, "sites": "lulea", "sync_gbps": 0.0, "checkpoint_gbps": 0.0,
            "checkpoint_site": "", "checkpoint_policy_met": met, "checkpoint_policy_note": note,
            "dataset_gbps": 0.0, "datasets_remote": "", "datasets_replicated": "", "usd_per_gpu": 40_000.0,
            "cheapest_allowed_site": "lulea", "cheapest_usd_per_gpu": 40_000.0}


def workloads(*jobs: dict[str, Any]) -> dict[str, Any]:
    return {"jobs": list(jobs), "replicas": [], "datasets": [], "tbps_by_class": [], "unplaced": [],
            "not_considered": 0}


def test_a_job_whose_checkpoint_policy_is_not_met_is_named_with_the_reason() -> None:
    why = "no storage site in another region within the residency of eu-multilingual"
    html = render_report({"workloads": workloads(job("eu-job", False, why), job("ok-job", True))}, {})
    line = html[html.index("Checkpoint replica policy not met"):]
    line = line[:line.index("</p>")]
    assert f"eu-job: {why}" in line and "ok-job" not in line
    met = render_report({"workloads": workloads(job("ok-job", True))}, {})
    assert "Checkpoint replica policy not met" not in met


def test_jobs_left_out_say_the_plan_turned_them_off() -> None:
    html = render_report({"workloads": {**workloads(), "not_considered": 3}}, {})
    assert "3 training jobs were not placed or routed in this plan: it set <code>place.scenario_jobs: false</code>" \
        in html
