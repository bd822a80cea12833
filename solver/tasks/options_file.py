"""The one options-file loader: a YAML (or JSON) file of a task's options -- a plan file, a roadmap file, a
placement options file -- read, merged under the caller's overrides (the CLI's flags) and validated by the task's
options model, every mistake named with its file, line and option.

:func:`options_from_text` is the same loader for text that did not come from a file of ours (a plan's
``plan_text``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backbone.errors import Problem, ValidationError


def load_options_file(path: str | Path, kind: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read the options file ``path`` of task ``kind``, put ``overrides`` over it and validate the result.

    Parameters
    ----------
    path
        YAML or JSON file holding a mapping of option names (each option under its one name).
    kind
        The task kind (``plan``, ``roadmap``, ``place``, ...): its options model validates the file.
    overrides
        Options that replace the file's (the CLI's flags), by option rather than spelling.

    Returns
    -------
    dict
        The merged options, as the file and the overrides spell them (``plan_file``/``plan_text`` recorded when the
        model has those fields).

    Raises
    ------
    ValidationError
        When the file is missing, not YAML, not a mapping, or names unknown or bad options: every problem at
        once, each with the file, ``line N`` and the option's dotted name.

    Example
    -------
    >>> load_options_file("study.yaml", "plan", {"demand_growth": 1.2})  # doctest: +SKIP
    """
    p = Path(path)
    if not p.is_file():
        raise ValidationError(Problem(f"{kind} options file not found", file=str(p)))
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(Problem(f"cannot read the file ({type(exc).__name__})", file=str(p))) from None
    return options_from_text(text, kind, file=str(p), overrides=overrides)


def options_from_text(text: str, kind: str, file: str = "", overrides: Mapping[str, Any] | None = None,
                      ) -> dict[str, Any]:
    """:func:`load_options_file` for text already read (``file`` names it in problems).

    Raises
    ------
    ValidationError
        As :func:`load_options_file`.
    """
    import yaml

    from backbone.solver.tasks.service import task_for

    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        what = " ".join(str(getattr(exc, "problem", None) or exc).split())
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ValidationError(Problem(f"not valid YAML: {what}{where}", file=file, table=kind,
                                      record=f"line {mark.line + 1}" if mark is not None else "")) from None
    if not isinstance(doc, dict):
        raise ValidationError(Problem(f"a {kind} options file is a mapping of option names to values", file=file,
                                      table=kind))
    model = task_for(kind).options_model
    if file and "plan_file" in model.model_fields and "plan_text" in model.model_fields:
        doc = {**doc, "plan_file": file, "plan_text": text}
    merged = {**doc, **(overrides or {})}
    problems = every_problem(model, merged)
    if problems:
        lines = key_lines(text)
        from_file = {str(k) for k in doc if str(k) not in (overrides or {})}
        raise ValidationError([located(p, file, kind, lines, from_file) for p in problems])
    return merged


def every_problem(model: Any, options: dict[str, Any]) -> list[Problem]:
    """Every problem in ``options``: the top-level options' and, with those left out, the nested sections' (a
    plan's ``te.k_paths``), so one run lists them all."""
    from backbone.solver.tasks.service import validate_options

    try:
        validate_options(model, options)
        return []
    except ValidationError as exc:
        problems = list(exc.problems)
    bad = {p.field.split(".")[0] for p in problems}
    rest = {k: v for k, v in options.items() if k not in bad}
    if len(rest) < len(options):
        try:
            validate_options(model, rest)
        except ValidationError as exc:
            seen = {p.field for p in problems}
            problems += [p for p in exc.problems if p.field not in seen]
    return problems


def located(problem: Problem, file: str, kind: str, lines: dict[tuple[str, ...], int], from_file: set[str],
            ) -> Problem:
    """``problem`` with the file and ``line N`` of its option (the nearest enclosing key with a line) when the
    option came from the file; an override's problem names no file."""
    path = tuple(problem.field.split(".")) if problem.field else ()
    if path and path[0] not in from_file:
        return Problem(problem.message, table=kind, field=problem.field)
    line = next((lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in lines), None)
    return Problem(problem.message, file=file, table=kind, record=f"line {line}" if line else "", field=problem.field)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """(key path) -> 1-based line of every mapping key in a YAML text (best effort: {} when it cannot be
    composed)."""
    import yaml

    out: dict[tuple[str, ...], int] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                sub = (*path, str(key.value))
                out[sub] = key.start_mark.line + 1
                walk(value, sub)

    try:
        walk(yaml.compose(text), ())
    except yaml.YAMLError:
        return {}
    return out
