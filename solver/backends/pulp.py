"""PuLP: CBC (the binary shipped with PuLP) and HiGHS (PuLP's highspy API), for MIPs and LPs.

PuLP is row-by-row by nature. :func:`build_pulp_problem` keeps that as cheap as PuLP allows:
one ``LpVariable`` per column, then each row's expression is made in one call from its CSR
slice (``indptr[i]:indptr[i+1]`` -> ``(variable, coefficient)`` pairs) and all rows are added
with one ``LpProblem.extend``; no term-by-term ``+=``. Ranged rows (finite, different lower and
upper) become two rows (``>=`` and ``<=``) whose duals are summed back. Variable and row
names are positional (``x{j}``, ``r{i}``); results are read back by position, never by parsing
names. :mod:`backbone.solver.core.export` reuses the builder with the blocks' labels for human-readable files.

Solver logs stay off stdout (``msg=False``; C-level output is redirected to stderr).
"""

from __future__ import annotations

import abc
import logging
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from backbone.solver.backends._stdio import stdout_to_stderr
from backbone.solver.core.problem import LinearProgram, Solution, Status

logger = logging.getLogger(__name__)


def build_pulp_problem(lp: LinearProgram, col_names: list[str] | None = None,
                       row_names: list[str] | None = None, relax: bool = False,
                       cost: np.ndarray | None = None) -> tuple[Any, list[Any], list[Any]]:
    """The program as a ``pulp.LpProblem``.

    Parameters
    ----------
    lp
        The program (minimise).
    col_names, row_names
        Names for columns and rows (default: positional ``x{j}`` / ``r{i}``). Must be valid,
        unique PuLP names.
    relax
        Drop integrality.
    cost
        Objective coefficients to use instead of ``lp.c`` (zero: a feasibility problem).

    Returns
    -------
    (problem, variables, row_constraints)
        ``row_constraints[i]`` is a list of the PuLP constraints standing for row ``i`` (empty
        for free rows, two for ranged rows: ``>=`` then ``<=``).
    """
    import pulp

    n, m = lp.n_cols, lp.n_rows
    col_names = col_names or [f"x{j}" for j in range(n)]
    row_names = row_names or [f"r{i}" for i in range(m)]
    prob = pulp.LpProblem(lp.name.replace(" ", "_") or "lp", pulp.LpMinimize)
    lower, upper, integer = lp.col_lower, lp.col_upper, lp.integrality
    variables = [
        prob.add_variable(col_names[j], None if not np.isfinite(lo) else float(lo),
                          None if not np.isfinite(up) else float(up),
                          pulp.LpInteger if (it and not relax) else pulp.LpContinuous)
        for j, (lo, up, it) in enumerate(zip(lower.tolist(), upper.tolist(), integer.tolist(), strict=True))
    ]
    c = cost if cost is not None else lp.c
    nz = np.flatnonzero(c)
    prob.setObjective(pulp.LpAffineExpression([(variables[j], float(c[j])) for j in nz.tolist()],
                                              constant=float(lp.objective_offset)))
    a = lp.A.tocsr()
    a.sort_indices()
    indptr, indices, data = a.indptr, a.indices.tolist(), a.data.tolist()
    row_lo, row_up = lp.row_lower.tolist(), lp.row_upper.tolist()
    constraints: list[tuple[str, Any]] = []
    row_constraints: list[list[Any]] = []
    for i in range(m):
        s, e = int(indptr[i]), int(indptr[i + 1])
        terms = list(zip([variables[j] for j in indices[s:e]], data[s:e], strict=True))
        lo, up = row_lo[i], row_up[i]
        made: list[Any] = []
        fin_lo, fin_up = np.isfinite(lo), np.isfinite(up)
        if fin_lo and fin_up and lo == up:
            made.append((row_names[i], pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintEQ,
                                                         rhs=lo)))
        else:
            if fin_lo:
                name = row_names[i] if not fin_up else f"{row_names[i]}_lo"
                made.append((name, pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintGE, rhs=lo)))
            if fin_up:
                name = row_names[i] if not fin_lo else f"{row_names[i]}_up"
                made.append((name, pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintLE, rhs=up)))
        constraints.extend(made)
        row_constraints.append([c for _, c in made])
    prob.extend(dict(constraints), use_objective=False)
    return prob, variables, row_constraints


class _PulpBackend(abc.ABC):
    """Shared build / solve / status mapping for the PuLP solvers."""

    name = "pulp"
    supports_mip = True

    @abc.abstractmethod
    def _solver(self, is_mip: bool, time_limit_s: float, mip_gap: float, threads: int | None, log: bool) -> Any:
        """The PuLP solver command for one solve."""

    @abc.abstractmethod
    def _probe(self) -> Any:
        """A solver instance used to check availability."""

    def available(self) -> tuple[bool, str]:
        try:
            import pulp  # noqa: F401
        except ImportError as exc:
            return False, f"pulp is not installed ({exc})"
        try:
            ok = bool(self._probe().available())
        except Exception as exc:
            return False, f"{exc}"
        return (True, "") if ok else (False, f"PuLP cannot find the {self.name} solver here")

    def solve(self, lp: LinearProgram, time_limit_s: float, mip_gap: float, threads: int | None,
              lp_method: str | None = None, presolve: bool = True, **options: Any) -> Solution:
        """Solve ``lp`` (``lp_method`` and ``presolve`` are ignored: this backend has no such switch)."""
        import pulp

        from backbone.errors import SolverError

        log = bool(options.pop("log", False))
        if options:
            raise SolverError(f"backend {self.name!r} does not understand options {sorted(options)}")
        is_mip = lp.is_mip
        t_build = time.perf_counter()
        prob, variables, rows = build_pulp_problem(lp)
        logger.debug("%s: built %d rows in %.3f s", self.name, lp.n_rows, time.perf_counter() - t_build)
        t0 = time.perf_counter()
        self._run(prob, is_mip, time_limit_s, mip_gap, threads, log)
        elapsed = time.perf_counter() - t0
        status = _status(prob.status, prob.sol_status, is_mip, elapsed, time_limit_s)
        if status == Status.INFEASIBLE and self._ambiguous(prob):
            # the solver only knows "infeasible or unbounded": a feasible zero-objective
            # problem means unbounded
            probe, _, _ = build_pulp_problem(lp, cost=np.zeros(lp.n_cols))
            self._run(probe, is_mip, max(time_limit_s - elapsed, 0.1), mip_gap, threads, log)
            if probe.status == pulp.LpStatusOptimal:
                status = Status.UNBOUNDED
            elapsed = time.perf_counter() - t0
        x = None
        obj = float("nan")
        if status.has_solution:
            x = np.array([np.nan if v.varValue is None else v.varValue for v in variables], float)
            if np.isnan(x).any():  # variables absent from every row and the objective: any value in bounds
                x = np.where(np.isnan(x), _default_values(lp), x)
            obj = lp.evaluate(x)
        duals = None
        if status == Status.OPTIMAL and not is_mip:
            duals = _row_duals(rows)
        bound = obj if status == Status.OPTIMAL else None
        message = f"{pulp.LpStatus.get(prob.status, prob.status)} / {pulp.LpSolution.get(prob.sol_status, '')}"
        return Solution(status, obj, x, self.name, elapsed, bound=bound, row_duals=duals, message=message)


    def _run(self, prob: Any, is_mip: bool, time_limit_s: float, mip_gap: float, threads: int | None,
             log: bool) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PuLP 4 notices about PULP_CBC_CMD
            solver = self._solver(is_mip, time_limit_s, mip_gap, threads, log)
            with stdout_to_stderr():
                prob.solve(solver)

    def _ambiguous(self, prob: Any) -> bool:
        """Whether an "infeasible" answer may really mean "infeasible or unbounded"."""
        return False


def _default_values(lp: LinearProgram) -> np.ndarray:
    lo, up = lp.col_lower, lp.col_upper
    return np.where(np.isfinite(lo), lo, np.where(np.isfinite(up), np.minimum(up, 0.0), 0.0))


def _row_duals(rows: list[list[Any]]) -> np.ndarray | None:
    out = np.zeros(len(rows))
    for i, cons in enumerate(rows):
        total = 0.0
        for c in cons:
            if c.pi is None:
                return None
            total += float(c.pi)
        out[i] = total
    return out


def _status(status: int, sol_status: int, is_mip: bool, elapsed: float, time_limit_s: float) -> Status:
    """Map PuLP's (status, sol_status) onto :class:`Status`."""
    import pulp

    if sol_status == pulp.LpSolutionOptimal and status == pulp.LpStatusOptimal:
        return Status.OPTIMAL
    if sol_status in (pulp.LpSolutionIntegerFeasible,) or (status == pulp.LpStatusOptimal and is_mip
                                                          and sol_status != pulp.LpSolutionOptimal):
        return Status.FEASIBLE
    if status == pulp.LpStatusInfeasible or sol_status == pulp.LpSolutionInfeasible:
        return Status.INFEASIBLE
    if status == pulp.LpStatusUnbounded or sol_status == pulp.LpSolutionUnbounded:
        return Status.UNBOUNDED
    if elapsed >= 0.9 * time_limit_s:
        return Status.TIME_LIMIT
    return Status.ERROR


class PulpCbcBackend(_PulpBackend):
    """CBC through PuLP (``PULP_CBC_CMD``: the CBC binary bundled with PuLP)."""

    name = "pulp-cbc"

    def _probe(self) -> Any:
        import pulp

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return pulp.PULP_CBC_CMD(msg=False)

    def _solver(self, is_mip: bool, time_limit_s: float, mip_gap: float, threads: int | None, log: bool) -> Any:
        import pulp

        return pulp.PULP_CBC_CMD(mip=is_mip, msg=log, timeLimit=float(time_limit_s), gapRel=float(mip_gap),
                                 threads=threads)


class PulpHighsBackend(_PulpBackend):
    """HiGHS through PuLP's highspy API (``pulp.HiGHS``)."""

    name = "pulp-highs"

    def _probe(self) -> Any:
        import pulp

        return pulp.HiGHS(msg=False)

    def _solver(self, is_mip: bool, time_limit_s: float, mip_gap: float, threads: int | None, log: bool) -> Any:
        import pulp

        kw: dict[str, Any] = {}
        if threads:
            kw["threads"] = int(threads)
        return pulp.HiGHS(mip=is_mip, msg=log, timeLimit=float(time_limit_s), gapRel=float(mip_gap), **kw)

    def _ambiguous(self, prob: Any) -> bool:
        import highspy

        model = getattr(prob, "solverModel", None)  # pulp.HiGHS keeps the highspy object here
        return model is not None and model.getModelStatus() == highspy.HighsModelStatus.kUnboundedOrInfeasible


SOLVER_FACTORIES: dict[str, Callable[[], _PulpBackend]] = {"pulp-cbc": PulpCbcBackend,
                                                           "pulp-highs": PulpHighsBackend}
"""Name -> backend class (for :mod:`backbone.solver.core.export` and tests)."""
