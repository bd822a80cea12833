"""``backbone failures`` with a failure policy per class: ``paused Gbps`` beside unmet when a class pauses,
``--failure-policy`` for the run, and a clear error for a bad policy (issue #29 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backbone.api.cli.main import app
from backbone.io import save_scenario
from tests.solver.test_failure_policy import ring

ARGS = ["--kind", "srlg", "--engine", "serial"]


def _scenario(tmp_path: Path) -> Path:
    save_scenario(ring(), tmp_path / "ring")
    return tmp_path / "ring"


def test_failures_table_shows_paused_beside_unmet(tmp_path: Path) -> None:
    folder = _scenario(tmp_path)
    r = CliRunner().invoke(app, ["failures", str(folder), *ARGS, "--out", str(tmp_path / "out")],
                           env={"COLUMNS": "220"})
    assert r.exit_code == 0, r.output
    assert "paused Gbps" in r.output
    header = next(line for line in r.output.splitlines() if "paused Gbps" in line)
    assert header.index("unmet Gbps") < header.index("paused Gbps")
    assert "survived 4 of 4" in r.output
    doc = json.loads((tmp_path / "out" / "failures.json").read_text())
    cut = next(s for s in doc["scenarios"] if s["scenario"] == "srlg:cable-ab")
    assert cut["paused_gbps"] == 150.0 and cut["survived"] and doc["failure_policy"]["training-sync"] == "pause"
    assert "paused_gbps" in (tmp_path / "out" / "failures_scenarios.csv").read_text().splitlines()[0]


def test_failure_policy_flag_makes_training_sync_survive(tmp_path: Path) -> None:
    folder = _scenario(tmp_path)
    r = CliRunner().invoke(app, ["failures", str(folder), *ARGS, "--failure-policy", "training-sync=survive",
                                 "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    cut = next(s for s in doc["scenarios"] if s["scenario"] == "srlg:cable-ab")
    assert cut["paused_gbps"] == 0.0 and not cut["survived"] and cut["unmet_gbps"] > 59.0
    r = CliRunner().invoke(app, ["failures", str(folder), *ARGS, "--failure-policy", "training-sync=survive"],
                           env={"COLUMNS": "220"})
    assert r.exit_code == 0 and "paused Gbps" not in r.output  # shown only when non-zero


def test_bad_failure_policy_is_a_clear_error(tmp_path: Path) -> None:
    folder = _scenario(tmp_path)
    for flag, words in (("training-sync=wait", ("failure_policy.training-sync", "survive", "pause")),
                        ("training-sync", ("CLASS=survive",))):
        r = CliRunner().invoke(app, ["failures", str(folder), *ARGS, "--failure-policy", flag])
        assert r.exit_code not in (0, 1), r.output  # a validation error's exit code, not a crash
        assert "Traceback" not in r.output
        for w in words:
            assert w in r.output, (w, r.output)


@pytest.mark.slow
def test_plan_pauses_training_sync_and_says_so(tmp_path: Path) -> None:
    """The plan of the ring (C a data center): every failure state pauses the 150 Gbps of training-sync, so the
    design buys nothing, the independent check agrees, and the report shows paused Gbps beside unmet."""
    net = ring()
    sites = net.sites.copy()
    sites.loc["C", ["kind", "gpus_max", "power_available_mw"]] = ["datacenter", 1000, 10.0]
    save_scenario(net.copy_with(sites=sites), tmp_path / "ring")
    out = tmp_path / "plan"
    r = CliRunner().invoke(app, ["plan", str(tmp_path / "ring"), "--out", str(out), "--verify"])
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text())
    assert plan["upgrade_cost_usd"] == 0.0 and plan["survivability"]["survived"] == plan["survivability"]["states"]
    assert plan["survivability_check"]["ok"]
    failures = json.loads((out / "failures.json").read_text())
    assert {s["paused_gbps"] for s in failures["scenarios"]} == {150.0}
    html = (out / "report.html").read_text()
    assert "paused Gbps" in html and "training-sync" in html
