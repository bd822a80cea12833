"""Compatibility names for code written against the former service module: the planning service now lives in
:mod:`backbone.solver.tasks` (and progress callbacks in :mod:`backbone.solver.progress`)."""

from __future__ import annotations

from backbone.solver.progress import ProgressFn, no_progress
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.service import parse_options, run_task, validate_options

__all__ = ["ProgressFn", "TaskResult", "no_progress", "parse_options", "run_task", "validate_options"]
