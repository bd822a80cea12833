"""Network design: which capacity modules to install so every demand is carried, at minimum cost.

One formulation serves SNDlib instances (:mod:`backbone.solver.sndlib` builds the instance from a network
file and a model code) and the backbone's own upgrade question
(:func:`backbone.solver.upgrades.design_upgrades`; the ``design`` planning task is
:mod:`backbone.solver.tasks.design`).

* :mod:`~backbone.solver.design.instance`: :class:`DesignInstance`, the problem in plain arrays.
* :mod:`~backbone.solver.design.formulation`: the constraint families (maths in its docstring) and
  :func:`build_design_lp`.
* :mod:`~backbone.solver.design.heuristics`: rounding the LP loads up to modules, fixed-design routing and
  the remove-modules improvement pass.
* :mod:`~backbone.solver.design.solve`: :func:`solve_design` and its :class:`DesignSolution`.

Solving (:func:`solve_design`): the LP relaxation with cuts gives a lower bound and loads; the
loads are rounded up to the cheapest module mix, surplus modules are removed while the design
stays feasible (one fixed-design LP per trial, time-boxed), and the result is passed to the MIP
as a start (HiGHS). The reported lower bound is the better of the MIP dual bound and the LP bound.
"""

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
from backbone.solver.sparse import incidence

__all__ = [
    "FEAS_TOL", "IMPROVE_TIME_SHARE", "LP_TIME_SHARE", "MAX_CUT_DIVISORS", "DesignInstance", "DesignProgram",
    "DesignSolution", "EvaluatedDesign", "ProgressFn", "build_design_lp", "capacity_rows", "choice_rows",
    "conservation_rows", "cut_crossings", "cutset_rows", "design_cost", "evaluate_design", "improve_design",
    "incidence", "link_loads", "mir_cuts", "program_flows", "round_up_design", "routing_rows", "setup_rows", "solve_design",
]
