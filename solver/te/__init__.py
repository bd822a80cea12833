"""Traffic engineering: how traffic should flow over the backbone, and how it flows today.

Public entry points
-------------------
* :func:`solve_te` -- one TE solve (``objective`` x ``formulation``) returning a :class:`TEResult`;
* the planning-service task (``backbone te`` and the API call it) is
  :func:`backbone.solver.tasks.te.run_te_task`; both take :class:`~backbone.solver.te.options.TEOptions`;
* objective ``"ecmp"`` -- no optimisation: equal-cost multipath routing as the network does it
  without TE (:mod:`backbone.solver.te.ecmp`), reported in the same tables.

Objectives (:mod:`backbone.solver.te.objectives`): ``min-mlu``, ``max-throughput`` (class priorities,
lexicographic stages), ``max-min-fair`` (water-filling), ``min-latency`` (under a utilisation
ceiling, 0.8 by default). Formulations (:mod:`backbone.solver.te.formulations`): ``path`` over the ``k``
lowest-latency admissible candidate paths, and ``edge`` (exact multicommodity flow aggregated
by source; SLO-bound demands keep per-path routing so SLOs stay hard). Latency SLOs are hard in
both: demand whose every candidate path exceeds ``slo_rtt_ms / 2`` one way is unmet with
reason ``no_path_within_slo``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.te.instance import REASONS
    from backbone.solver.te.objectives import OBJECTIVES
    from backbone.solver.te.options import TEOptions
    from backbone.solver.te.result import TEResult, class_link_flows, corridor_table
    from backbone.solver.te.solve import (
        ALL_OBJECTIVES,
        AUTO_COLGEN_MIN_DEMANDS,
        AUTO_ESCALATE_GAP,
        ESCALATE_MIN_S,
        ESCALATE_PATH_LP_FACTOR,
        ESCALATE_SHARE,
        NO_DEMAND_NOTE,
        SCALABLE_OBJECTIVES,
        TIME_LIMIT_NOTE,
        TIME_LIMIT_STATUS,
        choose_method,
        resolve_te,
        solve_source_flows,
        solve_te,
    )

__all__ = [
    "ALL_OBJECTIVES",
    "AUTO_COLGEN_MIN_DEMANDS",
    "AUTO_ESCALATE_GAP",
    "ESCALATE_MIN_S",
    "ESCALATE_PATH_LP_FACTOR",
    "ESCALATE_SHARE",
    "NO_DEMAND_NOTE",
    "OBJECTIVES",
    "REASONS",
    "SCALABLE_OBJECTIVES",
    "TIME_LIMIT_NOTE",
    "TIME_LIMIT_STATUS",
    "TEOptions",
    "TEResult",
    "choose_method",
    "class_link_flows",
    "corridor_table",
    "resolve_te",
    "solve_source_flows",
    "solve_te",
]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "instance": ["REASONS"],
    "objectives": ["OBJECTIVES"],
    "options": ["TEOptions"],
    "result": ["TEResult", "class_link_flows", "corridor_table"],
    "solve": ["ALL_OBJECTIVES", "AUTO_COLGEN_MIN_DEMANDS", "AUTO_ESCALATE_GAP", "ESCALATE_MIN_S",
              "ESCALATE_PATH_LP_FACTOR", "ESCALATE_SHARE", "NO_DEMAND_NOTE", "SCALABLE_OBJECTIVES", "TIME_LIMIT_NOTE",
              "TIME_LIMIT_STATUS", "choose_method", "resolve_te", "solve_source_flows",
              "solve_te"],
})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``): importing the package
(``backbone te --help`` does) loads neither numpy nor scipy. The dispatch is :mod:`backbone.solver.te.solve`."""
