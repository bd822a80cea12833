"""The notebook facade: ``import backbone`` stays light; solve_te / place / sweep / plan take the options' own
field names, validate them like the CLI and the API, and return the solver's result objects."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import backbone
from backbone.errors import ValidationError
from backbone.model import Network
from backbone.solver.failures import FailureOptions
from backbone.solver.failures import sweep as solver_sweep
from backbone.solver.te import TEOptions
from backbone.solver.te import solve_te as solver_solve_te

ROOT = Path(__file__).resolve().parents[2]


def test_import_backbone_loads_no_solver() -> None:
    code = ("import sys, backbone; print(sorted(m for m in sys.modules if m.startswith(('backbone.', 'pandas')))); "
            "assert callable(backbone.Network.with_capacity); "
            "print(sorted(m for m in sys.modules if m.startswith(('backbone.solver', 'backbone.api'))))")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "[]"]  # neither pandas at import nor the solver with Network
    assert {"solve_te", "place", "sweep", "plan", "load_scenario", "Network"} <= set(dir(backbone))
    with pytest.raises(AttributeError, match="nope"):
        backbone.nope  # noqa: B018


def test_solve_te_takes_option_names_and_reports_utilisation(triangle: Network) -> None:
    r = backbone.solve_te(triangle, objective="min-mlu", k_paths=2, verify=True)
    assert "utilisation" in r.links.columns
    assert r.links["utilisation"].max() == pytest.approx(0.75, abs=1e-6)
    assert r.verification is not None and r.verification.ok is True
    assert r.to_dict()["verification"] == r.verification.document() and "verification" not in r.summary.document()
    assert "impact" in r.summary.model_fields_set  # the options' default, as `backbone te` reports it
    direct = solver_solve_te(triangle, TEOptions(objective="min-mlu", k_paths=2))
    assert r.summary.objective_value == pytest.approx(direct.summary.objective_value)
    same = backbone.solve_te(triangle, k_paths=2, impact=False)
    assert "impact" not in same.summary.model_fields_set
    assert same.summary.objective_value == pytest.approx(r.summary.objective_value)


def test_solve_te_rejects_bad_options(triangle: Network) -> None:
    with pytest.raises(ValidationError, match="objectiv") as err:
        backbone.solve_te(triangle, objectiv="min-mlu")
    assert "did you mean 'objective'" in str(err.value)
    with pytest.raises(ValidationError, match="paths"):
        backbone.solve_te(triangle, k_paths=0)
    with pytest.raises(ValidationError, match="did you mean 'k_paths'"):  # one name per option
        backbone.solve_te(triangle, k_paths=2, paths=3)


def test_with_capacity_changes_the_routing_not_the_original(triangle: Network) -> None:
    bigger = triangle.with_capacity({"AC": 20.0})
    assert backbone.solve_te(bigger, impact=False).links["utilisation"].max() == pytest.approx(0.5, abs=1e-6)
    assert backbone.solve_te(triangle, impact=False).links["utilisation"].max() == pytest.approx(0.75, abs=1e-6)


def test_sweep_is_the_solver_sweep(submarine_cut: Network) -> None:
    s = backbone.sweep(submarine_cut, kind="srlg", engine="serial", k_paths=4)
    direct = solver_sweep(submarine_cut, FailureOptions(kind="srlg", engine="serial"))
    assert list(s.table()["scenario"]) == list(direct.table()["scenario"])
    assert s.table()["impact_gbps"].tolist() == pytest.approx(direct.table()["impact_gbps"].tolist())
    with pytest.raises(ValidationError, match="kind"):
        backbone.sweep(submarine_cut, kind="meteor")


def test_place_and_plan_validate_their_options(triangle: Network) -> None:
    with pytest.raises(ValidationError, match="objective"):
        backbone.place(triangle, objective="cheapest-possible")
    with pytest.raises(ValidationError, match="unknown option"):
        backbone.plan(triangle, colour="blue")


@pytest.mark.slow
def test_design_roadmap_and_calibration_run_through_the_one_service(triangle: Network, tmp_path: Path) -> None:
    """The facade covers every task (issue #30 item 3): ``design``, ``roadmap`` and ``calibrate_latency`` take the
    options' own names, validate them before any work, and give what ``run_task`` gives the CLI and the API."""
    from backbone.solver.tasks import run_task
    from tests.nets import lead_toy

    roomy = triangle.copy_with(links=triangle.links.assign(module_gbps=10.0, max_capacity_gbps=100.0))
    design = backbone.design(roomy, survive="link", time_limit_s=30)
    same = run_task("design", roomy, {"survive": "link", "time_limit_s": 30}).summary
    assert design.summary.cost_usd == pytest.approx(same.cost_usd)
    assert design.summary.survive == same.survive == "link"
    quiet = {"periods": 2, "growth_per_year": {}, "maps": False, "bound_time_limit_s": 0, "failures": {"workers": 1}}
    road = backbone.roadmap(lead_toy(), out_dir=tmp_path / "rm", **quiet)
    assert [p["period"] for p in road.document()["periods"]] == ["2027Q1", "2027Q2"]
    assert (tmp_path / "rm" / "roadmap.json").is_file()
    calibration = backbone.calibrate_latency(triangle, measured=[{"from": "A", "to": "C", "rtt_ms": 30.0}],
                                             max_iterations=1)
    assert calibration.summary.pairs == 1
    for run, bad in ((backbone.design, {"ceiling": 0.5}), (backbone.roadmap, {"periods": 0}),
                     (backbone.calibrate_latency, {"loss": "cubic"})):
        with pytest.raises(ValidationError):
            run(triangle, **bad)
