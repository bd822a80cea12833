"""What every planning task is: a function ``run(net, options, out_dir, progress) -> TaskResult`` with a pydantic
options model, registered under its kind in :data:`backbone.solver.tasks.TASKS`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from backbone.model import Network
from backbone.solver.core.progress import ProgressFn
from backbone.solver.core.summary import TypedSummary

SummaryT = TypeVar("SummaryT", bound=TypedSummary)
"""The model of a task's summary."""


@dataclass
class TaskResult(Generic[SummaryT]):
    """What a task returns: its summary (a :class:`~backbone.solver.core.summary.TypedSummary`, dumped by
    :meth:`to_dict` into what ``--json`` prints and ``<kind>.json`` holds) and the files written. Each task returns a
    subclass that also carries its typed results (tables, the solved network), which is what the next stage of a
    plan takes -- never the files.

    Attributes
    ----------
    kind
        The task kind (``te``, ``place``, ...).
    summary
        The summary, built as its model (:mod:`backbone.solver.tasks.summaries`); plain values only in
        :meth:`document` (NaN becomes null when it is written).
    files
        Names of the files written, relative to the output folder.
    """

    kind: str
    summary: SummaryT
    files: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """The summary's JSON document (:meth:`TypedSummary.document
        <backbone.solver.core.summary.TypedSummary.document>`): plain values, in the model's field order."""
        return self.summary.document()

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": ..., **summary, "files": [...]}``: the document ``<kind>.json`` holds."""
        return {"kind": self.kind, **self.document(), "files": self.files}


TaskFunction = Callable[[Network, Any, Path | None, ProgressFn], TaskResult]
"""``run(net, options, out_dir, progress) -> TaskResult`` (``out_dir`` None: write nothing)."""


@dataclass(frozen=True)
class Task:
    """A registered planning task: its kind, its function and its options model (a pydantic model).

    ``idempotent``: running it twice on the same inputs gives the same result and no other effect (every planning
    task is a pure function of its scenario and options), so a job whose worker was lost may be run again.
    """

    kind: str
    run: TaskFunction
    options_model: Any
    idempotent: bool = True


def load_task(kind: str, reference: str) -> Task:
    """The task a ``"module:function"`` reference names (extra kinds given to the API as strings, e.g. the
    test-only tasks; the function carries its ``options_model`` attribute, and ``idempotent = True`` when it may
    be run again after its worker was lost: without it, it may not).

    Raises
    ------
    ImportError, AttributeError
        When the module or function cannot be found or has no ``options_model``.
    """
    module, name = reference.split(":")
    func = getattr(importlib.import_module(module), name)
    return Task(kind, func, func.options_model, bool(getattr(func, "idempotent", False)))
