"""Every reported design objective is the cost of the design it returns (issue: HiGHS with a MIP
start and presolve once reported an objective its solution did not have, as optimal).

Checked on the SNDlib instances of ../shared/conformance that solve (or nearly) within seconds;
``benchmarks/bench_sndlib.py --networks all --models sndlib`` runs the same check on every one.
"""

from __future__ import annotations

import json

import pytest

from backbone.io.sndlib import parse_model_code, parse_sndlib
from backbone.solver.checks.design import check_design, configurations_from_counts
from backbone.solver.design import solve_design
from backbone.solver.design.sndlib import build_instance
from tests.conftest import conformance_dir

CASES = [("abilene", "U-U-M-N-C-A-N-N", 20.0), ("abilene", "D-B-M-N-C-A-N-N", 20.0),
         ("polska", "D-B-M-N-C-A-N-N", 20.0), ("polska", "U-U-M-N-C-A-N-N", 15.0),
         ("atlanta", "D-B-M-N-C-A-N-N", 15.0)]


@pytest.mark.slow
@pytest.mark.parametrize("network,model,time_limit", CASES)
def test_reported_objective_is_the_designs_cost(network: str, model: str, time_limit: float) -> None:
    snd = parse_sndlib(conformance_dir() / "sndlib" / "native" / network / f"{network}.txt")
    inst = build_instance(snd, parse_model_code(model))
    sol = solve_design(inst, time_limit_s=time_limit)
    assert sol.counts is not None and sol.status in ("optimal", "feasible")
    check = check_design(inst, configurations_from_counts(inst, sol.counts), time_limit_s=60.0,
                         reported_cost=sol.cost, reported_optimal=sol.status == "optimal")
    assert check.ok, check.report.violations
    assert "reported objective" in check.report.checked
    assert sol.cost == pytest.approx(check.total_cost, rel=1e-6)
    assert sol.lower_bound <= sol.cost * (1 + 1e-9)


@pytest.mark.slow
def test_verify_checks_the_objective_and_a_failed_check_exits_5(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.solver.checks import Violation

    path = conformance_dir() / "sndlib" / "native" / "abilene" / "abilene.txt"
    args = ["design", str(path), "--model", "U-U-M-N-C-A-N-N", "--time-limit-s", "20", "--verify", "--json"]
    ok = CliRunner().invoke(app, args)
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    assert doc["verification"]["ok"] and "reported objective" in doc["verification"]["checked"]
    assert doc["cost"] == pytest.approx(doc["verification"]["total_cost"], rel=1e-6)
    import backbone.solver.checks.design as checks

    real = checks.check_design

    def lying(*a, **k):  # type: ignore[no-untyped-def]
        result = real(*a, **k)
        result.report.add(Violation("objective", "design", "abilene", "reported cost is not the design's"))
        return result

    monkeypatch.setattr(checks, "check_design", lying)
    bad = CliRunner().invoke(app, args)
    assert bad.exit_code == 5, bad.output
