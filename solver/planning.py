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
from backbone.serialize import json_default

ProgressFn = Callable[[float, str], None]
"""``progress(fraction_done, message)``; fraction in [0, 1]."""

TASKS: dict[str, str] = {
    "te": "backbone.solver.te:run_te_task",
    "place": "backbone.solver.placement:run_place_task",
    "failures": "backbone.solver.failures:run_failures_task",
    "design": "backbone.solver.design_task:run_design_task",
    "plan": "backbone.solver.plan:run_plan_task",
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
        problems = [Problem(e["msg"], table="options", field=".".join(str(p) for p in e["loc"]))
                    for e in exc.errors()]
        raise ValidationError(problems) from None
    nested = getattr(opts, "nested_problems", None)
    problems = nested() if callable(nested) else []
    if problems:
        raise ValidationError([Problem(p.message, table="options", field=p.field) for p in problems])
    return opts


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
    result = func(net, opts, out, progress)
    write_json_atomic(out / f"{kind}.json", result.to_dict())
    if f"{kind}.json" not in result.files:
        result.files.append(f"{kind}.json")
    return result


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write JSON to ``path`` via a temporary file and an atomic rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=json_default, allow_nan=False), encoding="utf-8")
    os.replace(tmp, path)
