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

from typing import TYPE_CHECKING

import lazy_loader

from backbone.solver.core.progress import ProgressFn, no_progress

if TYPE_CHECKING:
    from backbone.solver.tasks.base import Task, TaskResult
    from backbone.solver.tasks.service import parse_options, run_task, task_for, validate_options


__all__ = ["ProgressFn", "Task", "TaskResult", "no_progress", "parse_options", "run_task", "task_for",
           "validate_options"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "base": ["Task", "TaskResult"],
    "service": ["parse_options", "run_task", "task_for", "validate_options"],
})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
