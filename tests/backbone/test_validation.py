"""Validation corpus: every broken scenario in tests/data/broken/<case>/ is rejected with the right
file, record and field, and with every problem it holds.

Each case folder is ``tests/data/small`` (a valid scenario) with one edit, plus ``expect.yaml``:
``about`` (what is broken), ``load`` (the path to load, relative to the case) and ``problems``
(file name, record, field and a message fragment of each problem expected; the loader must
report exactly these, no more).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from backbone.errors import Problem, ValidationError
from backbone.io import load_scenario
from backbone.validate import build_network, validate_records

DATA = Path(__file__).resolve().parent.parent / "data"
BROKEN = DATA / "broken"
CASES = sorted(p.name for p in BROKEN.iterdir() if (p / "expect.yaml").exists())


def _expect(case: str) -> dict[str, Any]:
    return yaml.safe_load((BROKEN / case / "expect.yaml").read_text(encoding="utf-8"))


def _key(p: Problem) -> tuple[str, str, str]:
    return (Path(p.file).name if p.file else "", p.record, p.field)


def test_the_corpus_is_complete() -> None:
    assert len(CASES) >= 30
    rules = {"unknown_site_in_link", "unknown_site_in_demand", "duplicate_site_id", "missing_id",
             "coordinates_out_of_range", "nonpositive_capacity", "self_loop_link", "self_loop_demand",
             "non_numeric_value", "missing_required_column", "bad_link_kind", "bad_region", "geometry_reversed",
             "geometry_far_from_sites", "srlg_unknown_link", "unknown_metro", "bad_waypoints_text",
             "several_problems", "missing_table_file", "unreadable_yaml", "json_unknown_site", "json_syntax_error",
             "candidate_unknown_site", "candidate_unknown_srlg", "candidate_id_is_link_id", "candidate_bad_numbers",
             "capacity_above_ceiling"}
    assert rules <= set(CASES)


def test_the_base_scenario_is_valid() -> None:
    net = load_scenario(DATA / "small")
    assert (len(net.sites), len(net.links), len(net.demands)) == (4, 3, 2)


@pytest.mark.parametrize("case", CASES)
def test_broken_case_is_rejected_naming_file_record_and_field(case: str) -> None:
    expect = _expect(case)
    with pytest.raises(ValidationError) as err:
        load_scenario(BROKEN / case / expect["load"])
    problems = err.value.problems
    got = sorted(_key(p) for p in problems)
    want = sorted((e["file"], e["record"], e["field"]) for e in expect["problems"])
    assert got == want, f"{case}: {expect['about']}\n{err.value}"
    for e in expect["problems"]:
        matching = [p for p in problems if _key(p) == (e["file"], e["record"], e["field"])]
        assert any(e["contains"] in p.message for p in matching), (e, [p.message for p in matching])
    for p in problems:
        assert "\n" not in str(p), "each problem must print on one line"
        assert p.file, "every problem names its file"


def test_every_problem_of_a_table_is_reported_at_once() -> None:
    sites = [{"id": "A", "lon": 0, "lat": 0, "region": "NA"},
             {"id": "A", "lon": 500, "lat": "x", "region": "MOON"},
             {"id": "", "lon": 1, "lat": 1, "region": "NA"}]
    links = [{"id": "l1", "site_a": "A", "site_b": "A", "capacity_gbps": -1},
             {"id": "l2", "site_a": "A", "site_b": "Q", "capacity_gbps": "x", "length_km": 0}]
    with pytest.raises(ValidationError) as err:
        build_network({"sites": sites, "links": links}, files={"sites": "s.csv", "links": "l.csv"})
    got = {(p.file, p.record, p.field) for p in err.value.problems}
    assert got == {
        ("s.csv", "A", "id"), ("s.csv", "A", "lon"), ("s.csv", "A", "lat"), ("s.csv", "A", "region"),
        ("s.csv", "row 4", "id"),
        ("l.csv", "l1", "site_b"), ("l.csv", "l1", "capacity_gbps"),
        ("l.csv", "l2", "site_b"), ("l.csv", "l2", "capacity_gbps"), ("l.csv", "l2", "length_km"),
    }
    assert len(err.value.problems) == len(got)
    assert err.value.to_dict()["problems"][0].keys() == {"message", "file", "table", "record", "field"}


def test_unknown_table_and_non_record_tables() -> None:
    with pytest.raises(ValidationError) as err:
        build_network({"sites": [], "circuits": []})
    assert "unknown table 'circuits'" in str(err.value)
    with pytest.raises(ValidationError) as err:
        build_network({"sites": "not a table"})  # type: ignore[dict-item]
    assert err.value.problems[0].table == "sites"


def test_validate_records_on_its_own() -> None:
    validate_records("sites", [{"id": "A", "lon": 0, "lat": 0, "region": "NA"}])
    with pytest.raises(ValidationError) as err:
        validate_records("demands", [{"id": "d", "src": "A", "dst": "A", "demand_gbps": -1}], file="d.csv")
    assert {(p.file, p.record, p.field) for p in err.value.problems} == {("d.csv", "d", "dst"),
                                                                       ("d.csv", "d", "demand_gbps")}


# ---------------------------------------------------------------------------------- the CLI door
def _tree(path: Path) -> dict[str, float]:
    return {str(p.relative_to(path)): p.stat().st_mtime_ns for p in path.rglob("*")}


@pytest.mark.parametrize("case", CASES)
def test_cli_validate_exits_2_with_one_line_per_problem(case: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from backbone.api.cli.main import app

    expect = _expect(case)
    target = BROKEN / case / expect["load"]
    monkeypatch.chdir(tmp_path)
    before, before_cwd = _tree(BROKEN / case), _tree(tmp_path)
    result = CliRunner().invoke(app, ["validate", str(target)], env={"COLUMNS": "60"})
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    n = len(expect["problems"])
    assert lines[0] == f"error: {n} problem(s) in the input"
    assert len(lines) == 1 + n, result.stderr
    for e in expect["problems"]:
        assert any(e["contains"] in line and e["file"] in line for line in lines[1:]), (e, lines)
    assert "Traceback" not in result.output
    assert _tree(BROKEN / case) == before and _tree(tmp_path) == before_cwd, "validate must write nothing"


def test_cli_validate_json_lists_problems_on_stdout(tmp_path: Path) -> None:
    import json

    from backbone.api.cli.main import app

    result = CliRunner().invoke(app, ["validate", str(BROKEN / "several_problems"), "--json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["valid"] is False and len(doc["problems"]) == 6
    assert {p["record"] for p in doc["problems"]} == {"tat", "nyc-ash", "lon-fra", "ash-fra", "nyc-lon"}
    ok = CliRunner().invoke(app, ["validate", str(DATA / "small"), "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout) == {
        "valid": True, "sites": 4, "links": 3, "demands": 2, "candidates": 0, "datasets": 0, "training_jobs": 0,
        "links_in_no_srlg": ["nyc-ash", "lon-fra"],
        "warnings": ["2 of 3 links belong to no SRLG (nyc-ash, lon-fra); an SRLG sweep fails each as its own group "
                     "(add conduit or corridor SRLGs where links share a right of way)"]}


@pytest.mark.slow
def test_cli_validate_subprocess_has_no_traceback() -> None:
    """The installed console script, end to end (what a user runs)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "from backbone.api.cli.main import run; run()", "validate",
                           str(BROKEN / "several_problems")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "50"})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 7


IMPORTER_CASES = [c for c in CASES if c.split("_")[0] in ("sndlib", "graphml", "nodelink", "csv")]


def test_the_corpus_covers_truncated_and_out_of_range_files_in_every_format() -> None:
    for fmt in ("sndlib", "graphml", "nodelink"):
        assert f"{fmt}_truncated" in CASES or f"{fmt}_truncated_demands" in CASES, fmt
        assert any(c.startswith(fmt) and "out_of_range" in c for c in CASES), fmt
    assert {"csv_truncated", "json_syntax_error", "unreadable_yaml", "coordinates_out_of_range"} <= set(CASES)


@pytest.mark.parametrize("case", IMPORTER_CASES)
def test_cli_info_exits_2_naming_the_culprit(case: str) -> None:
    from backbone.api.cli.main import app

    expect = _expect(case)
    result = CliRunner().invoke(app, ["info", str(BROKEN / case / expect["load"]), "--json"])
    assert result.exit_code == 2 and result.stdout == "", result.output
    for e in expect["problems"]:
        assert e["contains"] in result.stderr and (e["record"] or e["file"]) in result.stderr
