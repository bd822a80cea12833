"""One options vocabulary: every task's options model uses ``k_paths``, ``time_limit_s``, ``utilisation_ceiling`` and
``survive``; the older spellings stay accepted (plan files, API bodies and scripts written before keep working),
giving both spellings of one option is an error, and an older spelling overrides a stage default like the new
name does."""

from __future__ import annotations

from typing import Any

import pytest

from backbone.errors import ValidationError
from backbone.solver.roadmap.options import RoadmapOptions
from backbone.solver.roadmap.options import stage_options as roadmap_stage_options
from backbone.solver.tasks import parse_options
from backbone.solver.tasks.plan_options import PlanUpgradeOptions, stage_options
from backbone.solver.tasks.registry import TASKS
from backbone.solver.tasks.service import accepted_names, canonical_names, validate_options

OLD_SPELLINGS = {"paths", "time_limit", "ceiling", "failure_ceiling", "survivability"}


def test_no_model_uses_an_old_spelling_as_its_own_name() -> None:
    models = [task.options_model for task in TASKS.values()] + [PlanUpgradeOptions]
    for model in models:
        assert not OLD_SPELLINGS & set(model.model_fields), model.__name__


@pytest.mark.parametrize(("kind", "old", "new", "attr", "value"), [
    ("te", "paths", "k_paths", "k_paths", 7),
    ("te", "time_limit", "time_limit_s", "time_limit_s", 12.0),
    ("failures", "paths", "k_paths", "k_paths", 5),
    ("failures", "time_limit", "time_limit_s", "time_limit_s", 9.0),
    ("place", "time_limit", "time_limit_s", "time_limit_s", 8.0),
    ("design", "time_limit", "time_limit_s", "time_limit_s", 11.0),
    ("design", "ceiling", "utilisation_ceiling", "utilisation_ceiling", 0.6),
    ("design", "failure_ceiling", "failure_utilisation_ceiling", "failure_utilisation_ceiling", 0.9),
    ("design", "survivability", "survive", "survive", "link"),
])
def test_old_and_new_spellings_give_the_same_options(kind: str, old: str, new: str, attr: str, value: Any) -> None:
    by_old = parse_options(kind, {old: value})
    by_new = parse_options(kind, {new: value})
    assert getattr(by_old, attr) == getattr(by_new, attr) == value
    assert by_old == by_new
    with pytest.raises(ValidationError) as err:
        parse_options(kind, {old: value, new: value})
    assert [p.field for p in err.value.problems] == [new]
    assert "given twice" in err.value.problems[0].message


def test_a_bad_value_is_named_as_the_caller_spelled_it() -> None:
    with pytest.raises(ValidationError) as old:
        parse_options("te", {"paths": 0})
    with pytest.raises(ValidationError) as new:
        parse_options("te", {"k_paths": 0})
    assert [p.field for p in old.value.problems] == ["paths"]
    assert [p.field for p in new.value.problems] == ["k_paths"]


def test_did_you_mean_suggests_the_options_own_name() -> None:
    with pytest.raises(ValidationError, match="did you mean 'k_paths'"):
        parse_options("te", {"pathz": 4})
    with pytest.raises(ValidationError, match="did you mean 'time_limit_s'"):
        parse_options("failures", {"time_limits": 4})


def test_plan_stage_defaults_yield_to_an_old_spelling() -> None:
    plan = parse_options("plan", {"te": {"paths": 6, "time_limit": 7}, "failures": {"time_limit": 3},
                                  "design": {"ceiling": 0.5, "failure_ceiling": 0.95, "time_limit": 5}})
    place, te, failures, upgrade = stage_options(plan)
    assert (te.k_paths, te.time_limit_s) == (6, 7.0)  # not the stage default of 60 s
    assert failures.time_limit_s == 3.0  # not the stage default of 30 s
    assert (upgrade.utilisation_ceiling, upgrade.failure_utilisation_ceiling, upgrade.time_limit_s) == (0.5, 0.95, 5.0)
    assert place.time_limit_s == 60.0


def test_plan_names_a_bad_nested_option_with_its_stage() -> None:
    with pytest.raises(ValidationError) as err:
        parse_options("plan", {"failures": {"paths": 0}, "design": {"ceiling": 2, "k_paths": 3}})
    assert {p.field for p in err.value.problems} == {"failures.paths", "design.ceiling", "design.k_paths"}


def test_roadmap_defaults_yield_to_an_old_spelling() -> None:
    opts = validate_options(RoadmapOptions, {"design": {"time_limit": 4}, "place": {"time_limit": 6}})
    place, _te, _failures, upgrade = roadmap_stage_options(opts)
    assert upgrade.time_limit_s == 4.0  # not the roadmap's 15 s per period
    assert place.time_limit_s == 6.0  # not the roadmap's 30 s


def test_canonical_names_keeps_unknown_names_for_the_model_to_refuse() -> None:
    from backbone.solver.tasks.te import TEOptions

    assert canonical_names(TEOptions, {"paths": 3, "bogus": 1}) == {"k_paths": 3, "bogus": 1}
    assert accepted_names(TEOptions)["time_limit"] == "time_limit_s"


def test_solve_te_takes_the_options_object(triangle: Any) -> None:
    """``solve_te(net, TEOptions(...))`` solves exactly what the same keywords do (one vocabulary)."""
    from backbone.solver.te import TEOptions, solve_te

    opts = TEOptions(objective="max-throughput", k_paths=2, utilisation_ceiling=0.5, time_limit_s=30)
    by_options = solve_te(triangle, opts)
    by_keywords = solve_te(triangle, "max-throughput", k_paths=2, utilisation_ceiling=0.5, time_limit_s=30)
    by_old_names, said = _deprecated(solve_te, triangle, "max-throughput", k=2, ceiling=0.5, time_limit=30)
    assert said == {f"solve_te: {old}= is deprecated; use {new}=" for old, new in (
        ("k", "k_paths"), ("ceiling", "utilisation_ceiling"), ("time_limit", "time_limit_s"))}
    assert by_options.summary["paths_k"] == 2 and by_options.summary["utilisation_ceiling"] == 0.5
    for key in ("status", "objective_value", "carried_gbps", "unmet_gbps", "mlu"):
        assert by_options.summary[key] == pytest.approx(by_keywords.summary[key])
        assert by_old_names.summary[key] == pytest.approx(by_keywords.summary[key])
    assert by_options.summary["mlu"] <= 0.5 + 1e-6


def test_solve_te_options_are_keyword_only(triangle: Any) -> None:
    """Only ``objective`` is positional; an old and a new spelling that disagree are refused."""
    from backbone.solver.te import solve_te

    with pytest.raises(TypeError):
        solve_te(triangle, "min-mlu", "edge")  # type: ignore[misc]
    with pytest.raises(TypeError, match="k_paths"), pytest.warns(DeprecationWarning):
        solve_te(triangle, "min-mlu", k=2, k_paths=3)


def test_lower_level_functions_take_the_options_names_and_warn_on_the_old_ones(triangle: Any) -> None:
    """``run_colgen``, ``run_pop``, ``solve``, ``assess_state`` and ``check_survivability`` are spelt as the
    options; the old keywords still work, with a :class:`DeprecationWarning`, and must agree with the new ones."""
    import warnings

    import scipy.sparse as sp

    from backbone.solver.checks.survivability import check_survivability
    from backbone.solver.core.problem import LinearProgram, solve
    from backbone.solver.failures.impact import assess_state
    from backbone.solver.te.colgen import run_colgen
    from backbone.solver.te.instance import build_instance
    from backbone.solver.te.pop import run_pop

    inst = build_instance(triangle)
    lp = LinearProgram("one")
    lp.add_variables("x", 2, cost=[1.0, 2.0])
    lp.add_constraints("cover", sp.csr_matrix([[1.0, 1.0]]), lower=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new names do not warn
        new = {"solve": solve(lp, time_limit_s=10).objective,
               "colgen": run_colgen(inst, "max-throughput", k_paths=2, time_limit_s=30,
                                    utilisation_ceiling=0.5).objective_value,
               "pop": run_pop(inst, "max-throughput", k_paths=2, parts=1, time_limit_s=30, utilisation_ceiling=0.5,
                              workers=1).objective_value,
               "assess": assess_state(triangle, k_paths=2, time_limit_s=30).mlu}
        assert check_survivability(triangle, survive="link", k_paths=2).checked
    renamed = {"k": "k_paths", "time_limit": "time_limit_s", "ceiling": "utilisation_ceiling"}
    solved, said = _deprecated(solve, lp, time_limit=10)
    assert solved.objective == pytest.approx(new["solve"])
    assert said == {"solve: time_limit= is deprecated; use time_limit_s="}
    colgen, said = _deprecated(run_colgen, inst, "max-throughput", k=2, time_limit=30, ceiling=0.5)
    assert colgen.objective_value == pytest.approx(new["colgen"])
    assert said == {f"run_colgen: {old}= is deprecated; use {to}=" for old, to in renamed.items()}
    pop, said = _deprecated(run_pop, inst, "max-throughput", k=2, parts=1, time_limit=30, ceiling=0.5, workers=1)
    assert pop.objective_value == pytest.approx(new["pop"])
    assert said == {f"run_pop: {old}= is deprecated; use {to}=" for old, to in renamed.items()}
    state, said = _deprecated(assess_state, triangle, k=2, time_limit_s=30)
    assert state.mlu == pytest.approx(new["assess"]) and said == {"assess_state: k= is deprecated; use k_paths="}
    report, said = _deprecated(check_survivability, triangle, failure_kind="link", k=2)
    assert report.checked == check_survivability(triangle, "link", k_paths=2).checked
    assert said == {"check_survivability: failure_kind= is deprecated; use survive=",
                    "check_survivability: k= is deprecated; use k_paths="}
    with pytest.raises(TypeError, match="k_paths"):
        _deprecated(run_colgen, inst, "min-mlu", k=2, k_paths=3)
    with pytest.raises(TypeError, match="survive"):
        check_survivability(triangle)


def _deprecated(function: Any, *args: Any, **kwargs: Any) -> tuple[Any, set[str]]:
    """``function(*args, **kwargs)`` and the messages of the deprecation warnings it gave (each warned once)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = function(*args, **kwargs)
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(said) == len(set(said)) and all(w.filename == __file__ for w in caught
                                                if issubclass(w.category, DeprecationWarning))
    return out, set(said)


def test_candidate_paths_take_k_paths_and_warn_on_k(triangle: Any) -> None:
    """``candidate_paths`` and ``paths_after_failure`` are spelt ``k_paths``; ``k=`` still works, with a warning."""
    import warnings

    from backbone.solver.paths.candidates import candidate_paths, paths_after_failure

    pairs = [("A", "C"), ("B", "C")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = candidate_paths(triangle, pairs, k_paths=1, cache=False)
        after = paths_after_failure(triangle, ["AC"], pairs, k_paths=1)
    old, said = _deprecated(candidate_paths, triangle, pairs, k=1, cache=False)
    assert said == {"candidate_paths: k= is deprecated; use k_paths="}
    assert old.n_paths == new.n_paths == 2 and (old.path_pair == new.path_pair).all()
    old_after, said = _deprecated(paths_after_failure, triangle, ["AC"], pairs, k=1)
    assert said == {"paths_after_failure: k= is deprecated; use k_paths="}
    assert [old_after.path_links(i) for i in range(old_after.n_paths)] == \
        [after.path_links(i) for i in range(after.n_paths)]
    with pytest.raises(TypeError, match="k_paths"):
        _deprecated(candidate_paths, triangle, pairs, k=1, k_paths=2)


def test_design_functions_take_the_options_names_and_warn_on_the_old_ones(triangle: Any) -> None:
    """``solve_design``, ``check_design``, ``evaluate_design``, ``design_upgrades``, ``instance_from_network``,
    ``plan_path_upgrades`` and ``verify_path_upgrades`` are spelt as the options; the old keywords still work."""
    import warnings

    from backbone.solver.checks.design import check_design, configurations_from_counts
    from backbone.solver.design import evaluate_design, solve_design
    from backbone.solver.design.upgrades import plan_path_upgrades, verify_path_upgrades
    from backbone.solver.design.upgrades.edge import design_upgrades, instance_from_network

    triangle = triangle.copy_with(links=triangle.links.assign(module_gbps=10.0, max_capacity_gbps=100.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        inst = instance_from_network(triangle, "none", utilisation_ceiling=0.5)
        sol = solve_design(inst, time_limit_s=30)
        check = check_design(inst, configurations_from_counts(inst, sol.counts), time_limit_s=30)
        evaluated = evaluate_design(inst, sol.counts, time_limit_s=30)
        upgrades = design_upgrades(triangle, "none", utilisation_ceiling=0.5, time_limit_s=30)
        path_plan = plan_path_upgrades(triangle, [()], utilisation_ceiling=0.5, k_paths=2, time_limit_s=30)
        assert verify_path_upgrades(triangle, path_plan, [()], k_paths=2)["ok"]
    assert check.report.ok and evaluated is not None
    old_inst, said = _deprecated(instance_from_network, triangle, "none", ceiling=0.5)
    assert said == {"instance_from_network: ceiling= is deprecated; use utilisation_ceiling="}
    assert old_inst.modules.equals(inst.modules)
    old_sol, said = _deprecated(solve_design, inst, time_limit=30)
    assert said == {"solve_design: time_limit= is deprecated; use time_limit_s="}
    assert old_sol.cost == pytest.approx(sol.cost)
    old_check, said = _deprecated(check_design, inst, configurations_from_counts(inst, sol.counts), time_limit=30)
    assert said == {"check_design: time_limit= is deprecated; use time_limit_s="} and old_check.report.ok
    old_eval, said = _deprecated(evaluate_design, inst, sol.counts, time_limit=30)
    assert said == {"evaluate_design: time_limit= is deprecated; use time_limit_s="}
    assert old_eval is not None and old_eval.cost == pytest.approx(evaluated.cost)
    with pytest.raises(TypeError, match="time_limit_s is required"):
        evaluate_design(inst, sol.counts)
    old_upgrades, said = _deprecated(design_upgrades, triangle, "none", ceiling=0.5, time_limit=30)
    assert said == {"design_upgrades: ceiling= is deprecated; use utilisation_ceiling=",
                    "design_upgrades: time_limit= is deprecated; use time_limit_s="}
    assert old_upgrades.cost_usd == pytest.approx(upgrades.cost_usd) and old_upgrades.ceiling == 0.5
    old_plan, said = _deprecated(plan_path_upgrades, triangle, [()], ceiling=0.5, k=2, time_limit=30)
    assert said == {f"plan_path_upgrades: {old}= is deprecated; use {new}=" for old, new in (
        ("ceiling", "utilisation_ceiling"), ("k", "k_paths"), ("time_limit", "time_limit_s"))}
    assert old_plan.cost_usd == pytest.approx(path_plan.cost_usd) and old_plan.ceiling == 0.5
    verified, said = _deprecated(verify_path_upgrades, triangle, path_plan, [()], k=2)
    assert said == {"verify_path_upgrades: k= is deprecated; use k_paths="} and verified["ok"]
    with pytest.raises(TypeError, match="time_limit_s"):
        _deprecated(design_upgrades, triangle, "none", time_limit=30, time_limit_s=20)


def test_formulation_functions_take_the_options_names_and_warn_on_the_old_ones(triangle: Any) -> None:
    """``build_formulation`` (and its path / edge builders) take ``k_paths``; ``run_objective`` takes
    ``time_limit_s`` and ``utilisation_ceiling``; the old keywords still work, with a warning."""
    import warnings

    from backbone.solver.te.formulations import (
        build_edge_formulation,
        build_formulation,
        build_path_formulation,
    )
    from backbone.solver.te.instance import build_instance
    from backbone.solver.te.objectives import run_objective

    inst = build_instance(triangle)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        form = build_formulation(inst, "path", k_paths=1)
        out = run_objective(form, inst, "max-throughput", time_limit_s=30, utilisation_ceiling=0.5)
        build_path_formulation(inst, k_paths=1)
        build_edge_formulation(inst, k_paths=1)
    old_form, said = _deprecated(build_formulation, inst, "path", k=1)
    assert said == {"build_formulation: k= is deprecated; use k_paths="}
    assert old_form.lp.n_cols == form.lp.n_cols
    assert old_form.lp.n_cols < build_formulation(inst, "path", k_paths=4).lp.n_cols  # k=1 really limits paths
    for builder in (build_path_formulation, build_edge_formulation):
        _, said = _deprecated(builder, inst, k=1)
        assert said == {f"{builder.__name__}: k= is deprecated; use k_paths="}
    old_out, said = _deprecated(run_objective, form, inst, "max-throughput", time_limit=30, ceiling=0.5)
    assert said == {"run_objective: time_limit= is deprecated; use time_limit_s=",
                    "run_objective: ceiling= is deprecated; use utilisation_ceiling="}
    assert old_out.objective_value == pytest.approx(out.objective_value)
    with pytest.raises(TypeError, match="utilisation_ceiling"):
        _deprecated(run_objective, form, inst, "max-throughput", ceiling=0.5, utilisation_ceiling=0.7)
