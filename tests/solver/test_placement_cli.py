"""``backbone place``: JSON-only stdout, files, exit codes (3 when demand cannot be served)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from backbone.api.cli.main import app
from backbone.io import save_scenario
from tests.nets import europe


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "europe"
    save_scenario(europe(cap_gbps=50), path)
    return path


def run(*args: str):
    return CliRunner().invoke(app, ["place", *args])


def test_place_json_and_files(scenario, tmp_path) -> None:
    opts = tmp_path / "opts.json"
    # 0.1 Gbps per GPU (the default is now derived from tokens, 0.0066): the LON link then binds and splits the GPUs
    opts.write_text(json.dumps({"residency": [], "block_gpus": 1, "gbps_per_gpu": 0.1}))
    out = tmp_path / "out"
    r = run(str(scenario), "--options", str(opts), "--json", "--verify", "--out", str(out))
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["status"] == "optimal"
    assert s["gpus_added_by_site"] == {"LON": 500, "PAR": 500}
    assert s["verification"]["ok"]
    assert json.loads((out / "place.json").read_text())["cost_usd"] == pytest.approx(s["cost_usd"])
    assert (out / "place_flows.csv").exists()


def test_place_table_on_stdout(scenario) -> None:
    r = run(str(scenario))
    assert r.exit_code == 0, r.output
    assert "considered -> chosen" in r.stdout and "PAR" in r.stdout


def test_place_bad_options_exit_2(scenario) -> None:
    r = run(str(scenario), "--json", "--periods", "7")
    assert r.exit_code == 2 and r.stdout == ""
    bad = run(str(scenario), "--json", "--objective", "max-served")
    assert bad.exit_code == 2 and "budget_usd" in bad.stderr


def test_place_partial_exits_3_and_writes_the_plan(tmp_path) -> None:
    net = europe(par=dict(gpus_max=600))
    save_scenario(net, tmp_path / "s")
    r = run(str(tmp_path / "s"), "--json", "--out", str(tmp_path / "out"))
    assert r.exit_code == 3
    s = json.loads(r.stdout)
    assert s["status"] == "partial" and s["unserved_metros"]
    assert any("GPU maximum" in x for x in s["infeasibility"])
    assert "partial" in r.stderr and "unserved metros" in r.stderr
    written = json.loads((tmp_path / "out" / "place.json").read_text())
    assert written["status"] == "partial" and (tmp_path / "out" / "place_sites.csv").exists()


def test_place_verify_failure_exits_5(scenario, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import backbone.solver.checks.placement as checks
    from backbone.solver.checks import Violation

    real = checks.check_placement

    def failing(*a, **k):  # type: ignore[no-untyped-def]
        report = real(*a, **k)
        report.add(Violation("network", "links", "x", "made to fail"))
        return report

    monkeypatch.setattr(checks, "check_placement", failing)
    r = run(str(scenario), "--verify")
    assert r.exit_code == 5, r.output
    assert "verification failed" in r.stderr
