"""Network design: hand-computed SNDlib optima, independent checks, backends, solution files,
and the backbone's upgrade question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from backbone.errors import InfeasibleError, ValidationError
from backbone.io import load_scenario
from backbone.io.sndlib import parse_model_code, parse_model_file, parse_sndlib, parse_solution
from backbone.solver.backends import available_backends
from backbone.solver.checks.design import check_design, configurations_from_counts
from backbone.solver.design import build_design_lp, mir_cuts, solve_design
from backbone.solver.design.sndlib import build_instance, load_instance, write_solution
from backbone.solver.design.upgrades import CandidateLink, design_upgrades
from backbone.solver.tasks import run_task
from tests.conftest import conformance_dir
from tests.nets import make_network

DATA = Path(__file__).resolve().parent.parent / "data" / "sndlib"
LIMIT = 30.0

# (file, model code, hand-computed optimum; derivations in each file's header comment)
HAND_COMPUTED = [
    ("triangle", "U-U-M-N-C-A-N-N", 15.0),
    ("triangle", "D-B-M-N-C-A-N-N", 15.0),
    ("triangle", "D-D-M-N-C-A-N-N", 15.0),
    ("triangle", "U-U-L-N-C-A-N-N", 11.4),
    ("explicit", "U-U-M-N-C-A-N-N", 16.0),
    ("explicit", "U-U-E-N-C-A-N-N", 17.0),
    ("survivable", "U-U-M-N-C-A-N-N", 1.0),
    ("survivable", "U-U-M-N-C-A-N-U", 3.0),
    ("routing", "U-U-M-N-C-A-N-N", 138.0),
    ("routing", "U-U-M-N-C-A-N-U", 197.0),
]


@pytest.mark.parametrize(("name", "code", "optimum"), HAND_COMPUTED)
def test_hand_computed_optimum_and_independent_check(name: str, code: str, optimum: float) -> None:
    _, _, inst = load_instance(DATA / f"{name}.txt", code)
    sol = solve_design(inst, time_limit_s=LIMIT)
    assert sol.status == "optimal"
    assert sol.cost == pytest.approx(optimum, abs=1e-6)
    assert sol.lower_bound == pytest.approx(optimum, abs=1e-6)
    assert sol.gap == pytest.approx(0.0, abs=1e-6)
    check = check_design(inst, configurations_from_counts(inst, sol.counts))
    assert check.ok, str(check.report)
    assert check.total_cost == pytest.approx(optimum, abs=1e-6)


@pytest.mark.parametrize("backend", available_backends(mip=True))
@pytest.mark.parametrize(("name", "code", "optimum"), [HAND_COMPUTED[0], HAND_COMPUTED[5], HAND_COMPUTED[7]])
def test_objective_equal_across_mip_backends(backend: str, name: str, code: str, optimum: float) -> None:
    _, _, inst = load_instance(DATA / f"{name}.txt", code)
    sol = solve_design(inst, time_limit_s=LIMIT, backend=backend)
    assert sol.cost == pytest.approx(optimum, abs=1e-6)


def test_explicit_design_differs_from_modular() -> None:
    _, _, inst = load_instance(DATA / "explicit.txt", "U-U-E-N-C-A-N-N")
    sol = solve_design(inst, time_limit_s=LIMIT)
    per_link = np.bincount(inst.modules["link"].to_numpy(int), weights=sol.counts, minlength=3)
    assert per_link.max() <= 1  # at most one explicit capacity per link


def test_short_design_fails_the_check() -> None:
    _, _, inst = load_instance(DATA / "survivable.txt", "U-U-M-N-C-A-N-U")
    report = check_design(inst, configurations_from_counts(inst, np.array([1.0, 1.0, 0.0])))
    assert not report.ok
    assert {v.id for v in report.report.violations} == {"AB"}  # only the AB failure state is short
    bad = check_design(inst, {"AB": [(7.0, 1.0)], "AC": [], "CB": []})
    assert any(v.check == "module" for v in bad.report.violations)


def test_cut_set_rows_are_valid_and_tighten_the_lp() -> None:
    _, _, inst = load_instance(DATA / "triangle.txt", "U-U-M-N-C-A-N-N")
    mat, rhs = mir_cuts(inst)
    optimum_counts = np.array([2.0, 3.0, 0.0])
    assert (mat @ optimum_counts >= rhs - 1e-9).all()  # the optimum satisfies every cut
    prog = build_design_lp(inst, cuts=True)
    rows = prog.lp.constraints["cutset"]  # the family adds exactly these rows over the module counts
    assert (prog.lp.A[rows.slice][:, prog.lp.variables["modules"].slice] != mat).nnz == 0
    from backbone.solver.core.problem import solve

    without = solve(build_design_lp(inst, cuts=False).lp.relaxed(), time_limit_s=LIMIT).objective
    with_cuts = solve(build_design_lp(inst, cuts=True).lp.relaxed(), time_limit_s=LIMIT).objective
    assert without == pytest.approx(11.4)
    assert with_cuts > without + 1e-6


def test_solution_file_round_trip(tmp_path: Path) -> None:
    snd, model, inst = load_instance(DATA / "routing.txt", "U-U-M-N-C-A-N-U")
    sol = solve_design(inst, time_limit_s=LIMIT)
    path = write_solution(tmp_path / "routing.sol", snd, model, inst, sol)
    back = parse_solution(path)
    assert back.capacities() == pytest.approx({"AB": 20.0, "BC": 20.0, "AC": 20.0})
    assert back.configurations["AB"] == [(10.0, 1.0), (10.0, 1.0)] or sum(n for _, n in back.configurations["AB"]) == 2
    nos = back.routings["NOS"]["D_AC"]
    assert sum(f for f, _ in nos) == pytest.approx(6.0)  # in routing units (2 x 6 = 12)
    for state in ("AB", "BC", "AC"):
        for flow_paths in back.routings.get(state, {}).values():
            assert sum(f for f, _ in flow_paths) == pytest.approx(6.0)
            assert all(state not in links for _, links in flow_paths)
    check = check_design(inst, {k: list(v) for k, v in back.configurations.items()})
    assert check.ok and check.total_cost == pytest.approx(197.0)


def test_format_doc_example_solution_parses() -> None:
    sol = parse_solution(conformance_dir() / "sndlib" / "format-docs" / "example-solution.txt")
    assert sol.capacities()["L_AB"] == pytest.approx(63 + 252)
    assert sol.routings["NOS"]["D_AB"] == [(2.0, ["L_AB"])]


def test_model_codes_and_files() -> None:
    assert parse_model_code("UUMNCANN").code == "U-U-M-N-C-A-N-N"
    with pytest.raises(ValidationError) as info:
        parse_model_code("U-X-M-N-C-A-N-N")
    assert info.value.problems[0].field == "LINK_MODEL"
    with pytest.raises(ValidationError):
        parse_model_code("U-U-M")
    model = parse_model_code("D-B-E-Y-C-A-N-U")
    assert parse_model_file("m.txt", model.to_text()) == model
    snd, _, _ = load_instance(DATA / "triangle.txt", "U-U-M-N-C-A-N-N")
    with pytest.raises(ValidationError, match="not supported"):
        build_instance(snd, parse_model_code("U-U-M-N-S-A-N-N"))
    with pytest.raises(ValidationError, match="undirected demands"):
        build_instance(snd, parse_model_code("U-B-M-N-C-A-N-N"))


def test_shared_model_files_parse() -> None:
    models = sorted((conformance_dir() / "sndlib" / "native").glob("*/models/*.txt"))
    assert len(models) > 1000
    for f in models:
        assert parse_model_file(f).code == f.stem


@pytest.mark.slow
def test_polska_directed_bidirected_small_gap() -> None:
    """A real SNDlib instance: the design is verified independently and the gap is small."""
    path = conformance_dir() / "sndlib" / "native" / "polska" / "polska.txt"
    _, _, inst = load_instance(path, "D-B-M-N-C-A-N-N")
    sol = solve_design(inst, time_limit_s=LIMIT)
    assert sol.counts is not None and sol.gap is not None and sol.gap <= 0.02
    check = check_design(inst, configurations_from_counts(inst, sol.counts))
    assert check.ok and check.total_cost == pytest.approx(sol.cost, rel=1e-6)


# ---------------------------------------------------------------------- the backbone's upgrades
def _upgrade_net(max_capacity: float = 100.0) -> Any:
    sites = [{"id": s, "lon": lon, "lat": 0.0, "region": "NA"} for s, lon in (("A", 0.0), ("B", 1.0), ("C", 2.0))]
    common = {"capacity_gbps": 10, "module_gbps": 10, "max_capacity_gbps": max_capacity}
    links = [{"id": "AB", "site_a": "A", "site_b": "B", "module_cost_usd": 30, **common},
             {"id": "BC", "site_a": "B", "site_b": "C", "module_cost_usd": 30, **common},
             {"id": "AC", "site_a": "A", "site_b": "C", "module_cost_usd": 100, **common}]
    demands = [{"id": "d", "src": "A", "dst": "C", "demand_gbps": 15}]
    srlgs = [{"id": "cut", "kind": "corridor", "links": "AC"}]
    return make_network(sites, links, demands, srlgs)


@pytest.mark.parametrize(("survive", "ceiling", "cost"), [
    ("none", 1.0, 0.0),     # 10 direct + 10 via B carry 15
    ("none", 0.5, 60.0),    # usable 5 per link: one module on AB and BC (+5 each) beats AC (100)
    ("link", 0.5, 320.0),   # AB down: AC alone needs 2 modules; AC down: AB, BC need 2 each
    ("srlg", 0.5, 320.0),   # AC's corridor fails, and AB and BC, in no SRLG, each as its own group: as "link"
])
def test_design_upgrades_hand_computed(survive: str, ceiling: float, cost: float) -> None:
    net = _upgrade_net()
    res = design_upgrades(net, survive, ceiling, time_limit_s=LIMIT)  # type: ignore[arg-type]
    assert res.status == "optimal"
    assert res.cost_usd == pytest.approx(cost)
    assert res.upgrades["cost_usd"].sum() == pytest.approx(cost)
    upgraded = net.upgrade_links(dict(zip(res.upgrades["link"], res.upgrades["added_gbps"], strict=True)))
    check = design_upgrades(upgraded, survive, ceiling, time_limit_s=LIMIT)  # type: ignore[arg-type]
    assert check.cost_usd == pytest.approx(0.0)  # the upgraded network needs nothing more
    assert set(res.map["link_values"]["added_gbps"]) == {"AB", "BC", "AC"}
    verify = check_design(res.instance, configurations_from_counts(res.instance, res.solution.counts))
    assert verify.ok


def test_design_upgrades_candidate_link() -> None:
    net = _upgrade_net(max_capacity=10.0)  # existing links cannot grow
    cand = CandidateLink(site_a="A", site_b="C", module_gbps=10, module_cost_usd=7, id="AC2")
    res = design_upgrades(net, "none", 0.5, time_limit_s=LIMIT, candidates=[cand])
    assert res.cost_usd == pytest.approx(7.0)
    assert res.upgrades.set_index("link").loc["AC2", "new"]


def test_design_upgrades_infeasible_when_limits_bind() -> None:
    with pytest.raises(InfeasibleError):
        design_upgrades(_upgrade_net(max_capacity=10.0), "none", 0.5, time_limit_s=LIMIT)


def test_run_task_sndlib_and_upgrade(tmp_path: Path) -> None:
    net = load_scenario(DATA / "explicit.txt")
    res = run_task("design", net, {"model": "U-U-E-N-C-A-N-N", "time_limit_s": LIMIT, "verify": True}, tmp_path)
    s = res.summary
    assert s.mode == "sndlib" and s.cost == pytest.approx(17.0) and s.verification is not None and s.verification.ok
    assert {link.id for link in s.links} == {"AB", "AC", "BC"}
    assert "design.sol.txt" in res.files and (tmp_path / "design.json").exists()
    up = run_task("design", _upgrade_net(), {"survive": "link", "utilisation_ceiling": 0.5, "time_limit_s": LIMIT,
                                            "routing": "edge"})
    assert up.summary.mode == "upgrade" and up.summary.cost_usd == pytest.approx(320.0)
    with pytest.raises(ValidationError):
        run_task("design", net, {"model": "U-U-M-N-C-A-N-N", "bogus": 1})
    # any scenario solves an SNDlib model: each link's module_gbps at module_cost_usd, capacity pre-installed
    other = run_task("design", _upgrade_net(), {"model": "D-B-M-N-C-A-N-N", "time_limit_s": LIMIT, "verify": True})
    assert other.summary.verification is not None and other.summary.verification.ok
    assert other.summary.cost == pytest.approx(0.0)  # 10 + 10 via B carry 15
    with pytest.raises(ValidationError) as err:
        run_task("design", net, {"model_file": "/etc/passwd"})
    assert [p.field for p in err.value.problems] == ["model_file"]


@pytest.mark.parametrize("name", ["routing", "explicit", "survivable", "triangle"])
def test_scenario_carries_the_sndlib_design_data(name: str) -> None:
    """The instance rebuilt from the scenario (tables + meta, after a JSON round trip) is the file's."""
    from backbone.io import network_from_dict, network_to_dict
    from backbone.io.sndlib import sndlib_from_network

    snd = parse_sndlib(DATA / f"{name}.txt")
    net = network_from_dict(network_to_dict(load_scenario(DATA / f"{name}.txt")))
    assert "file" not in net.meta["sndlib"]
    again = sndlib_from_network(net)
    model = parse_model_code("U-U-M-Y-C-A-N-U")
    a, b = build_instance(snd, model), build_instance(again, model)
    for col in ("a", "b", "preinstalled", "preinstalled_cost", "routing_cost", "setup_cost"):
        np.testing.assert_allclose(a.links[col].to_numpy(float), b.links[col].to_numpy(float), rtol=1e-12)
    pd.testing.assert_frame_equal(a.modules, b.modules, check_exact=False, rtol=1e-12)
    pd.testing.assert_frame_equal(a.demands, b.demands, check_exact=False, rtol=1e-12)
    assert snd.gbps_per_unit == again.gbps_per_unit
    assert (again.demands["routing_unit"] == snd.demands["routing_unit"]).all()


@pytest.mark.slow
def test_polska_from_the_scenario_alone() -> None:
    """A real instance solved from its scenario (no file) costs what the file's instance costs."""
    from backbone.io import network_from_dict, network_to_dict

    path = conformance_dir() / "sndlib" / "native" / "polska" / "polska.txt"
    net = network_from_dict(network_to_dict(load_scenario(path)))
    res = run_task("design", net, {"model": "D-B-M-N-C-A-N-N", "time_limit_s": LIMIT, "verify": True})
    _, _, inst = load_instance(path, "D-B-M-N-C-A-N-N")
    direct = solve_design(inst, time_limit_s=LIMIT)
    assert res.summary.verification is not None and res.summary.verification.ok
    assert res.summary.lower_bound <= direct.cost * (1 + 1e-6) and direct.lower_bound <= res.summary.cost * (1 + 1e-6)


def test_bad_sndlib_meta_names_the_field() -> None:
    from backbone.io import network_from_dict, network_to_dict
    from backbone.io.sndlib import sndlib_from_network

    doc = network_to_dict(load_scenario(DATA / "routing.txt"))
    doc["meta"]["sndlib"]["links"]["AB"]["modules"] = [["x", 1]]
    doc["meta"]["sndlib"]["links"]["ZZ"] = {}
    with pytest.raises(ValidationError) as err:
        sndlib_from_network(network_from_dict(doc))
    assert {p.field for p in err.value.problems} == {"sndlib.links.AB.modules.0", "sndlib.links"}


def test_model_file_errors_do_not_echo_the_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("alice:x:0:0:PASSWORD=hunter2:/home:/bin/bash\nADMIN_TOKEN = BBK_HUNTER\n")
    with pytest.raises(ValidationError) as err:
        parse_model_file(secret)
    text = str(err.value) + repr([p.__dict__ for p in err.value.problems])
    assert "hunter2" not in text and "HUNTER" not in text and "alice" not in text
    assert {p.record for p in err.value.problems} >= {"line 1", "line 2"}
    with pytest.raises(ValidationError) as err2:
        parse_sndlib(secret)
    assert "hunter2" not in str(err2.value) and "alice" not in str(err2.value)
