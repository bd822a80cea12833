"""HiGHS through highspy: the whole sparse model is passed in one call (``passModel``)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from backbone.solver.backends._stdio import stdout_to_stderr
from backbone.solver.core.problem import LinearProgram, Solution, Status

IPM_MIN_COLUMNS = 20_000
"""``lp_method="auto"``: interior point (no crossover) from this many columns up. TE LPs are highly
degenerate (many equal-utilisation optima); on the 100-site synthetic all-pairs min-MLU LP (45k
columns) dual simplex takes ~4x longer than IPM."""


def method_options(lp_method: str | None, n_cols: int) -> dict[str, Any]:
    """HiGHS settings for the neutral ``lp_method`` (:data:`backbone.solver.core.problem.LP_METHODS`; None: HiGHS's own
    default) of an LP with ``n_cols`` columns."""
    if lp_method == "ipm" or (lp_method == "auto" and n_cols >= IPM_MIN_COLUMNS):
        return {"solver": "ipm", "run_crossover": "off"}
    if lp_method == "simplex":
        return {"solver": "simplex"}
    if lp_method == "primal-simplex":
        return {"solver": "simplex", "simplex_strategy": 4}  # kSimplexStrategyPrimal
    return {}


class HighsBackend:
    """HiGHS (LP: dual simplex / IPM; MIP: branch and cut). The default backend."""

    name = "highs"
    supports_mip = True
    supports_start = True  # MIP starts (``start``)

    def available(self) -> tuple[bool, str]:
        try:
            import highspy  # noqa: F401
        except ImportError as exc:
            return False, f"highspy is not installed ({exc})"
        return True, ""

    def solve(self, lp: LinearProgram, time_limit_s: float, mip_gap: float, threads: int | None,
              lp_method: str | None = None, presolve: bool = True, **options: Any) -> Solution:
        import highspy

        options = {**method_options(lp_method, lp.n_cols), **({} if presolve else {"presolve": "off"}), **options}
        with stdout_to_stderr(discard=True):  # the licence banner, printed on construction
            h = highspy.Highs()
        h.setOptionValue("output_flag", bool(options.pop("log", False)))
        start = options.pop("start", None)  # optional MIP start: a full column vector
        warm = options.pop("warm_start", None)  # an earlier stage's Solution (LP basis), see problem.solve
        ipm = options.get("solver") == "ipm"
        h.setOptionValue("time_limit", float(time_limit_s))
        h.setOptionValue("mip_rel_gap", float(mip_gap))
        if threads:
            h.setOptionValue("threads", int(threads))
        for k, v in options.items():
            h.setOptionValue(k, v)
        is_mip = lp.is_mip
        t0 = time.perf_counter()
        with stdout_to_stderr():
            pass_lp(h, lp)
            if start is not None and is_mip:
                given = highspy.HighsSolution()
                given.col_value = list(np.asarray(start, float))
                given.value_valid = True
                h.setSolution(given)
            warm_started = not is_mip and not ipm and _set_warm_basis(h, warm, lp)
            h.run()
        elapsed = time.perf_counter() - t0
        ms = h.getModelStatus()
        S = highspy.HighsModelStatus
        fallback = ""
        if ipm and not is_mip and ms in ipm_failed_statuses(S) and time_limit_s - elapsed > 0.1:
            # interior point without crossover can stop short ("Unknown", numerical trouble) on
            # degenerate LPs; dual simplex from scratch solves them, within what is left of the limit
            first = h.modelStatusToString(ms)
            h.setOptionValue("solver", "simplex")
            h.setOptionValue("time_limit", float(time_limit_s - elapsed))
            with stdout_to_stderr():
                pass_lp(h, lp)
                h.run()
            elapsed = time.perf_counter() - t0
            ms = h.getModelStatus()
            fallback = (f"interior point ended {first!r}; re-solved with dual simplex "
                        f"({h.modelStatusToString(ms)})")
        info = h.getInfo()
        has_primal = info.primal_solution_status == 2  # kSolutionStatusFeasible
        if ms == S.kOptimal:
            status = Status.OPTIMAL
        elif ms == S.kInfeasible:
            status = Status.INFEASIBLE
        elif ms == S.kUnbounded:
            status = Status.UNBOUNDED
        elif ms == S.kUnboundedOrInfeasible:
            status = self._infeasible_or_unbounded(h, lp, max(time_limit_s - elapsed, 0.1))
        elif ms in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit, S.kInterrupt):
            status = Status.FEASIBLE if has_primal else Status.TIME_LIMIT
        else:
            status = Status.FEASIBLE if has_primal and is_mip else Status.ERROR
        x = np.asarray(h.getSolution().col_value, float) if status.has_solution else None
        duals = None
        if status == Status.OPTIMAL and not is_mip:
            duals = np.asarray(h.getSolution().row_dual, float)
        obj = float(info.objective_function_value) if status.has_solution else float("nan")
        if is_mip:
            bound = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else None
        else:
            bound = obj if status == Status.OPTIMAL else None
        basis = None
        if status == Status.OPTIMAL and not is_mip and info.basis_validity == 1:  # kBasisValidityValid
            basis = (h.getBasis(), lp.column_layout(), lp.n_rows)
        return Solution(status, obj, x, self.name, elapsed, bound=bound, row_duals=duals,
                        message=h.modelStatusToString(ms), fallback=fallback, basis=basis,
                        warm_started=bool(warm_started))

    @staticmethod
    def _infeasible_or_unbounded(h: object, lp: LinearProgram, time_left: float) -> Status:
        """Tell infeasible from unbounded (presolve often cannot): re-solve with a zero objective;
        a feasible point then means the original problem is unbounded."""
        import highspy

        h.setOptionValue("time_limit", float(time_left))  # type: ignore[attr-defined]
        n = lp.n_cols
        h.changeColsCost(n, np.arange(n, dtype=np.int32), np.zeros(n))  # type: ignore[attr-defined]
        with stdout_to_stderr():
            h.run()  # type: ignore[attr-defined]
        probe = h.getModelStatus()  # type: ignore[attr-defined]
        if probe == highspy.HighsModelStatus.kOptimal:
            return Status.UNBOUNDED
        if probe == highspy.HighsModelStatus.kInfeasible:
            return Status.INFEASIBLE
        return Status.ERROR


def _set_warm_basis(h: Any, warm: Any, lp: LinearProgram) -> bool:
    """Start ``h`` from the basis of ``warm`` (a Solution of an earlier stage of ``lp``: rows since added start
    basic, columns since appended to its blocks start nonbasic at a finite bound). Whether the basis was accepted."""
    import highspy

    if warm is None or warm.basis is None:
        return False
    old, layout, n_rows = warm.basis
    at = lp.grown_positions(layout)
    if at is None or n_rows > lp.n_rows:
        return False
    if n_rows == lp.n_rows and len(at) == lp.n_cols:  # the same shape (sifting's next round): as it is, no copy
        return h.setBasis(old) == highspy.HighsStatus.kOk
    S = highspy.HighsBasisStatus
    lower, upper = lp.col_lower, lp.col_upper
    kinds = np.array([S.kLower, S.kUpper, S.kZero], dtype=object)
    status = kinds[np.where(np.isfinite(lower), 0, np.where(np.isfinite(upper), 1, 2))]
    status[at] = np.asarray(old.col_status, dtype=object)
    basis = highspy.HighsBasis()
    basis.col_status = list(status)
    basis.row_status = list(old.row_status) + [S.kBasic] * (lp.n_rows - n_rows)
    basis.valid = True
    return h.setBasis(basis) == highspy.HighsStatus.kOk


def ipm_failed_statuses(S: Any) -> tuple[Any, ...]:
    """HiGHS model statuses after which an interior-point solve is retried with simplex: every
    outcome that is neither an answer nor a limit the caller set."""
    return tuple(getattr(S, n) for n in ("kUnknown", "kNotset", "kSolveError", "kPostsolveError",
                                         "kModelError", "kPresolveError") if hasattr(S, n))


def pass_lp(h: Any, lp: LinearProgram) -> None:
    """Hand ``lp`` to the ``highspy.Highs`` ``h`` as numpy arrays in one call (no ``HighsLp`` object: filling one
    converts every array element by element, 0.1 s per 10^6 nonzeros at every stage of a staged objective).

    Raises
    ------
    SolverError
        HiGHS rejects the model.
    """
    import highspy

    from backbone.errors import SolverError

    a = lp.A.tocsc()
    integrality = (lp.integrality.astype(np.int32) if lp.is_mip  # kContinuous = 0, kInteger = 1
                   else np.zeros(lp.n_cols, np.int32))
    status = h.passModel(int(lp.n_cols), int(lp.n_rows), int(a.nnz), int(highspy.MatrixFormat.kColwise),
                         int(highspy.ObjSense.kMinimize), float(lp.objective_offset),
                         np.ascontiguousarray(lp.c, float), np.ascontiguousarray(lp.col_lower, float),
                         np.ascontiguousarray(lp.col_upper, float), np.ascontiguousarray(lp.row_lower, float),
                         np.ascontiguousarray(lp.row_upper, float), a.indptr.astype(np.int32),
                         a.indices.astype(np.int32), a.data.astype(float), integrality)
    if status == highspy.HighsStatus.kError:
        raise SolverError(f"HiGHS rejected the model of {lp.name!r}")


def highs_lp(lp: LinearProgram) -> Any:
    """The program as a ``highspy.HighsLp`` (column-wise sparse matrix, integrality when a MIP)."""
    import highspy

    a = lp.A.tocsc()
    model = highspy.HighsLp()
    model.num_col_ = lp.n_cols
    model.num_row_ = lp.n_rows
    model.col_cost_ = lp.c
    model.col_lower_ = lp.col_lower
    model.col_upper_ = lp.col_upper
    model.row_lower_ = lp.row_lower
    model.row_upper_ = lp.row_upper
    model.offset_ = float(lp.objective_offset)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = a.indptr.astype(np.int32)
    model.a_matrix_.index_ = a.indices.astype(np.int32)
    model.a_matrix_.value_ = a.data.astype(float)
    if lp.is_mip:
        kinds = np.array([highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger], dtype=object)
        model.integrality_ = list(kinds[lp.integrality.astype(int)])
    return model
