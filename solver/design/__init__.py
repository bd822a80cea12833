"""Network design: which capacity modules to install so every demand is carried, at minimum cost.

One formulation serves SNDlib instances (:mod:`backbone.solver.design.sndlib` builds the instance from a network
file and a model code) and the backbone's own upgrade question
(:func:`backbone.solver.design.upgrades.design_upgrades`; the ``design`` planning task is
:mod:`backbone.solver.tasks.design`).

* :mod:`~backbone.solver.design.instance`: :class:`DesignInstance`, the problem in plain arrays.
* :mod:`~backbone.solver.design.formulation`: the constraint families (maths in its docstring) and
  :func:`build_design_lp`.
* :mod:`~backbone.solver.design.heuristics`: rounding the LP loads up to modules, fixed-design routing and
  the remove-modules improvement pass.
* :mod:`~backbone.solver.design.solve`: :func:`solve_design` and its :class:`DesignSolution`.
* :mod:`~backbone.solver.design.sndlib`: SNDlib instances and solution files; :mod:`~backbone.solver.design.options`:
  the ``design`` task's options.
* :mod:`~backbone.solver.design.upgrades`: the backbone's upgrade model (link upgrades and new routes).
* :mod:`~backbone.solver.design.survivable`: the survivable design, its MIP over failure states and its bound.

Solving (:func:`solve_design`): the LP relaxation with cuts gives a lower bound and loads; the
loads are rounded up to the cheapest module mix, surplus modules are removed while the design
stays feasible (one fixed-design LP per trial, time-boxed), and the result is passed to the MIP
as a start (HiGHS). The reported lower bound is the better of the MIP dual bound and the LP bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.design.formulation import (
        MAX_CUT_DIVISORS,
        DesignProgram,
        build_design_lp,
        capacity_rows,
        choice_rows,
        conservation_rows,
        cut_crossings,
        cutset_rows,
        link_loads,
        mir_cuts,
        program_flows,
        routing_rows,
        setup_rows,
    )
    from backbone.solver.design.heuristics import (
        EvaluatedDesign,
        design_cost,
        evaluate_design,
        improve_design,
        round_up_design,
    )
    from backbone.solver.design.instance import FEAS_TOL, DesignInstance
    from backbone.solver.design.solve import (
        IMPROVE_TIME_SHARE,
        LP_TIME_SHARE,
        DesignSolution,
        ProgressFn,
        solve_design,
    )

__all__ = [
    "FEAS_TOL", "IMPROVE_TIME_SHARE", "LP_TIME_SHARE", "MAX_CUT_DIVISORS", "DesignInstance", "DesignProgram",
    "DesignSolution", "EvaluatedDesign", "ProgressFn", "build_design_lp", "capacity_rows", "choice_rows",
    "conservation_rows", "cut_crossings", "cutset_rows", "design_cost", "evaluate_design", "improve_design",
    "link_loads", "mir_cuts", "program_flows", "round_up_design", "routing_rows", "setup_rows", "solve_design",
]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "formulation": ["MAX_CUT_DIVISORS", "DesignProgram", "build_design_lp", "capacity_rows", "choice_rows",
                    "conservation_rows", "cut_crossings", "cutset_rows", "link_loads", "mir_cuts", "program_flows",
                    "routing_rows", "setup_rows"],
    "heuristics": ["EvaluatedDesign", "design_cost", "evaluate_design", "improve_design", "round_up_design"],
    "instance": ["FEAS_TOL", "DesignInstance"],
    "solve": ["IMPROVE_TIME_SHARE", "LP_TIME_SHARE", "DesignSolution", "ProgressFn", "solve_design"],
})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
