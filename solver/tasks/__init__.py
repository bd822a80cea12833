"""Planning tasks: what the CLI commands and the API's job kinds run.

Each task is a function ``run(net, options, out_dir, progress) -> TaskResult`` with a pydantic options model,
registered by kind in :data:`~backbone.solver.tasks.registry.TASKS` (``te``, ``place``, ``failures``, ``design``,
``plan``, ``calibrate``, ``roadmap``). A task returns a typed result (a :class:`TaskResult` subclass carrying the solved
objects beside the JSON summary), and writes its files through one
:class:`~backbone.artifacts.ArtifactWriter`. :func:`run_task` is the service both front doors call.

The algorithm modules (``te``, ``placement``, ``failures``, ``design``, ``survive``, ...) never import this
package; it imports them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from backbone.solver.progress import ProgressFn, no_progress

if TYPE_CHECKING:
    from backbone.solver.tasks.base import Task, TaskResult
    from backbone.solver.tasks.service import parse_options, run_task, task_for, validate_options

_EXPORTS = {"Task": "base", "TaskResult": "base", "parse_options": "service", "run_task": "service",
            "task_for": "service", "validate_options": "service"}
"""Public name -> the submodule defining it (imported on first use)."""

__all__ = ["ProgressFn", "Task", "TaskResult", "no_progress", "parse_options", "run_task", "task_for",
           "validate_options"]


def __getattr__(name: str) -> Any:
    """A public name, imported from its submodule on first use (PEP 562) and kept in the package's namespace."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
