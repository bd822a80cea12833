"""The planning service: the one entry point both front doors (CLI and API) call.

Every planning task is a function ``run(net, options, out_dir, progress) -> TaskResult`` in its
own module, registered in :data:`TASKS`. Options are validated by the task's pydantic model so a
bad option is a :class:`~backbone.errors.ValidationError` naming the field (CLI exit 2, API 422).
The CLI and the API call :func:`run_task` with the same options and get the same result files.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.serialize import json_default, json_safe

ProgressFn = Callable[[float, str], None]
"""``progress(fraction_done, message)``; fraction in [0, 1]."""

TASKS: dict[str, str] = {
    "te": "backbone.solver.te:run_te_task",
    "place": "backbone.solver.placement:run_place_task",
    "failures": "backbone.solver.failures:run_failures_task",
    "design": "backbone.solver.design_task:run_design_task",
    "plan": "backbone.solver.plan:run_plan_task",
    "calibrate": "backbone.solver.calibrate_task:run_calibrate_task",
    "roadmap": "backbone.solver.roadmap:run_roadmap_task",
}
"""Task kind -> ``module:function``. Each module also defines ``<function>.options_model``."""


def no_progress(fraction: float, message: str) -> None:
    """A progress callback that ignores its input."""


@dataclass
class TaskResult:
    """What a task returns: the JSON summary (what ``--json`` prints) and the files written."""

    kind: str
    summary: dict[str, Any]
    files: list[str] = field(default_factory=list)  # names relative to out_dir

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.summary, "files": self.files}


def task_function(kind: str) -> Callable[..., TaskResult]:
    """The function registered for ``kind``.

    Raises
    ------
    ValidationError
        For an unknown kind.
    """
    if kind not in TASKS:
        raise ValidationError(Problem(f"unknown task kind {kind!r}; choose one of {', '.join(TASKS)}", field="kind"))
    module, func = TASKS[kind].split(":")
    return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]


def parse_options(kind: str, options: Mapping[str, Any] | None) -> Any:
    """Validate task options with the task's pydantic model.

    Raises
    ------
    ValidationError
        Naming each bad option (``field`` is the option name).
    """
    return validate_options(task_function(kind).options_model, options)  # type: ignore[attr-defined]


def validate_options(model: Any, options: Mapping[str, Any] | None) -> Any:
    """``model.model_validate(options)``, then the model's ``nested_problems()`` when it has one
    (options holding other tasks' options, e.g. the plan's stages).

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
                            table="options", field=".".join(str(p) for p in e["loc"])) for e in exc.errors()]
        raise ValidationError(problems) from None
    nested = getattr(opts, "nested_problems", None)
    problems = nested() if callable(nested) else []
    if problems:
        raise ValidationError([Problem(p.message, table="options", field=p.field) for p in problems])
    return opts


def did_you_mean(error: Mapping[str, Any], model: Any) -> str:
    """``"; did you mean 'time_limit_s'?"`` for an unknown option close to a known one (else "")."""
    import difflib

    if error.get("type") != "extra_forbidden" or len(error.get("loc", ())) != 1:
        return ""
    name = str(error["loc"][0])
    known = list(getattr(model, "model_fields", {}))
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if not close:
        close = [k for k in known if k.startswith(name) or name.startswith(k)][:1]
    return f"; did you mean {close[0]!r}?" if close else f"; known options: {', '.join(known)}"


def run_task(kind: str, net: Network, options: Mapping[str, Any] | None = None, out_dir: str | Path | None = None,
             progress: ProgressFn | None = None) -> TaskResult:
    """Run one planning task: validate options, solve, write result files into ``out_dir``.

    Every file is written atomically (temporary name, then rename); the API runs tasks into a
    staging folder that it renames into place on success, so a result is never half-written.
    """
    opts = parse_options(kind, options)
    func = task_function(kind)
    progress = progress or no_progress
    if out_dir is None:
        return func(net, opts, None, progress)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    previous = previous_files(out, kind)
    result = func(net, opts, out, progress)
    if f"{kind}.json" not in result.files:
        result.files.append(f"{kind}.json")
    write_json_atomic(out / f"{kind}.json", result.to_dict())
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


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write JSON to ``path`` via a temporary file and an atomic rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(json_safe(obj), indent=2, default=json_default, allow_nan=False), encoding="utf-8")
    os.replace(tmp, path)
