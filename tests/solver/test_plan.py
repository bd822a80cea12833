"""The main job end to end: `backbone plan` on a small scenario (the shipped one runs through the API with its
defaults: tests/api/test_api_workers.py).

Every file is checked to exist and to agree with the JSON; the report is opened in headless
Chromium with the network disabled.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backbone.io import load_scenario, save_scenario
from backbone.model import Network
from tests.conftest import SharedRun
from tests.plans import check_plan_dir


@pytest.mark.slow
def test_plan_small_scenario_end_to_end(small_world: Network, tmp_path: Path) -> None:
    from backbone.api.cli.main import app

    scen = save_scenario(small_world, tmp_path / "scen")
    plan_file = tmp_path / "study.yaml"
    plan_file.write_text("# study: 20% growth, every SRLG\ndemand_growth: 1.2\nplace:\n  time_limit_s: 30\n"
                         "failures:\n  engine: serial\ndesign:\n  utilisation_ceiling: 0.9\n  time_limit_s: 20\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["plan", str(scen), "--out", str(out), "--plan", str(plan_file), "--json",
                                 "--verify"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["plan_file"] == str(plan_file)
    assert summary["gpus_added"] > 0  # demand (x 1.2) exceeds the installed GPUs
    assert summary["failure_scenarios"] == len(small_world.srlgs) + len(small_world.links_in_no_srlg())
    assert summary["verification"]["place"] is True and summary["verification"]["route"] is True
    check_plan_dir(out, summary)
    assert "demand_growth: 1.2" in (out / "report.html").read_text()


def test_plan_rejects_a_bad_plan_file(small_world: Network, tmp_path: Path) -> None:
    from backbone.api.cli.main import app

    scen = save_scenario(small_world, tmp_path / "scen")
    bad = tmp_path / "bad.yaml"
    bad.write_text("place:\n  objective: cheapest\nsurprise: 1\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["plan", str(scen), "--out", str(out), "--plan", str(bad)])
    assert r.exit_code == 2
    assert "surprise" in r.output and "Traceback" not in r.output
    assert not out.exists() or not any(out.iterdir())


def test_a_plan_file_lists_every_mistake_with_its_path_line_and_a_hint(tmp_path: Path) -> None:
    from backbone.errors import ValidationError
    from backbone.solver.tasks.plan import load_plan_file

    plan = tmp_path / "study.yaml"
    plan.write_text("# study with mistakes\ndemand_growht: 1.2\nplace: {objective: cheapest, time_limit_s: 60}\n"
                    "te:\n  objective: min-mlu\n  pathz: 4\nfailures: {kind: srlg}\n"
                    "design: {utilisation_ceiling: 0.8, max_state: 8}\n")
    with pytest.raises(ValidationError) as err:
        load_plan_file(plan)
    got = {(p.field, p.record): p.message for p in err.value.problems}
    assert set(got) == {("demand_growht", "line 2"), ("place.objective", "line 3"), ("te.pathz", "line 6"),
                        ("design.max_state", "line 8")}
    assert "did you mean 'demand_growth'?" in got[("demand_growht", "line 2")]
    assert "did you mean 'k_paths'?" in got[("te.pathz", "line 6")]
    assert "did you mean 'max_states'?" in got[("design.max_state", "line 8")]
    assert all(p.file == str(plan) for p in err.value.problems)
    broken = tmp_path / "broken.yaml"
    broken.write_text("te: {objective: min-mlu\nplace: [1, 2\n")
    with pytest.raises(ValidationError) as err:
        load_plan_file(broken)
    assert err.value.problems[0].record == "line 2" and "line 2, column" in err.value.problems[0].message


@pytest.mark.slow
@pytest.mark.browser
def test_plan_report_opens_offline_in_chromium(small_world: Network, tmp_path: Path) -> None:
    from backbone.solver.tasks import run_task
    from tests.backbone.test_maps_html import console_messages, run_chromium

    out = tmp_path / "out"
    run_task("plan", small_world, {"failures": {"engine": "serial"}, "design": {"time_limit_s": 20}}, out)
    dom = run_chromium(out / "report.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    assert dom.stdout.count("<img") >= 4 and "Where the GPUs go" in dom.stdout
    shot = tmp_path / "report.png"
    run = run_chromium(out / "report.html", tmp_path, f"--screenshot={shot}")
    assert run.returncode == 0 and shot.stat().st_size > 10_000


@pytest.mark.parametrize("options", [
    {"demand_growth": 1.2, "skip_upgrades": True, "maps": False, "failures": {"engine": "serial"}},
    pytest.param({}, marks=pytest.mark.slow),  # the defaults
], ids=["cheap", "defaults"])
@pytest.mark.slow
def test_a_plan_without_an_output_folder_carries_the_placement_traffic(small_world: Network, tmp_path: Path,
                                                                        options: dict,
                                                                        request: pytest.FixtureRequest) -> None:
    """Stages hand objects to each other, never files: a plan run from Python without an output folder routes
    the same traffic (the scenario's plus the placement's) and finds the same utilisation as one with a folder.
    (With the defaults, the run with a folder is the session's shared ``small_world_default_plan``.)"""
    from backbone.solver.tasks import run_task

    without = run_task("plan", small_world, options, None).document()
    if options:
        with_folder = run_task("plan", small_world, options, tmp_path / "out").document()
    else:
        with_folder = request.getfixturevalue("small_world_default_plan").summary
    scenario_gbps = float(small_world.scale_demand(options.get("demand_growth", 1.0)).demands["demand_gbps"].sum())
    assert with_folder["carried_gbps"] > scenario_gbps + 1.0  # the placement added backbone traffic
    for key in ("carried_gbps", "mlu", "mlu_after", "unmet_gbps", "unmet_gbps_after", "gpus_added"):
        assert without[key] == pytest.approx(with_folder[key], rel=1e-6, abs=1e-6), key
    assert without["stages"][1]["note"] == with_folder["stages"][1]["note"]  # "<n> placement demands added"
    assert without["scenario_after"] is None and with_folder["scenario_after"] == "scenario_after"


@pytest.mark.slow
def test_the_reports_today_figures_are_backbone_failures_on_the_scenario(small_world: Network, tmp_path: Path) -> None:
    """"What breaks today" is today's network with today's traffic: the same sweep as ``backbone failures`` on the
    scenario (not the network carrying the plan's new GPU traffic, which is shown apart and labelled so)."""
    from backbone.solver.tasks import run_task

    failures = {"engine": "serial"}
    scenario = small_world.scale_demand(1.5)  # today, the Atlantic SRLG is not carried
    plan = run_task("plan", scenario, {"demand_growth": 2.0, "skip_upgrades": True, "maps": False,
                                       "failures": failures}, tmp_path / "plan").document()
    today = run_task("failures", scenario, failures, None).document()
    assert today["not_survived"] >= 1
    got = plan["failures_today"]
    assert (got["scenarios"], got["survived"], got["not_survived"]) == (
        today["scenarios_run"], today["survived"], today["not_survived"])
    assert got["worst_failure"] == today["worst"][0]["scenario"]
    assert got["worst_failure_impact_gbps"] == pytest.approx(today["worst"][0]["impact_gbps"])
    # the plan's traffic (x 2 growth and the placement's) breaks more than today's: the two are told apart
    assert plan["failures_with_unmet_demand"] > today["not_survived"]
    report = (tmp_path / "plan" / "report.html").read_text()
    kind = "single-SRLG"
    assert f"{today['not_survived']} of {today['scenarios_run']} {kind} failures not carried</b> today" in report
    assert (f"{plan['failures_with_unmet_demand']} of {plan['failure_scenarios']} {kind} failures not carried</b> on "
            "today&#x27;s links carrying today&#x27;s traffic plus the placement&#x27;s new GPU traffic") in report
    today_section = report.split("What breaks today")[1].split("With the plan&#x27;s GPU traffic")[0]
    for r in today["worst"][:5]:
        assert f"<td class=\"t\">{r['scenario']}</td><td class=\"\">{r['impact_gbps']:,.1f}</td>" in today_section


def test_a_srlg_plan_reports_single_link_survivability_too(small_world_default_plan: SharedRun) -> None:
    """The default plan designs for single SRLGs; one more sweep of the planned backbone says how many single-link
    failures it carries, in plan.json, the headline and the report."""
    s, out = small_world_default_plan.summary, small_world_default_plan.out
    lc = s["link_survivability"]
    after = load_scenario(str(out / "scenario_after"))
    assert s["survivability"]["failure_kind"] == "srlg" and "single-SRLG failures" in s["headline"]
    assert lc["failure_kind"] == "link" and lc["states"] == len(after.links)
    assert lc["survived"] + len(lc["not_carried"]) == lc["states"]
    assert sorted(s["links_swept_as_own_group"]) == sorted(after.links_in_no_srlg())  # said in plan.json
    assert f"it carries {lc['survived']} of {lc['states']}" in s["headline"]
    assert f"Single-link failures: {lc['survived']} of {lc['states']} carried" in (out / "report.html").read_text()


@pytest.mark.slow
def test_plan_survive_srlg_and_link_in_one_design(small_world: Network, tmp_path: Path) -> None:
    from backbone.api.cli.main import app

    scen = save_scenario(small_world, tmp_path / "scen")
    r = CliRunner().invoke(app, ["plan", str(scen), "--out", str(tmp_path / "out"), "--survive", "srlg,link",
                                 "--no-maps", "--json"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    after = load_scenario(str(tmp_path / "out" / "scenario_after"))
    from backbone.solver.failures import enumerate_scenarios

    union = enumerate_scenarios(after, "srlg,link")
    assert s["failure_kind"] == "srlg,link" and s["survivability"]["failure_kind"] == "srlg,link"
    assert s["survivability"]["states"] == len(union) >= len(after.links)
    assert "single-SRLG and single-link failures" in s["headline"]
    assert s["link_survivability"] is None  # the design covers single links itself
    bad = CliRunner().invoke(app, ["plan", str(scen), "--out", str(tmp_path / "bad"), "--survive", "cable"])
    assert bad.exit_code == 2 and "survive" in bad.output
