"""One options vocabulary, one name per option (issue #30 item 3): every task's options model uses ``k_paths``,
``time_limit_s``, ``utilisation_ceiling`` and ``survive``; an older spelling is an unknown option (a did-you-mean
hint where it is close), in the options models and in the functions' keywords alike; the options several models
share are declared once, with one limit; and the algorithm function ``te.solve_te`` takes its options model."""

from __future__ import annotations

from typing import Any

import pytest

from backbone.errors import ValidationError
from backbone.solver.roadmap.options import RoadmapOptions
from backbone.solver.roadmap.options import stage_options as roadmap_stage_options
from backbone.solver.tasks import parse_options
from backbone.solver.tasks.plan_options import PlanUpgradeOptions, stage_options
from backbone.solver.tasks.registry import TASKS
from backbone.solver.tasks.service import validate_options

OLD_SPELLINGS = {"paths", "k", "time_limit", "ceiling", "failure_ceiling", "survivability", "failure_kind",
                 "use_candidates"}


def test_no_model_uses_or_accepts_an_old_spelling() -> None:
    models = [task.options_model for task in TASKS.values()] + [PlanUpgradeOptions]
    for model in models:
        assert not OLD_SPELLINGS & set(model.model_fields), model.__name__
        for name, info in model.model_fields.items():
            assert info.validation_alias is None, f"{model.__name__}.{name} accepts another spelling"


@pytest.mark.parametrize(("kind", "old", "value", "hint"), [
    ("te", "paths", 7, "did you mean 'k_paths'"),
    ("te", "time_limit", 12.0, "did you mean 'time_limit_s'"),
    ("failures", "paths", 5, "did you mean 'k_paths'"),
    ("place", "time_limit", 8.0, "did you mean 'time_limit_s'"),
    ("design", "ceiling", 0.6, "unknown option"),
    ("design", "failure_ceiling", 0.9, "unknown option"),
    ("design", "survivability", "link", "unknown option"),
])
def test_an_old_spelling_is_an_unknown_option(kind: str, old: str, value: Any, hint: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse_options(kind, {old: value})
    assert [p.field for p in err.value.problems] == [old]
    assert "unknown option" in err.value.problems[0].message and hint in err.value.problems[0].message


def test_did_you_mean_suggests_the_options_own_name() -> None:
    with pytest.raises(ValidationError, match="did you mean 'k_paths'"):
        parse_options("te", {"pathz": 4})
    with pytest.raises(ValidationError, match="did you mean 'time_limit_s'"):
        parse_options("failures", {"time_limits": 4})


@pytest.mark.parametrize("kind", ["te", "failures", "place"])
def test_k_paths_has_one_limit_everywhere(kind: str) -> None:
    """``k_paths`` is declared once (:data:`backbone.solver.core.options.KPaths`): 64 is accepted by every task
    that takes it, 65 and 0 by none."""
    from backbone.solver.core.options import K_PATHS_MAX

    assert parse_options(kind, {"k_paths": K_PATHS_MAX}).k_paths == K_PATHS_MAX
    for bad in (0, K_PATHS_MAX + 1):
        with pytest.raises(ValidationError) as err:
            parse_options(kind, {"k_paths": bad})
        assert [p.field for p in err.value.problems] == ["k_paths"]
    survivable = parse_options("design", {"survive": "link", "routing": "paths"})
    assert survivable.survive == "link"


def test_time_limit_has_one_limit_everywhere() -> None:
    for kind in ("te", "failures", "place", "design"):
        with pytest.raises(ValidationError) as err:
            parse_options(kind, {"time_limit_s": 86_401})
        assert [p.field for p in err.value.problems] == ["time_limit_s"], kind


def test_plan_stage_defaults_yield_to_the_given_options() -> None:
    plan = parse_options("plan", {"te": {"k_paths": 6, "time_limit_s": 7}, "failures": {"time_limit_s": 3},
                                  "design": {"utilisation_ceiling": 0.5, "failure_utilisation_ceiling": 0.95,
                                             "time_limit_s": 5}})
    place, te, failures, upgrade = stage_options(plan)
    assert (te.k_paths, te.time_limit_s) == (6, 7.0)  # not the stage default of 60 s
    assert failures.time_limit_s == 3.0  # not the stage default of 30 s
    assert (upgrade.utilisation_ceiling, upgrade.failure_utilisation_ceiling, upgrade.time_limit_s) == (0.5, 0.95, 5.0)
    assert place.time_limit_s == 60.0


def test_plan_names_a_bad_nested_option_with_its_stage() -> None:
    with pytest.raises(ValidationError) as err:
        parse_options("plan", {"failures": {"paths": 0}, "design": {"utilisation_ceiling": 2, "k_paths": 3}})
    assert {p.field for p in err.value.problems} == {"failures.paths", "design.utilisation_ceiling", "design.k_paths"}


def test_roadmap_defaults_yield_to_the_given_options() -> None:
    opts = validate_options(RoadmapOptions, {"design": {"time_limit_s": 4}, "place": {"time_limit_s": 6}})
    place, _te, _failures, upgrade = roadmap_stage_options(opts)
    assert upgrade.time_limit_s == 4.0  # not the roadmap's 15 s per period
    assert place.time_limit_s == 6.0  # not the roadmap's 30 s


def test_a_backend_has_one_name() -> None:
    assert parse_options("te", {"backend": "ortools-glop"}).backend == "ortools-glop"
    for alias in ("glop", "ortools", "cbc", "pulp", "scip", "pdlp"):
        with pytest.raises(ValidationError, match="unknown backend"):
            parse_options("te", {"backend": alias})


def test_solve_te_takes_its_options_model(triangle: Any) -> None:
    """``te.solve_te(net, TEOptions(...))``: the algorithm takes its options model; the facade
    (``backbone.solve_te``) is the keyword layer and solves the same."""
    import backbone
    from backbone.solver.te import TEOptions, solve_te

    opts = TEOptions(objective="max-throughput", k_paths=2, utilisation_ceiling=0.5, time_limit_s=30)
    by_options = solve_te(triangle, opts)
    by_keywords = backbone.solve_te(triangle, objective="max-throughput", k_paths=2, utilisation_ceiling=0.5,
                                    time_limit_s=30, impact=False)
    assert by_options.summary.paths_k == 2 and by_options.summary.utilisation_ceiling == 0.5
    for key in ("status", "objective_value", "carried_gbps", "unmet_gbps", "mlu"):
        assert getattr(by_options.summary, key) == pytest.approx(getattr(by_keywords.summary, key))
    assert by_options.summary.mlu <= 0.5 + 1e-6
    assert solve_te(triangle).summary.objective == "min-mlu"  # the options' defaults


def test_solve_te_refuses_keywords_of_the_options(triangle: Any) -> None:
    """Options go in the model: neither an option's name nor an older spelling is a keyword of ``te.solve_te``,
    and the facade refuses an older spelling."""
    import backbone
    from backbone.solver.te import solve_te

    with pytest.raises(TypeError):
        solve_te(triangle, "min-mlu")  # type: ignore[arg-type]  # an objective is not an options model
    with pytest.raises(TypeError):
        solve_te(triangle, k_paths=2)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="did you mean 'k_paths'"):
        backbone.solve_te(triangle, paths=2)


@pytest.mark.parametrize(("module", "function", "old"), [
    ("backbone.solver.te.colgen", "run_colgen", "k"),
    ("backbone.solver.te.colgen", "run_colgen", "time_limit"),
    ("backbone.solver.te.pop", "run_pop", "ceiling"),
    ("backbone.solver.core.problem", "solve", "time_limit"),
    ("backbone.solver.failures.impact", "assess_state", "k"),
    ("backbone.solver.checks.survivability", "check_survivability", "failure_kind"),
    ("backbone.solver.checks.survivability", "check_survivability", "k_paths"),  # the checker routes every path
    ("backbone.solver.paths.candidates", "candidate_paths", "k"),
    ("backbone.solver.paths.candidates", "paths_after_failure", "k"),
    ("backbone.solver.te.formulations", "build_formulation", "k"),
    ("backbone.solver.te.objectives", "run_objective", "ceiling"),
    ("backbone.solver.design.solve", "solve_design", "time_limit"),
    ("backbone.solver.design.heuristics", "evaluate_design", "time_limit"),
    ("backbone.solver.checks.design", "check_design", "time_limit"),
    ("backbone.solver.design.upgrades.edge", "design_upgrades", "ceiling"),
    ("backbone.solver.design.upgrades.edge", "instance_from_network", "ceiling"),
    ("backbone.solver.design.upgrades.paths", "plan_path_upgrades", "k"),
    ("backbone.solver.design.upgrades.paths", "verify_path_upgrades", "k"),
])
def test_lower_level_functions_have_one_name_per_parameter(module: str, function: str, old: str) -> None:
    """No function keeps an older keyword (``k=``, ``time_limit=``, ``ceiling=``, ``failure_kind=``): passing one is
    Python's own TypeError, before any work."""
    import importlib
    import inspect

    fn = getattr(importlib.import_module(module), function)
    params = inspect.signature(fn).parameters
    assert old not in params
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()) or function == "solve"


def test_the_old_keywords_are_refused(triangle: Any) -> None:
    from backbone.solver.paths.candidates import candidate_paths

    with pytest.raises(TypeError):
        candidate_paths(triangle, [("A", "C")], k=1)  # type: ignore[call-arg]
    assert candidate_paths(triangle, [("A", "C")], k_paths=1, cache=False).n_paths == 1
