"""Compare two scenarios, plans or roadmaps: structural changes, KPI changes, per-failure changes and the
changeover list (``backbone diff``, ``backbone.diff``).

The face of the package: :func:`diff` and :class:`DiffResult` (:mod:`.result`), :func:`load_input` (:mod:`.inputs`),
the table builders of :mod:`.structure`, :mod:`.kpis` and :mod:`.changes`. The names load on first use (PEP 562),
so the options (:mod:`.options`, which ``backbone --help`` reads) import without pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backbone.compare.changes import changeover, failure_changes
    from backbone.compare.inputs import ComparedInput, load_input
    from backbone.compare.kpis import kpi_changes, placement_changes
    from backbone.compare.result import TABLE_NAMES, DiffResult, diff, report_section
    from backbone.compare.structure import capacity_summary, network_changes, table_changes

EXPORTS = {"changeover": "changes", "failure_changes": "changes", "ComparedInput": "inputs", "load_input": "inputs",
           "kpi_changes": "kpis", "placement_changes": "kpis", "TABLE_NAMES": "result", "DiffResult": "result",
           "diff": "result", "report_section": "result", "capacity_summary": "structure",
           "network_changes": "structure", "table_changes": "structure"}
"""Public name -> the submodule defining it."""

__all__ = ["TABLE_NAMES", "ComparedInput", "DiffResult", "capacity_summary", "changeover", "diff", "failure_changes",
           "kpi_changes", "load_input", "network_changes", "placement_changes", "report_section", "table_changes"]


def __getattr__(name: str) -> Any:
    """A public name, imported from its submodule on first use (PEP 562) and kept in the package's namespace."""
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
