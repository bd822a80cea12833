"""What every planning task is: a function ``run(net, options, out_dir, progress) -> TaskResult`` with a pydantic
options model, registered under its kind in :data:`backbone.solver.tasks.TASKS`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.tasks.summaries import Summary


@dataclass
class TaskResult:
    """What a task returns: the JSON summary (what ``--json`` prints and ``<kind>.json`` holds) and the files
    written. Each task returns a subclass that also carries its typed results (tables, the solved network), which
    is what the next stage of a plan takes -- never the files.

    Attributes
    ----------
    kind
        The task kind (``te``, ``place``, ...).
    summary
        The JSON summary (plain values; NaN becomes null when it is written).
    files
        Names of the files written, relative to the output folder.
    """

    kind: str
    summary: dict[str, Any]
    files: list[str] = field(default_factory=list)

    summary_model: ClassVar[type[Summary]] = Summary
    """The model of :attr:`summary` (:mod:`backbone.solver.tasks.summaries`)."""

    def typed_summary(self) -> Summary:
        """The summary validated against :attr:`summary_model` (typed attributes instead of string keys).

        Raises
        ------
        pydantic.ValidationError
            When the summary lacks a documented field or has one of the wrong type.
        """
        return self.summary_model.model_validate(self.summary)

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": ..., **summary, "files": [...]}``: the document ``<kind>.json`` holds."""
        return {"kind": self.kind, **self.summary, "files": self.files}


TaskFunction = Callable[[Network, Any, Path | None, ProgressFn], TaskResult]
"""``run(net, options, out_dir, progress) -> TaskResult`` (``out_dir`` None: write nothing)."""


@dataclass(frozen=True)
class Task:
    """A registered planning task: its kind, its function and its options model (a pydantic model)."""

    kind: str
    run: TaskFunction
    options_model: Any


def load_task(kind: str, reference: str) -> Task:
    """The task a ``"module:function"`` reference names (extra kinds given to the API as strings, e.g. the
    test-only tasks; the function carries its ``options_model`` attribute).

    Raises
    ------
    ImportError, AttributeError
        When the module or function cannot be found or has no ``options_model``.
    """
    module, name = reference.split(":")
    func = getattr(importlib.import_module(module), name)
    return Task(kind, func, func.options_model)
