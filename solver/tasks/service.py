"""The planning service: the one entry point both front doors (CLI and API) call.

:func:`run_task` validates a task's options with its pydantic model (a bad option is a
:class:`~backbone.errors.ValidationError` naming the field: CLI exit 2, API 422), runs the task and writes its
``<kind>.json`` summary next to the files the task wrote. The CLI and the API get the same result files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backbone.artifacts import ArtifactWriter
from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.solver.progress import ProgressFn, no_progress
from backbone.solver.tasks.base import Task, TaskResult, load_task

ExtraTasks = Mapping[str, "Task | str"]
"""Extra kinds beside the shipped ones: a :class:`Task`, or a ``"module:function"`` reference."""


def task_for(kind: str, extra: ExtraTasks | None = None) -> Task:
    """The task registered for ``kind`` (the shipped registry, then ``extra``).

    Raises
    ------
    ValidationError
        For an unknown kind, or an extra kind whose reference cannot be loaded.
    """
    from backbone.solver.tasks.registry import TASKS

    known: dict[str, Task | str] = {**TASKS, **(extra or {})}
    entry = known.get(kind)
    if entry is None:
        raise ValidationError(Problem(f"unknown task kind {kind!r}; choose one of {', '.join(sorted(known))}",
                                      table="job", field="kind"))
    if isinstance(entry, Task):
        return entry
    try:
        return load_task(kind, entry)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValidationError(Problem(f"task kind {kind!r} is not available in this installation ({exc})",
                                      table="job", field="kind")) from None


def parse_options(kind: str, options: Mapping[str, Any] | None, extra: ExtraTasks | None = None) -> Any:
    """Validate task options with the task's pydantic model.

    Raises
    ------
    ValidationError
        Naming each bad option (``field`` is the option name).
    """
    return validate_options(task_for(kind, extra).options_model, options)


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


def run_task(kind: str, net: Network, options: Mapping[str, Any] | None = None, out_dir: str | Path | None = None,
             progress: ProgressFn | None = None, extra: ExtraTasks | None = None) -> TaskResult:
    """Run one planning task: validate options, solve, write result files into ``out_dir``.

    Every file is written atomically (:class:`~backbone.artifacts.ArtifactWriter`); the API runs tasks into a
    staging folder that it renames into place on success, so a result is never half-written. Re-running into
    the same folder removes the files of the earlier run that this run did not write.
    """
    task = task_for(kind, extra)
    opts = validate_options(task.options_model, options)
    progress = progress or no_progress
    if out_dir is None:
        return task.run(net, opts, None, progress)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    previous = previous_files(out, kind)
    result = task.run(net, opts, out, progress)
    if f"{kind}.json" not in result.files:
        result.files.append(f"{kind}.json")
    ArtifactWriter(out).json(f"{kind}.json", result.to_dict())
    remove_stale_files(out, previous - set(result.files))
    return result


def previous_files(out: Path, kind: str) -> set[str]:
    """The files an earlier ``kind`` run wrote into ``out`` (its ``<kind>.json`` lists them)."""
    try:
        doc = json.loads((out / f"{kind}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    files = doc.get("files") if isinstance(doc, dict) else None
    return {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()


def remove_stale_files(out: Path, names: set[str]) -> None:
    """Delete files an earlier run wrote that this run did not (re-running into the same
    ``--out`` leaves only this run's results). Only plain relative names inside ``out`` that an
    earlier manifest listed are touched; anything else in the folder is left alone."""
    root = out.resolve()
    for name in sorted(names):
        path = (out / name).resolve()
        if Path(name).is_absolute() or ".." in Path(name).parts or root not in path.parents:
            continue
        if path.is_file():
            path.unlink()
