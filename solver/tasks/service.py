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
from backbone.solver.core.options import (  # noqa: F401 -- the vocabulary, importable from the service as before
    did_you_mean,
    option_names,
    sub_models,
    validate_options,
)
from backbone.solver.core.progress import ProgressFn, no_progress
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
