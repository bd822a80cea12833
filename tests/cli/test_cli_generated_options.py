"""CLI flags generated from the tasks' options models: every simple field is a flag (one name
each), only the flags given reach the task (over an options file's values), and a bad option is exit 2 naming
it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from backbone.api.cli.main import app
from backbone.api.cli.options import flag_name, model_options, simple_type
from backbone.io import save_scenario
from backbone.model import Network
from backbone.solver.tasks import parse_options
from backbone.solver.tasks.registry import TASKS

ROOT = Path(__file__).resolve().parents[2]

CONVERTED = {"te": (), "failures": (), "place": (), "design": (), "plan": ("plan_file", "plan_text"),
             "roadmap": ("plan_file", "plan_text"), "calibrate": ()}
"""Commands whose flags are generated from their task's options model -> fields left off on purpose."""


def command_flags(name: str) -> set[str]:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


@pytest.mark.parametrize("kind", sorted(CONVERTED))
def test_every_simple_field_of_the_model_is_a_flag(kind: str) -> None:
    model = TASKS[kind].options_model
    flags = command_flags(kind)
    exposed = 0
    for name, info in model.model_fields.items():
        if name in CONVERTED[kind] or info.alias:
            continue
        if simple_type(info.annotation) is None:  # lists, mappings, models: options files and the API
            continue
        assert flag_name(name) in flags, f"{kind}: --{name} missing"
        exposed += 1
    assert exposed >= 3  # calibrate has three simple options (loss, f_scale, max_iterations)
    for generated in model_options(model, exclude=CONVERTED[kind]):
        assert set(generated.flags) <= flags
        assert generated.param.default.help, f"{kind}: --{generated.field} has no help"


def test_each_option_has_one_flag_name() -> None:
    """One name per option (issue #30 item 3): the older spellings are not flags any more; ``-k`` is te's short
    flag for ``--k-paths``."""
    te = command_flags("te")
    assert {"--k-paths", "-k", "--time-limit-s", "--utilisation-ceiling"} <= te
    assert not {"--paths", "--time-limit", "--ceiling"} & te
    assert {"--k-paths", "--time-limit-s"} <= command_flags("failures")
    assert not {"--paths", "--time-limit"} & command_flags("failures")
    assert {"--survive", "--utilisation-ceiling", "--time-limit-s", "--no-cuts", "--model"} <= command_flags("design")
    assert not {"--ceiling", "--time-limit", "--survivability"} & command_flags("design")
    assert {"--budget", "--budget-usd", "--time-limit-s", "--n-plus-one", "--options"} <= command_flags("place")
    assert {"--growth", "--demand-growth", "--skip-upgrades", "--plan", "--workers"} <= command_flags("plan")


def test_help_shows_defaults_choices_and_descriptions() -> None:
    r = CliRunner().invoke(app, ["te", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert "min-mlu|max-throughput|max-min-fair|min-latency|ecmp" in r.output
    assert "Hard time limit over path search" in r.output  # TEOptions.time_limit_s's description
    assert "[default: 120.0]" in r.output


class Captured(Exception):
    pass


def capture(monkeypatch: pytest.MonkeyPatch, module: str) -> list[dict[str, Any]]:
    """Make ``module``'s run_with_progress record the options it is given instead of solving."""
    seen: list[dict[str, Any]] = []

    def record(kind: str, net: Any, options: dict[str, Any], *args: Any, **kw: Any) -> Any:
        seen.append(dict(options))
        raise typer.Exit(0)

    monkeypatch.setattr(f"backbone.api.cli.{module}.run_with_progress", record)
    return seen


@pytest.fixture
def scenario(tmp_path: Path, triangle: Network) -> Path:
    return save_scenario(triangle, tmp_path / "triangle.json")


def test_the_short_flag_gives_the_same_te_options(monkeypatch: pytest.MonkeyPatch, scenario: Path) -> None:
    seen = capture(monkeypatch, "te_cmds")
    for args in (["-k", "2"], ["--k-paths", "2"]):
        r = CliRunner().invoke(app, ["te", str(scenario), *args])
        assert r.exit_code == 0, r.output
    assert seen[0] == seen[1]
    assert parse_options("te", seen[0]) == parse_options("te", seen[1])


def test_only_given_flags_reach_the_task(monkeypatch: pytest.MonkeyPatch, scenario: Path) -> None:
    seen = capture(monkeypatch, "failures_cmds")
    r = CliRunner().invoke(app, ["failures", str(scenario), "--k-paths", "6", "--engine", "serial"])
    assert r.exit_code == 0, r.output
    assert seen == [{"k_paths": 6, "engine": "serial"}]  # the rest: the model's defaults


def test_flags_override_an_options_file(monkeypatch: pytest.MonkeyPatch, scenario: Path,
                                                               tmp_path: Path) -> None:
    seen = capture(monkeypatch, "place_cmds")
    options = tmp_path / "place.yaml"
    options.write_text("time_limit_s: 5\nkw_per_gpu: 1.2\nperiods: 24\n")
    r = CliRunner().invoke(app, ["place", str(scenario), "--options", str(options), "--time-limit-s", "7",
                                 "--periods", "1"])
    assert r.exit_code == 0, r.output
    assert seen[-1] == {"kw_per_gpu": 1.2, "time_limit_s": 7.0, "periods": 1}  # Literal[1, 24] back to an int
    r = CliRunner().invoke(app, ["place", str(scenario), "--options", str(options)])
    assert r.exit_code == 0, r.output
    assert seen[-1] == {"time_limit_s": 5, "kw_per_gpu": 1.2, "periods": 24}  # no flag given: the file's values


def test_a_bad_option_in_an_options_file_is_exit_2_naming_file_line_and_field(scenario: Path, tmp_path: Path) -> None:
    options = tmp_path / "place.yaml"
    options.write_text("kw_per_gpu: 1.2\nk_pahts: 3\n")
    r = CliRunner().invoke(app, ["place", str(scenario), "--options", str(options)])
    assert r.exit_code == 2
    assert "k_pahts" in r.output and "line 2" in r.output and "did you mean 'k_paths'" in r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize(("command", "args", "field"), [
    ("te", ["--k-paths", "0"], "k_paths"),
    ("te", ["-k", "0"], "k_paths"),
    ("failures", ["--time-limit-s", "-1"], "time_limit_s"),
    ("design", ["--utilisation-ceiling", "1.5"], "utilisation_ceiling"),
    ("te", ["--objective", "fastest"], "--objective"),
])
def test_a_bad_option_is_exit_2_naming_it(scenario: Path, tmp_path: Path, command: str, args: list[str],
                                          field: str) -> None:
    out = tmp_path / "out"
    r = CliRunner().invoke(app, [command, str(scenario), *args, "--out", str(out)], env={"COLUMNS": "200"})
    assert r.exit_code == 2, r.output
    assert field in r.output and "Traceback" not in r.output
    assert not out.exists()
    if not field.startswith("--"):
        assert f"({flag_name(field)})" in r.output  # the flag to fix is named beside the option


@pytest.mark.slow
def test_readme_te_command_runs_as_written(scenario: Path) -> None:
    """``backbone te --objective min-mlu --k-paths 4 --verify`` (README), end to end, on a small scenario."""
    p = subprocess.run([sys.executable, "-m", "backbone.api", "te", str(scenario), "--objective", "min-mlu",
                        "--k-paths", "4", "--verify", "--json"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["verification"]["ok"] is True and doc["mlu"] == pytest.approx(0.75)


def test_a_light_command_does_not_import_the_options_models() -> None:
    """``backbone info`` registers only its own module: the planning commands' models (and the solver) stay
    unimported; ``backbone te`` registers te alone."""
    code = ("import sys; from backbone.api.cli.main import build_app; "
            "info = build_app('info'); print('backbone.solver.tasks.te' in sys.modules, "
            "'backbone.solver.failures' in sys.modules); te = build_app('te'); "
            "print(sorted(c.name for c in te.registered_commands))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:2] == ["False False", "['te']"]


def test_help_of_every_command_loads_no_solver() -> None:
    """``backbone --help`` builds every command's flags from its options model; the models import without the
    solver, so pandas, scipy and the LP builders stay unloaded (help is fast)."""
    code = ("import sys; from backbone.api.cli.main import build_app; build_app(None); "
            "print([m for m in ('pandas', 'scipy', 'numba', 'backbone.model', 'backbone.solver.te.formulations', "
            "'backbone.solver.tasks.base') if m in sys.modules])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_calibrate_flags_are_the_task_options(monkeypatch: pytest.MonkeyPatch, scenario: Path) -> None:
    """``backbone calibrate``'s flags are generated from CalibrateOptions: only the given ones reach the fit
    (with ``--fit`` merged), and a bad value is exit 2 naming the option."""
    import backbone.calibrate

    seen: list[dict[str, Any]] = []

    def record(net: Any, pairs: Any, **kw: Any) -> Any:
        seen.append(kw)
        raise typer.Exit(0)

    monkeypatch.setattr(backbone.calibrate, "calibrate", record)
    r = CliRunner().invoke(app, ["calibrate", str(scenario), "--f-scale", "0.1", "--fit", "equipment_delay_ms"])
    assert r.exit_code == 0, r.output
    assert seen[0]["f_scale"] == 0.1 and seen[0]["fit"] == ("equipment_delay_ms",)
    assert seen[0]["loss"] == "soft_l1" and seen[0]["max_iterations"] == 5  # the model's defaults
    bad = CliRunner().invoke(app, ["calibrate", str(scenario), "--fit", "speed_of_light"])
    assert bad.exit_code == 2 and "fit" in bad.output
    assert CliRunner().invoke(app, ["calibrate", str(scenario), "--f-scale", "2"]).exit_code == 2
