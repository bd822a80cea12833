"""A plan's stages are typed sub-models of :class:`PlanOptions`: a bad stage option is refused under its dotted
name, the plan's stage defaults are applied by the model's validator (the same defaults the plan always had),
each option has one name, and the options serialise to JSON and back."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from backbone.errors import ValidationError
from backbone.solver.failures.options import FailureOptions
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.tasks import parse_options
from backbone.solver.tasks.plan_options import PlanOptions, PlanUpgradeOptions
from backbone.solver.tasks.te import TEOptions


def old_stage_defaults(options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The stage defaults as the plan applied them before its stages were typed (``stage_options`` merged these
    dicts under the given sections), written out independently of the model's validator."""
    verify = bool(options.get("verify", False))
    design_survive = options.get("design", {}).get("survive")
    survive = design_survive or options.get("failures", {}).get("kind") or "srlg"
    # since issue #32 the sweep before the design follows the design's kind (srlg unless told otherwise)
    sweep_kind = design_survive if design_survive in ("link", "srlg", "site", "srlg,link") else "srlg"
    return {
        "place": {"allow_partial": True, "verify": verify, "time_limit_s": 60.0,
                  "slo_failures": survive if survive in ("link", "srlg", "srlg,link") else "none"},
        "te": {"objective": "min-mlu", "verify": verify, "time_limit_s": 60.0},
        "failures": {"kind": sweep_kind, "verify": False, "time_limit_s": 30.0},
        "design": {},
    }


STAGE_MODELS = {"place": PlaceOptions, "te": TEOptions, "failures": FailureOptions, "design": PlanUpgradeOptions}


@pytest.mark.parametrize("options", [
    {},
    {"verify": True},
    {"failures": {"kind": "link"}},
    {"failures": {"kind": "site"}},
    {"design": {"survive": "none"}, "failures": {"kind": "link"}},
    {"design": {"survive": "link"}, "verify": True, "te": {"k_paths": 4}},
    {"place": {"time_limit_s": 5}, "failures": {"time_limit_s": 7, "kind": "srlg"}},
    {"design": {"survive": "srlg,link"}},
])
def test_validator_defaults_equal_the_old_stage_defaults(options: dict[str, Any]) -> None:
    opts = PlanOptions.model_validate(options)
    defaults = old_stage_defaults(options)
    for stage, model in STAGE_MODELS.items():
        expected = model.model_validate({**defaults[stage], **options.get(stage, {})})
        assert getattr(opts, stage) == expected, stage
        assert isinstance(getattr(opts, stage), model)


def test_the_plan_defaults_differ_from_the_stage_tasks_own() -> None:
    """The validator is what sets them: the stage tasks alone default otherwise."""
    opts = PlanOptions()
    assert (opts.te.time_limit_s, TEOptions().time_limit_s) == (60.0, 120.0)
    assert opts.failures.time_limit_s == 30.0 != FailureOptions().time_limit_s
    assert opts.place.allow_partial and opts.place.slo_failures == "srlg"
    assert PlanOptions.model_validate({"failures": {"kind": "site"}}).place.slo_failures == "none"


@pytest.mark.parametrize(("options", "field", "message"), [
    ({"place": {"time_limitz": 3}}, "place.time_limitz", "did you mean 'time_limit_s'?"),
    ({"te": {"objectiv": "min-mlu"}}, "te.objectiv", "did you mean 'objective'?"),
    ({"te": {"time_limit_s": -1}}, "te.time_limit_s", "greater than 0"),
    ({"failures": {"kind": "bogus"}}, "failures.kind", "'srlg'"),
    ({"design": {"utilisation_ceiling": 2}}, "design.utilisation_ceiling", "less than or equal to 1"),
    ({"te": {"paths": 3, "k_paths": 4}}, "te.paths", "did you mean 'k_paths'?"),  # one name per option
])
def test_a_bad_nested_option_names_its_dotted_field(options: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse_options("plan", options)
    assert [p.field for p in err.value.problems] == [field]
    assert message in err.value.problems[0].message
    assert err.value.exit_code == 2 and err.value.http_status == 422


def test_model_validate_locates_a_nested_error_at_its_stage() -> None:
    with pytest.raises(pydantic.ValidationError) as err:
        PlanOptions.model_validate({"place": {"time_limitz": 3}})
    assert [e["loc"] for e in err.value.errors()] == [("place", "time_limitz")]


def test_a_typed_stage_keeps_the_plan_defaults_it_does_not_set() -> None:
    opts = PlanOptions(te=TEOptions(k_paths=3), verify=True)
    assert (opts.te.k_paths, opts.te.time_limit_s, opts.te.objective, opts.te.verify) == (3, 60.0, "min-mlu", True)


def test_the_given_options_reach_the_typed_stages() -> None:
    opts = parse_options("plan", {"te": {"k_paths": 6, "time_limit_s": 7},
                                  "design": {"utilisation_ceiling": 0.5, "survive": "link"}})
    assert (opts.te.k_paths, opts.te.time_limit_s) == (6, 7.0)
    assert (opts.design.utilisation_ceiling, opts.design.survive) == (0.5, "link")
    assert opts.place.slo_failures == "link"  # the placement follows the design's survive kind


def test_options_serialise_to_json_with_the_same_keys_and_back() -> None:
    opts = parse_options("plan", {"te": {"k_paths": 5}, "failures": {"kind": "link"}, "demand_growth": 1.5})
    doc = json.loads(json.dumps(opts.model_dump(mode="json")))
    assert set(doc) == set(PlanOptions.model_fields)
    assert doc["te"]["k_paths"] == 5 and doc["failures"]["kind"] == "link"
    assert parse_options("plan", doc) == opts


def test_roadmap_stages_are_typed_with_the_roadmap_defaults() -> None:
    from backbone.solver.roadmap.options import RoadmapOptions

    opts = parse_options("roadmap", {"design": {"time_limit_s": 4}, "failures": {"kind": "link"}, "verify": True})
    defaults = old_stage_defaults({"failures": {"kind": "link"}})  # the roadmap's verify is its checker's only
    assert opts.design == PlanUpgradeOptions.model_validate({"time_limit_s": 4.0})  # the given 4 s beats the roadmap's 15 s
    assert opts.place == PlaceOptions.model_validate({**defaults["place"], "time_limit_s": 30.0, "mip_gap": 0.005,
                                                      "lp_bound": False})
    assert opts.te == TEOptions.model_validate(defaults["te"])
    assert opts.failures == FailureOptions.model_validate({**defaults["failures"], "kind": "link"})
    assert RoadmapOptions().design.time_limit_s == 15.0
    with pytest.raises(ValidationError) as err:
        parse_options("roadmap", {"design": {"time_limitz": 4}})
    assert [p.field for p in err.value.problems] == ["design.time_limitz"]
    assert "did you mean 'time_limit_s'?" in err.value.problems[0].message
