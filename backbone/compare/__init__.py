"""Compare two scenarios, plans or roadmaps: structural changes, KPI changes, per-failure changes and the
changeover list (``backbone diff``, ``backbone.diff``).

The face of the package: :func:`diff` and :class:`DiffResult` (:mod:`.result`), :func:`load_input` (:mod:`.inputs`),
the table builders of :mod:`.structure`, :mod:`.kpis` and :mod:`.changes`. The names load on first use (PEP 562),
so the options (:mod:`.options`, which ``backbone --help`` reads) import without pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.compare.changes import changeover, failure_changes
    from backbone.compare.inputs import ComparedInput, load_input
    from backbone.compare.kpis import kpi_changes, placement_changes
    from backbone.compare.result import TABLE_NAMES, DiffResult, diff, report_section
    from backbone.compare.structure import capacity_summary, network_changes, table_changes


__all__ = ["TABLE_NAMES", "ComparedInput", "DiffResult", "capacity_summary", "changeover", "diff", "failure_changes",
           "kpi_changes", "load_input", "network_changes", "placement_changes", "report_section", "table_changes"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "changes": ["changeover", "failure_changes"],
    "inputs": ["ComparedInput", "load_input"],
    "kpis": ["kpi_changes", "placement_changes"],
    "result": ["TABLE_NAMES", "DiffResult", "diff", "report_section"],
    "structure": ["capacity_summary", "network_changes", "table_changes"],
})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
