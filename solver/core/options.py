"""The options vocabulary every options model shares: validation that names each bad option by its dotted name
(:func:`validate_options`), the options shared by several tasks, declared once with one limit (:data:`KPaths`,
:data:`TimeLimitS`, ...), the names a model's options are given under (:func:`option_names`) and the did-you-mean
hint.

Algorithm modules (the roadmap, the plan's stage defaults) and the planning service
(:mod:`backbone.solver.tasks.service`) both use it; it imports no task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from backbone.errors import Problem, ValidationError
from backbone.failure_policy import FailurePolicyName, check_failure_policy

__all__ = ["BoundTimeLimitS", "FailurePolicyOption", "KPaths", "MipGap", "TimeLimitS", "did_you_mean", "option_names",
           "sub_models", "validate_options"]

# Options several tasks share, declared once with one limit; each model gives its own default and description
# (``k_paths: KPaths = Field(4, description=...)``; pydantic merges the two).
K_PATHS_MAX = 64
KPaths = Annotated[int, Field(ge=1, le=K_PATHS_MAX)]
"""Candidate paths per demand (or per metro-site pair): 1 to :data:`K_PATHS_MAX`."""
TimeLimitS = Annotated[float, Field(gt=0, le=86_400)]
"""A solve's wall-clock limit in seconds: positive, at most a day."""
BoundTimeLimitS = Annotated[float, Field(ge=0, le=86_400)]
"""Seconds for a lower bound; 0 skips it."""
MipGap = Annotated[float, Field(ge=0, lt=1)]
"""Relative MIP gap at which a MIP stops."""


def _known_classes(policy: dict[str, str] | None) -> dict[str, str] | None:
    problems = check_failure_policy(policy, file="", table="options")
    if problems:
        raise ValueError("; ".join(f"{p.field}: {p.message}" for p in problems))
    return policy


FailurePolicyOption = Annotated[
    dict[str, FailurePolicyName] | None, AfterValidator(_known_classes),
    Field(description="Failure policy per traffic class for this run, over the scenario's (scenario.yaml "
                      "failure_policy) and the defaults (training-sync pauses, every other class survives): "
                      "{class: survive | pause}. In a failure state a pausing class's demands are not offered "
                      "(paused_gbps, beside unmet_gbps); the intact state offers every class.")]
"""The run's failure policy per traffic class (:mod:`backbone.failure_policy`), declared once: the failures, design
and plan options give it as ``failure_policy: FailurePolicyOption = None``."""


def validate_options(model: Any, options: Mapping[str, Any] | None) -> Any:
    """``model.model_validate(options)`` (its typed sub-models, e.g. a plan's stages, reported under dotted
    names), then the model's ``nested_problems()`` when it has one (options holding other tasks' options as
    plain mappings, e.g. the roadmap's stages). Each option has one name: an older spelling is an unknown option,
    refused with a did-you-mean hint.

    Raises
    ------
    ValidationError
        Naming each bad option (``field`` is the option's dotted name).
    """
    import pydantic

    try:
        opts = model.model_validate(dict(options or {}))
    except pydantic.ValidationError as exc:
        problems = [Problem(("unknown option" if e["type"] == "extra_forbidden" else e["msg"]) + did_you_mean(e, model),
                            table="options", field=".".join(str(p) for p in e["loc"]))
                    for e in exc.errors()]
        raise ValidationError(problems) from None
    nested = getattr(opts, "nested_problems", None)
    problems = nested() if callable(nested) else []
    if problems:
        raise ValidationError([Problem(p.message, table="options", field=p.field) for p in problems])
    return opts


def sub_models(model: Any) -> dict[str, Any]:
    """The fields of ``model`` that are options models themselves (a plan's ``place``, ``te``, ...) -> their
    model."""
    from pydantic import BaseModel

    return {name: info.annotation for name, info in getattr(model, "model_fields", {}).items()
            if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)}


def option_names(model: Any) -> list[str]:
    """The names ``model``'s options are given under: each field's name, or its alias where the name is a Python
    keyword (the roadmap's ``from``)."""
    return [info.alias or name for name, info in getattr(model, "model_fields", {}).items()]


def did_you_mean(error: Mapping[str, Any], model: Any) -> str:
    """``"; did you mean 'time_limit_s'?"`` for an unknown option close to a known one (else "")."""
    import difflib

    loc = tuple(error.get("loc", ()))
    if error.get("type") != "extra_forbidden" or not loc:
        return ""
    for part in loc[:-1]:  # a nested option (place.time_limitz): the hint comes from the stage's own model
        model = sub_models(model).get(str(part))
        if model is None:
            return ""
    name = str(loc[-1])
    known = option_names(model)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if not close:
        close = [k for k in known if k.startswith(name) or name.startswith(k)][:1]
    return f"; did you mean {close[0]!r}?" if close else f"; known options: {', '.join(known)}"
