"""The options vocabulary every options model shares: validation that names each bad option by its dotted name
(:func:`validate_options`), the spellings an option is accepted under (:func:`accepted_names`,
:func:`canonical_names`), merging defaults by option rather than by spelling (:func:`merge_options`) and the
did-you-mean hint.

Algorithm modules (the roadmap, the plan's stage defaults) and the planning service
(:mod:`backbone.solver.tasks.service`) both use it; it imports no task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backbone.errors import Problem, ValidationError

__all__ = ["accepted_names", "canonical_names", "did_you_mean", "given_twice", "merge_options", "sub_models",
           "validate_options"]


def validate_options(model: Any, options: Mapping[str, Any] | None) -> Any:
    """``model.model_validate(options)`` (its typed sub-models, e.g. a plan's stages, reported under dotted
    names), then the model's ``nested_problems()`` when it has one (options holding other tasks' options as
    plain mappings, e.g. the roadmap's stages).

    Raises
    ------
    ValidationError
        Naming each bad option (``field`` is the option's dotted name).
    """
    import pydantic

    given = dict(options or {})
    spelled = {accepted_names(model).get(str(k), str(k)): str(k) for k in given}  # own name -> as the user wrote it
    canonical = canonical_names(model, given)
    nested_twice = [Problem(p.message, table="options", field=f"{spelled.get(name, name)}.{p.field}")
                    for name, sub in sub_models(model).items() for p in given_twice(sub, canonical.get(name))]
    if nested_twice:  # a stage's option under two spellings (te.paths and te.k_paths)
        raise ValidationError(nested_twice)
    try:
        opts = model.model_validate(canonical)
    except pydantic.ValidationError as exc:
        problems = [Problem(("unknown option" if e["type"] == "extra_forbidden" else e["msg"]) + did_you_mean(e, model),
                            table="options", field=".".join([spelled.get(str(e["loc"][0]), str(e["loc"][0])),
                                                             *(str(p) for p in e["loc"][1:])]) if e["loc"] else "")
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


def given_twice(model: Any, options: Any) -> list[Problem]:
    """Problems for options of ``model`` given under two spellings in ``options`` (a mapping; else none)."""
    if not isinstance(options, Mapping):
        return []
    try:
        canonical_names(model, options)
    except ValidationError as exc:
        return list(exc.problems)
    return []


def accepted_names(model: Any) -> dict[str, str]:
    """Every name an option of ``model`` is accepted under -> the option's own name: the field names and
    the older spellings its ``validation_alias=AliasChoices(...)`` keeps working (``paths`` -> ``k_paths``)."""
    from pydantic import AliasChoices

    names: dict[str, str] = {}
    for name, info in getattr(model, "model_fields", {}).items():
        if info.alias:  # validated under its alias (``from``): that is the name to keep
            names[info.alias] = info.alias
            continue
        names[name] = name
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if isinstance(alias, str) else []
        names.update({str(c): name for c in choices if isinstance(c, str)})
    return names


def canonical_names(model: Any, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` with each older spelling renamed to the option's own name (``{"paths": 6}`` ->
    ``{"k_paths": 6}``), so options merged over defaults cannot hide behind an alias; unknown names are
    kept for the model to refuse.

    Raises
    ------
    ValidationError
        When one option is given under two names (``paths`` and ``k_paths``).
    """
    names = accepted_names(model)
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    problems: list[Problem] = []
    for key, value in dict(options or {}).items():
        name = names.get(str(key), key)
        if name in given and given[name] != key:
            problems.append(Problem(f"given twice, as {given[name]!r} and {key!r}", table="options", field=str(name)))
            continue
        given[name] = str(key)
        out[name] = value
    if problems:
        raise ValidationError(problems)
    return out


def merge_options(model: Any, defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{**defaults, **overrides}`` by option, not by spelling: an override given under an older spelling
    (``time_limit``) replaces the default of its option (``time_limit_s``). The overrides keep their spelling,
    so an error still names the option as the caller wrote it."""
    names = accepted_names(model)
    given = {names.get(str(k), str(k)) for k in (overrides or {})}
    return {**{k: v for k, v in defaults.items() if names.get(k, k) not in given}, **(overrides or {})}


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
    accepted = accepted_names(model)  # older spellings count as close too; the hint names the option's own name
    close = difflib.get_close_matches(name, list(accepted), n=1, cutoff=0.6)
    if not close:
        close = [k for k in accepted if k.startswith(name) or name.startswith(k)][:1]
    known = list(dict.fromkeys(accepted.values()))
    return f"; did you mean {accepted[close[0]]!r}?" if close else f"; known options: {', '.join(known)}"
