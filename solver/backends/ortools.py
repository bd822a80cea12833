"""OR-Tools through ``model_builder``: GLOP (LP, simplex), PDLP (LP, first order), SCIP (MIP).

The whole sparse model is loaded in one call (``ModelBuilderHelper.fill_model_from_sparse_data``:
bounds, costs and the CSR matrix go across as arrays), and results come back as arrays from the
solve helper -- no per-variable Python objects.

CP-SAT and BOP are deliberately not offered: given a model with continuous variables they
silently treat them as integers, which is wrong for LPs.

PDLP is a first-order (primal-dual hybrid gradient) method: fast on very large LPs but only
accurate to its termination tolerances. We ask for relative and absolute optimality tolerances
of :data:`PDLP_TOLERANCE` (default ``1e-6``, relative to the problem's norms). Measured on
transportation LPs of 144-1600 variables: objective within ~5e-8 relative of HiGHS, but rows
violated by up to ~2e-5 (absolute; right-hand sides ~10) and non-vertex solutions; the tests
hold PDLP to 1e-4 where simplex backends are held to 1e-6. Use GLOP or HiGHS where exact
vertices or tight duals matter.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from backbone.solver.backends._stdio import stdout_to_stderr
from backbone.solver.core.problem import LinearProgram, Solution, Status

logger = logging.getLogger(__name__)

PDLP_TOLERANCE = 1e-6
"""Relative and absolute optimality tolerance asked of PDLP (see the module docstring)."""


class _OrtoolsBackend:
    """Shared model loading, solving and status mapping for the model_builder solvers."""

    name = "ortools"
    solver_name = ""
    supports_mip = False
    lp_only = True

    def available(self) -> tuple[bool, str]:
        try:
            from ortools.linear_solver.python import model_builder_helper as mbh
        except ImportError as exc:
            return False, f"ortools is not installed ({exc})"
        try:
            ok = mbh.ModelSolverHelper(self.solver_name).solver_is_supported()
        except Exception as exc:  # a broken native library: report, do not crash the registry
            return False, f"ortools {self.solver_name} failed to load ({exc})"
        return (True, "") if ok else (False, f"ortools was built without {self.solver_name}")

    def _parameters(self, lp: LinearProgram, mip_gap: float, threads: int | None) -> str:
        """Solver-specific parameters as text (protobuf text format or SCIP ``key = value``)."""
        return ""

    def solve(self, lp: LinearProgram, time_limit_s: float, mip_gap: float, threads: int | None,
              lp_method: str | None = None, presolve: bool = True, **options: Any) -> Solution:
        """Solve ``lp`` (``lp_method`` and ``presolve`` are ignored: this backend has no such switch)."""
        from ortools.linear_solver.python import model_builder_helper as mbh

        from backbone.errors import SolverError

        is_mip = lp.is_mip
        if is_mip and not self.supports_mip:
            raise SolverError(f"backend {self.name!r} solves LPs only; this program has integer variables "
                              "(use ortools-scip, highs or pulp-cbc)")
        log = bool(options.pop("log", False))
        params = options.pop("parameters", None) or self._parameters(lp, mip_gap, threads)
        if options:
            raise SolverError(f"backend {self.name!r} does not understand options {sorted(options)}")
        t0 = time.perf_counter()
        model = _load(lp, lp.c)
        helper = self._run(model, time_limit_s, log, params)
        elapsed = time.perf_counter() - t0
        raw = mbh.SolveStatus(helper.status())
        has_solution = bool(helper.has_solution())
        status = self._status(raw, has_solution, elapsed, time_limit_s)
        S = mbh.SolveStatus
        probe_raw = None
        if not is_mip and (raw == S.INFEASIBLE or (raw == S.NOT_SOLVED and status == Status.ERROR)):
            # GLOP's presolve reports "infeasible or unbounded" as INFEASIBLE, and PDLP stops
            # with NOT_SOLVED on a dual-infeasibility certificate: tell them apart by solving
            # the feasibility problem (zero objective) in the remaining time.
            remaining = max(time_limit_s - (time.perf_counter() - t0), 0.1)
            probe = self._run(_load(lp, np.zeros(lp.n_cols)), remaining, log, params)
            probe_raw = mbh.SolveStatus(probe.status())
            if probe_raw in (S.OPTIMAL, S.FEASIBLE):
                status = Status.UNBOUNDED
            elif probe_raw == S.INFEASIBLE:
                status = Status.INFEASIBLE
            elapsed = time.perf_counter() - t0
        x = np.asarray(helper.variable_values(), float) if status.has_solution else None
        obj = float(helper.objective_value()) if status.has_solution else float("nan")
        duals = None
        if status == Status.OPTIMAL and not is_mip:
            try:
                duals = np.asarray(helper.dual_values(), float)
            except Exception:  # some solvers return none; duals are optional
                duals = None
            if duals is not None and duals.shape != (lp.n_rows,):
                duals = None
        if is_mip:
            b = helper.best_objective_bound() if status.has_solution or raw == mbh.SolveStatus.OPTIMAL else None
            bound = float(b) if b is not None and np.isfinite(b) else None
        else:
            bound = obj if status == Status.OPTIMAL else None
        message = f"{raw.name}: {helper.status_string()}".strip().rstrip(":")
        if probe_raw is not None:
            message += f" (feasibility probe: {probe_raw.name})"
        logger.debug("%s: %s in %.3f s", self.name, message, elapsed)
        return Solution(status, obj, x, self.name, elapsed, bound=bound, row_duals=duals, message=message)

    def _run(self, model: Any, time_limit_s: float, log: bool, params: str) -> Any:
        from ortools.linear_solver.python import model_builder_helper as mbh

        helper = mbh.ModelSolverHelper(self.solver_name)
        helper.set_time_limit_in_seconds(float(time_limit_s))
        helper.enable_output(log)
        if params:
            helper.set_solver_specific_parameters(params)
        with stdout_to_stderr():
            helper.solve(model)
        return helper

    @staticmethod
    def _status(raw: Any, has_solution: bool, elapsed: float, time_limit_s: float) -> Status:
        from ortools.linear_solver.python import model_builder_helper as mbh

        S = mbh.SolveStatus
        if raw == S.OPTIMAL:
            return Status.OPTIMAL
        if raw == S.FEASIBLE:
            return Status.FEASIBLE if has_solution else Status.TIME_LIMIT
        if raw == S.INFEASIBLE:
            return Status.INFEASIBLE
        if raw == S.UNBOUNDED:
            return Status.UNBOUNDED
        if has_solution and raw in (S.NOT_SOLVED, S.ABNORMAL, S.UNKNOWN_STATUS, S.CANCELLED_BY_USER):
            return Status.FEASIBLE
        if raw in (S.NOT_SOLVED, S.UNKNOWN_STATUS, S.CANCELLED_BY_USER) and elapsed >= 0.9 * time_limit_s:
            return Status.TIME_LIMIT
        return Status.ERROR


def _load(lp: LinearProgram, cost: np.ndarray) -> Any:
    """The program as a model_builder model, loaded from arrays in one call."""
    from ortools.linear_solver.python import model_builder_helper as mbh

    model = mbh.ModelBuilderHelper()
    a = lp.A.tocsr().astype(np.float64)
    a.sort_indices()
    fill: Any = model.fill_model_from_sparse_data  # the bundled stubs mistype the array arguments
    fill(
        np.ascontiguousarray(lp.col_lower, float), np.ascontiguousarray(lp.col_upper, float),
        np.ascontiguousarray(cost, float), np.ascontiguousarray(lp.row_lower, float),
        np.ascontiguousarray(lp.row_upper, float), a)
    model.set_objective_offset(float(lp.objective_offset))
    integer = np.flatnonzero(lp.integrality)
    for j in integer.tolist():  # integer columns only (no array setter in the helper)
        model.set_var_integrality(j, True)
    return model


class GlopBackend(_OrtoolsBackend):
    """GLOP: Google's primal/dual simplex for LPs (exact vertices, duals)."""

    name = "ortools-glop"
    solver_name = "GLOP"


class PdlpBackend(_OrtoolsBackend):
    """PDLP: first-order LP solver (looser tolerance; see the module docstring)."""

    name = "ortools-pdlp"
    solver_name = "PDLP"

    def _parameters(self, lp: LinearProgram, mip_gap: float, threads: int | None) -> str:
        tol = f"eps_optimal_absolute: {PDLP_TOLERANCE:g} eps_optimal_relative: {PDLP_TOLERANCE:g}"
        text = f"termination_criteria {{ simple_optimality_criteria {{ {tol} }} }}"
        if threads:
            text += f" num_threads: {int(threads)}"
        return text


class ScipBackend(_OrtoolsBackend):
    """SCIP (bundled with OR-Tools): branch and cut for MIPs; also solves LPs."""

    name = "ortools-scip"
    solver_name = "SCIP"
    supports_mip = True

    def _parameters(self, lp: LinearProgram, mip_gap: float, threads: int | None) -> str:
        return f"limits/gap = {float(mip_gap)!r}"
