"""``backbone te``: pure-JSON stdout, exit codes, files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from backbone.io import save_scenario
from backbone.model import Network

REQUIRED = {"status", "objective", "mlu", "carried_gbps", "unmet_gbps", "backend", "solve_seconds", "total_seconds"}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "backbone.api", "te", *args], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])


@pytest.fixture
def scenario(tmp_path: Path, triangle: Network) -> Path:
    return save_scenario(triangle, tmp_path / "triangle.json")


@pytest.mark.slow
@pytest.mark.parametrize("args", [[], ["--objective", "max-min-fair", "--bound"], ["--objective", "ecmp"]])
def test_json_stdout_is_pure_json(scenario: Path, tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out"
    p = _run(str(scenario), "--json", "--verify", "--out", str(out), *args)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # nothing but JSON on stdout (solver banners go to stderr)
    assert set(doc) >= REQUIRED
    assert doc["verification"]["ok"] is True
    assert (out / "te.json").exists() and (out / "te_links.csv").exists()
    if not args:
        assert doc["mlu"] == pytest.approx(0.75)
    if "--bound" in args:
        assert doc["gap_to_edge_bound"] == pytest.approx(0.0, abs=1e-7)


def _invoke(*args: str) -> tuple[int, str, str]:
    """In-process run (fast); stdout purity at the file-descriptor level is tested by subprocess above."""
    from typer.testing import CliRunner

    from backbone.api.cli.main import app

    r = CliRunner().invoke(app, ["te", *args])
    return r.exit_code, r.stdout, r.stderr


def test_bad_option_exits_2(scenario: Path) -> None:
    code, out, err = _invoke(str(scenario), "--objective", "cheapest", "--json")
    assert code == 2
    assert out == ""
    assert "objective" in err


def test_unknown_backend_exits_2(scenario: Path) -> None:
    """An unknown backend name is bad input (exit 2, naming the option); a known but missing one is exit 4."""
    code, _, err = _invoke(str(scenario), "--backend", "gurobi")
    assert code == 2
    assert "backend" in err


def test_edge_formulation_human_output(scenario: Path) -> None:
    code, out, err = _invoke(str(scenario), "--objective", "min-latency", "--formulation", "edge")
    assert code == 0, err
    assert "max link utilisation" in out and "busiest links" in out


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--formulation", "edge"], ["--bound"]])
def test_edge_and_bound_on_the_shipped_scenario(args: list[str]) -> None:
    """The defaults plus --formulation edge / --bound solve the shipped scenario (HiGHS interior
    point once stopped with "Unknown" here; a failed IPM now falls back to simplex and says so)."""
    code, out, err = _invoke(*args, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "optimal" and 0 < doc["mlu"] <= 1.0
    for stage in doc["stages"]:
        assert stage["status"] == "optimal"
        assert bool(stage["note"]) == any(stage["name"] in n for n in doc["notes"])
    if "--bound" in args:
        assert doc["gap_to_edge_bound"] is not None and doc["gap_to_edge_bound"] >= 0


def test_rerunning_into_the_same_out_folder_leaves_no_stale_files(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = _invoke(str(scenario), "--out", str(out))
    assert code == 0, err
    first = json.loads((out / "te.json").read_text())
    # an earlier run that wrote one more file (as a plan with maps does before a run without)
    (out / "te_old_table.csv").write_text("x\n")
    (out / "te.json").write_text(json.dumps({**first, "files": [*first["files"], "te_old_table.csv"]}))
    (out / "my_notes.txt").write_text("not written by backbone\n")
    code, _, err = _invoke(str(scenario), "--out", str(out))
    assert code == 0, err
    assert not (out / "te_old_table.csv").exists()
    assert (out / "my_notes.txt").exists()
    now = json.loads((out / "te.json").read_text())["files"]
    assert sorted(p.name for p in out.iterdir() if p.name != "my_notes.txt") == sorted(now)
