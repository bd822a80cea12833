"""The solver seam: one sparse linear program, one status enum, one solution type.

Formulations assemble a :class:`LinearProgram` from blocks of rows built with scipy.sparse
(constraint *families*, never rows one by one) and hand it whole to a backend through
:func:`solve`. Variables and rows carry labelled indexes so results come back as pandas objects;
no code ever parses variable names.

Maths: ``minimise c @ x + offset`` subject to ``row_lower <= A @ x <= row_upper`` and
``col_lower <= x <= col_upper``, with ``x[j]`` integral where ``integrality[j]``.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

INF = float("inf")


class Status(str, enum.Enum):
    """Outcome of a solve, common to every backend."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"  # a feasible solution, not proven optimal (e.g. time limit with incumbent)
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time_limit"  # stopped by the time limit with no feasible solution
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        """Whether primal values are available."""
        return self in (Status.OPTIMAL, Status.FEASIBLE)


@dataclass
class Block:
    """A named family of variables (columns) or constraints (rows) occupying ``start:start+size``."""

    name: str
    start: int
    index: pd.Index

    @property
    def size(self) -> int:
        """Number of columns or rows of the family."""
        return len(self.index)

    @property
    def slice(self) -> slice:
        """The family's columns or rows."""
        return slice(self.start, self.start + self.size)


VariableBlock = Block
"""A family of variables (the same class as :data:`ConstraintBlock`)."""
ConstraintBlock = Block
"""A family of constraints (the same class as :data:`VariableBlock`)."""


@dataclass
class LinearProgram:
    """A (mixed-integer) linear program in sparse form with labelled blocks.

    Build it with :meth:`add_variables` and :meth:`add_constraints`, then call :meth:`finalize`
    (``solve`` does this) to get the stacked CSR matrix.

    Example
    -------
    >>> lp = LinearProgram("demo")
    >>> x = lp.add_variables("x", pd.Index(["a", "b"]), cost=[1.0, 2.0], lower=0.0)
    >>> lp.add_constraints("cover", sp.csr_matrix([[1.0, 1.0]]), lower=1.0, upper=INF, index=pd.Index(["c"]))
    >>> sol = solve(lp, time_limit_s=10)
    >>> float(sol.objective)
    1.0
    """

    name: str = "lp"
    objective_offset: float = 0.0
    variables: dict[str, VariableBlock] = field(default_factory=dict)
    constraints: dict[str, ConstraintBlock] = field(default_factory=dict)
    _c: list[np.ndarray] = field(default_factory=list)
    _lb: list[np.ndarray] = field(default_factory=list)
    _ub: list[np.ndarray] = field(default_factory=list)
    _int: list[np.ndarray] = field(default_factory=list)
    _rows: list[tuple[str, sp.spmatrix, dict[str, Any]]] = field(default_factory=list)
    _row_lb: list[np.ndarray] = field(default_factory=list)
    _row_ub: list[np.ndarray] = field(default_factory=list)
    n_cols: int = 0
    n_rows: int = 0
    _A: sp.csr_matrix | None = None
    _stacked: int = 0  # row families stacked into _A

    # -------------------------------------------------------------- building
    def add_variables(self, name: str, index: pd.Index | Sequence[Any] | int, cost: float | np.ndarray = 0.0,
                      lower: float | np.ndarray = 0.0, upper: float | np.ndarray = INF,
                      integer: bool | np.ndarray = False) -> VariableBlock:
        """Add a family of variables; returns its block (columns ``block.slice``)."""
        if name in self.variables:
            raise ValueError(f"variable block {name!r} exists")
        idx = pd.RangeIndex(index) if isinstance(index, int) else index if isinstance(index, pd.Index) else pd.Index(index)
        n = len(idx)
        block = VariableBlock(name, self.n_cols, idx)
        self.variables[name] = block
        self._c.append(np.broadcast_to(np.asarray(cost, float), (n,)).copy())
        self._lb.append(np.broadcast_to(np.asarray(lower, float), (n,)).copy())
        self._ub.append(np.broadcast_to(np.asarray(upper, float), (n,)).copy())
        self._int.append(np.broadcast_to(np.asarray(integer, bool), (n,)).copy())
        self.n_cols += n
        self._A = None
        return block

    def add_constraints(self, name: str, coefficients: sp.spmatrix | dict[str, sp.spmatrix],
                        lower: float | np.ndarray = -INF, upper: float | np.ndarray = INF,
                        index: pd.Index | Sequence[Any] | None = None) -> ConstraintBlock:
        """Add a family of rows ``lower <= A_block @ x <= upper``.

        ``coefficients`` is either a matrix over all columns added so far (n_rows x n_cols, or
        fewer columns: missing trailing columns are zero) or a dict mapping variable-block
        names to matrices over that block's columns only.
        """
        if name in self.constraints:
            raise ValueError(f"constraint block {name!r} exists")
        if isinstance(coefficients, dict):
            m = {k: sp.csr_matrix(v) for k, v in coefficients.items()}
            n = next(iter(m.values())).shape[0] if m else 0
            for k, v in m.items():
                if k not in self.variables:
                    raise KeyError(f"unknown variable block {k!r}")
                if v.shape != (n, self.variables[k].size):
                    raise ValueError(f"{name}: block {k!r} has shape {v.shape}, expected {(n, self.variables[k].size)}")
            spec: dict[str, Any] = {"blocks": m}
            mat = None
        else:
            mat = sp.csr_matrix(coefficients)
            n = mat.shape[0]
            spec = {}
        idx = pd.RangeIndex(n) if index is None else index if isinstance(index, pd.Index) else pd.Index(index)
        if len(idx) != n:
            raise ValueError(f"{name}: index has {len(idx)} labels for {n} rows")
        block = ConstraintBlock(name, self.n_rows, idx)
        self.constraints[name] = block
        self._rows.append((name, mat if mat is not None else sp.csr_matrix((n, 0)), spec))
        self._row_lb.append(np.broadcast_to(np.asarray(lower, float), (n,)).copy())
        self._row_ub.append(np.broadcast_to(np.asarray(upper, float), (n,)).copy())
        self.n_rows += n  # the stacked matrix is kept: the new rows are stacked onto it (see ``A``)
        return block

    # -------------------------------------------------------------- staged re-solve
    # A program is built once and re-solved in stages: change costs and bounds, add a stage's rows (and remove
    # them again). Arrays are replaced, never written in place, so a copy (a solution's program) keeps its values.
    def set_objective(self, costs: Mapping[str, float | np.ndarray], offset: float | None = None) -> None:
        """A new objective: ``minimise sum_b costs[b] @ x_b (+ offset)``; blocks not named cost zero."""
        unknown = set(costs) - set(self.variables)
        if unknown:
            raise KeyError(f"unknown variable block(s) {sorted(unknown)}")
        self._c = [np.broadcast_to(np.asarray(costs.get(name, 0.0), float), (b.size,)).copy()
                   for name, b in self.variables.items()]
        if offset is not None:
            self.objective_offset = float(offset)

    def set_cost(self, block: str, cost: float | np.ndarray) -> None:
        """Change the costs of one variable block."""
        i, b = self._var(block)
        self._c = [*self._c[:i], np.broadcast_to(np.asarray(cost, float), (b.size,)).copy(), *self._c[i + 1:]]

    def set_bounds(self, block: str, lower: float | np.ndarray | None = None,
                   upper: float | np.ndarray | None = None) -> None:
        """Change the bounds of one variable block (None keeps that side)."""
        i, b = self._var(block)
        if lower is not None:
            self._lb = [*self._lb[:i], np.broadcast_to(np.asarray(lower, float), (b.size,)).copy(), *self._lb[i + 1:]]
        if upper is not None:
            self._ub = [*self._ub[:i], np.broadcast_to(np.asarray(upper, float), (b.size,)).copy(), *self._ub[i + 1:]]

    def bounds(self, block: str) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of one variable block."""
        i, _ = self._var(block)
        return self._lb[i], self._ub[i]

    def remove_constraints(self, name: str) -> None:
        """Drop a family of rows (a stage's rows, before the next stage adds its own)."""
        if name not in self.constraints:
            raise KeyError(f"unknown constraint block {name!r}")
        i = list(self.constraints).index(name)
        gone = self.constraints[name]
        last = i == len(self._rows) - 1
        self.constraints = {k: (b if b.start < gone.start else Block(b.name, b.start - gone.size, b.index))
                            for k, b in self.constraints.items() if k != name}
        self._rows = [*self._rows[:i], *self._rows[i + 1:]]
        self._row_lb = [*self._row_lb[:i], *self._row_lb[i + 1:]]
        self._row_ub = [*self._row_ub[:i], *self._row_ub[i + 1:]]
        self.n_rows -= gone.size
        if self._A is not None and last and self._A.shape[0] >= gone.start + gone.size:
            self._A = self._A[:gone.start]  # the rows before it stay stacked
        else:
            self._A = None
        self._stacked = min(self._stacked, i) if self._A is None else len(self._rows)

    def add_columns(self, block: str, index: pd.Index | Sequence[Any] | int, cost: float | np.ndarray = 0.0,
                    lower: float | np.ndarray = 0.0, upper: float | np.ndarray = INF,
                    integer: bool | np.ndarray = False,
                    coefficients: Mapping[str, sp.spmatrix] | None = None) -> VariableBlock:
        """Append columns to the end of variable block ``block`` (column generation's new paths).

        ``index`` labels the new columns (an int ``n``: the next ``n`` positions of a range index);
        ``coefficients[r]`` is the new columns' ``rows(r) x n`` matrix in constraint family ``r`` (families
        not named get zeros). The blocks after ``block`` move right; the existing rows are extended, not
        rebuilt, and a solution of the program before keeps its own columns (see :meth:`column_layout`).
        Returns the grown block.
        """
        i, b = self._var(block)
        if isinstance(index, int):
            start = b.index.stop if isinstance(b.index, pd.RangeIndex) and b.index.step == 1 else b.size
            index = pd.RangeIndex(start, start + index)
        new = index if isinstance(index, pd.Index) else pd.Index(index)
        n, at = len(new), b.start + b.size  # the new columns' first position
        cols = {r: sp.csr_matrix(m) for r, m in (coefficients or {}).items()}
        for r, m in cols.items():
            if r not in self.constraints:
                raise KeyError(f"unknown constraint block {r!r}")
            if m.shape != (self.constraints[r].size, n):
                raise ValueError(f"{r}: new columns have shape {m.shape}, expected {(self.constraints[r].size, n)}")
        grown = Block(block, b.start, b.index.append(new).set_names(b.index.names))
        self.variables = {k: grown if k == block else (v if v.start < at else Block(v.name, v.start + n, v.index))
                          for k, v in self.variables.items()}
        for arrays, value in ((self._c, cost), (self._lb, lower), (self._ub, upper)):
            arrays[i] = np.concatenate([arrays[i], np.broadcast_to(np.asarray(value, float), (n,))])
        self._int[i] = np.concatenate([self._int[i], np.broadcast_to(np.asarray(integer, bool), (n,))])
        for j, (rname, mat, spec) in enumerate(self._rows):
            m = cols.get(rname)
            rows = self.constraints[rname].size
            if "blocks" in spec:
                if block not in spec["blocks"] and m is None:
                    continue
                old = spec["blocks"].get(block, sp.csr_matrix((rows, b.size)))
                extra = sp.csr_matrix((rows, n)) if m is None else m
                self._rows[j] = (rname, mat, {**spec, "blocks": {**spec["blocks"], block: sp.hstack([old, extra],
                                                                                                   format="csr")}})
            elif m is not None or mat.shape[1] > at:  # one matrix over all columns: insert the new ones at ``at``
                mat = mat.tocsc()
                head = mat[:, :at] if mat.shape[1] >= at else sp.hstack([mat, sp.csc_matrix((rows, at - mat.shape[1]))])
                extra = sp.csc_matrix((rows, n)) if m is None else m.tocsc()
                self._rows[j] = (rname, sp.hstack([head, extra, mat[:, at:]], format="csr"), spec)
        self.n_cols += n
        self._A = None
        return grown

    def column_layout(self) -> tuple[tuple[str, int], ...]:
        """(block, size) of every variable block in order: what :meth:`grown_positions` maps from."""
        return tuple((k, b.size) for k, b in self.variables.items())

    def grown_positions(self, layout: Sequence[tuple[str, int]]) -> np.ndarray | None:
        """Where the columns of an earlier ``layout`` of this program are now (only columns appended to its
        blocks since: same blocks, same order, none smaller), or None when the program is another one."""
        if [k for k, _ in layout] != list(self.variables) or any(self.variables[k].size < n for k, n in layout):
            return None
        parts = [np.arange(self.variables[k].start, self.variables[k].start + n) for k, n in layout]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def without_variables(self, blocks: Collection[str], name: str | None = None) -> LinearProgram:
        """A program over the other variable blocks, with the same rows less the left-out blocks' coefficients
        (for blocks fixed at zero, which then need no columns). Rows must be given per block."""
        keep = [k for k in self.variables if k not in blocks]
        lp = LinearProgram(name or self.name, self.objective_offset)
        for k in keep:
            i, b = self._var(k)
            lp.add_variables(k, b.index, cost=self._c[i], lower=self._lb[i], upper=self._ub[i], integer=self._int[i])
        for (rname, _, spec), lo, up in zip(self._rows, self._row_lb, self._row_ub, strict=True):
            if "blocks" not in spec:
                raise ValueError(f"{rname}: rows given as one matrix cannot leave variable blocks out")
            kept = {k: m for k, m in spec["blocks"].items() if k not in blocks}
            index = self.constraints[rname].index
            lp.add_constraints(rname, kept or sp.csr_matrix((len(index), 0)), lower=lo, upper=up, index=index)
        return lp

    def copy(self) -> LinearProgram:
        """A copy that later staged changes to either program do not reach (arrays are shared until replaced)."""
        import copy

        lp = copy.copy(self)
        lp.variables, lp.constraints = dict(self.variables), dict(self.constraints)
        lp._c, lp._lb, lp._ub, lp._int = list(self._c), list(self._lb), list(self._ub), list(self._int)
        lp._rows, lp._row_lb, lp._row_ub = list(self._rows), list(self._row_lb), list(self._row_ub)
        return lp

    def _var(self, block: str) -> tuple[int, VariableBlock]:
        if block not in self.variables:
            raise KeyError(f"unknown variable block {block!r}")
        return list(self.variables).index(block), self.variables[block]

    # -------------------------------------------------------------- stacked arrays
    @property
    def c(self) -> np.ndarray:
        return np.concatenate(self._c) if self._c else np.zeros(0)

    @property
    def col_lower(self) -> np.ndarray:
        return np.concatenate(self._lb) if self._lb else np.zeros(0)

    @property
    def col_upper(self) -> np.ndarray:
        return np.concatenate(self._ub) if self._ub else np.zeros(0)

    @property
    def integrality(self) -> np.ndarray:
        return np.concatenate(self._int) if self._int else np.zeros(0, bool)

    @property
    def row_lower(self) -> np.ndarray:
        return np.concatenate(self._row_lb) if self._row_lb else np.zeros(0)

    @property
    def row_upper(self) -> np.ndarray:
        return np.concatenate(self._row_ub) if self._row_ub else np.zeros(0)

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    @property
    def A(self) -> sp.csr_matrix:
        """The stacked constraint matrix (CSR, n_rows x n_cols).

        Families added after the last stacking (a stage's rows) are stacked onto it, not the whole program again.
        """
        if self._A is not None and self._stacked < len(self._rows) and self._A.shape[1] == self.n_cols:
            new = self._stack(self._rows[self._stacked:])
            self._A = sp.vstack([self._A, new], format="csr") if self._A.shape[0] else new
            self._A.sum_duplicates()
        elif self._A is None or self._A.shape != (self.n_rows, self.n_cols):
            self._A = self._stack(self._rows)
        self._stacked = len(self._rows)
        return self._A

    def _stack(self, rows: list[tuple[str, sp.spmatrix, dict[str, Any]]]) -> sp.csr_matrix:
        parts = []
        for _name, mat, spec in rows:
            if "blocks" in spec:
                n = mat.shape[0]
                coo_parts = []
                for k, v in spec["blocks"].items():
                    blk = self.variables[k]
                    v = v.tocoo()
                    coo_parts.append((v.data, v.row, v.col + blk.start))
                if coo_parts:
                    data = np.concatenate([p[0] for p in coo_parts])
                    r = np.concatenate([p[1] for p in coo_parts])
                    cc = np.concatenate([p[2] for p in coo_parts])
                else:
                    data, r, cc = np.zeros(0), np.zeros(0, int), np.zeros(0, int)
                parts.append(sp.csr_matrix((data, (r, cc)), shape=(n, self.n_cols)))
            else:
                m = mat
                if m.shape[1] < self.n_cols:
                    m = sp.hstack([m, sp.csr_matrix((m.shape[0], self.n_cols - m.shape[1]))], format="csr")
                parts.append(m)
        if not parts:
            return sp.csr_matrix((0, self.n_cols))
        a = sp.vstack(parts, format="csr")
        a.sum_duplicates()
        return a

    def relaxed(self) -> LinearProgram:
        """A copy with integrality dropped (the LP relaxation)."""
        lp = self.copy()
        lp._int = [np.zeros_like(x) for x in self._int]
        return lp

    def stats(self) -> dict[str, int]:
        """Size of the program."""
        return {"rows": self.n_rows, "cols": self.n_cols, "nonzeros": int(self.A.nnz),
                "integer_cols": int(self.integrality.sum())}

    # -------------------------------------------------------------- checking
    def evaluate(self, x: np.ndarray) -> float:
        """Objective value of ``x`` (programs always minimise; maximise by negating costs)."""
        return float(self.c @ x + self.objective_offset)

    def max_violation(self, x: np.ndarray) -> float:
        """Largest violation of any row or bound by ``x`` (0 when feasible)."""
        ax = self.A @ x
        v = [np.maximum(self.row_lower - ax, 0), np.maximum(ax - self.row_upper, 0),
             np.maximum(self.col_lower - x, 0), np.maximum(x - self.col_upper, 0)]
        return float(max((np.max(a) if a.size else 0.0) for a in v))


@dataclass
class Solution:
    """What a backend returns, with values labelled by the program's blocks."""

    status: Status
    objective: float
    x: np.ndarray | None
    backend: str
    solve_seconds: float
    bound: float | None = None  # best proven bound (MIP dual bound, or objective for LP optimum)
    row_duals: np.ndarray | None = None
    message: str = ""
    lp: LinearProgram | None = field(default=None, repr=False)
    fallback: str = ""  # what the backend did when its first method failed (e.g. IPM -> simplex)
    basis: Any = field(default=None, repr=False)  # backend warm-start data of an LP optimum (None: none kept)
    warm_started: bool = False  # the backend started from ``warm_start``'s basis

    @property
    def gap(self) -> float | None:
        """Relative optimality gap ``|obj - bound| / max(|obj|, 1e-9)`` (None when unknown)."""
        if self.bound is None or not np.isfinite(self.objective) or not np.isfinite(self.bound):
            return None
        return abs(self.objective - self.bound) / max(abs(self.objective), 1e-9)

    def values(self, block: str) -> pd.Series:
        """Primal values of one variable block, indexed by its labels."""
        if self.lp is None or self.x is None:
            raise ValueError(f"no solution values (status {self.status.value})")
        b = self.lp.variables[block]
        return pd.Series(self.x[b.slice], index=b.index, name=block)

    def duals(self, block: str) -> pd.Series:
        """Row duals of one constraint block (when the backend provides them)."""
        if self.lp is None or self.row_duals is None:
            raise ValueError("no duals available")
        b = self.lp.constraints[block]
        return pd.Series(self.row_duals[b.slice], index=b.index, name=block)


LP_METHODS = ("auto", "simplex", "ipm", "primal-simplex")
"""The backend-neutral choice of LP method (each adapter translates it; see :func:`solve`). ``primal-simplex`` is
for a re-solve from a basis that stays primal feasible (columns added since: sifting's later rounds)."""


def solve(lp: LinearProgram, backend: str = "highs", time_limit_s: float = 60.0, mip_gap: float = 1e-4,
          threads: int | None = None, lp_method: str | None = None, presolve: bool = True,
          warm_start: Solution | None = None, start: np.ndarray | None = None,
          **options: Any) -> Solution:
    """Solve ``lp`` with the named backend.

    The keyword arguments are backend-neutral; each adapter in :mod:`backbone.solver.backends`
    translates them into its solver's own settings. ``options`` are passed through untranslated
    (``log=True``); an adapter rejects what it does not know.

    Parameters
    ----------
    backend
        One of :func:`available_backends` names: ``highs`` (default), ``ortools-glop``,
        ``ortools-pdlp``, ``ortools-scip``, ``pulp-cbc``, ``pulp-highs``.
    time_limit_s
        Seconds; every solve has one.
    mip_gap
        Relative MIP gap at which to stop (ignored for LPs).
    threads
        Solver threads (None: the solver's default).
    lp_method
        One of :data:`LP_METHODS`: ``simplex`` (HiGHS: dual), ``primal-simplex``, ``ipm`` (interior point, no
        crossover), ``auto``
        (the adapter picks by size: HiGHS uses interior point from
        :data:`backbone.solver.backends.highs.IPM_MIN_COLUMNS` columns up), or None for the
        solver's own default. Backends without a choice of method (GLOP, PDLP, SCIP, PuLP) ignore it.
    presolve
        False switches the solver's presolve off (where it has a switch).
    warm_start
        A solution of an earlier stage of this LP (rows since added, none removed; columns since appended
        with :meth:`LinearProgram.add_columns`): the backend starts from its basis where it can (HiGHS simplex;
        new rows start basic, new columns nonbasic) and says so in ``warm_started``. Ignored otherwise (MIPs,
        other backends, interior point, a different program).
    start
        A MIP start (a full column vector), given to backends that take one (``supports_start``: HiGHS);
        the others ignore it.

    Raises
    ------
    SolverError
        When the backend is unknown, not installed, or crashes.
    """
    from backbone.errors import SolverError
    from backbone.solver.backends import get_backend
    if not time_limit_s or time_limit_s <= 0:
        raise SolverError("every solve needs a positive time limit")
    if lp_method is not None and lp_method not in LP_METHODS:
        raise SolverError(f"unknown lp_method {lp_method!r}; choose one of {', '.join(LP_METHODS)}")
    impl = get_backend(backend)
    _ = lp.A  # stack once, outside the timed solve
    t0 = time.perf_counter()

    def run(opts: dict[str, Any], limit: float, with_presolve: bool = presolve) -> Solution:
        try:
            if warm_start is not None and warm_start.basis is not None and warm_start.backend == impl.name:
                opts = {**opts, "warm_start": warm_start}
            return impl.solve(lp, time_limit_s=limit, mip_gap=mip_gap, threads=threads,  # type: ignore[no-any-return]
                              lp_method=lp_method, presolve=with_presolve, **opts)
        except SolverError:
            raise
        except Exception as exc:  # a backend crash is a solver error, never swallowed
            raise SolverError(f"backend {backend!r} failed: {type(exc).__name__}: {exc}") from exc

    options = dict(options)
    if start is not None and getattr(impl, "supports_start", False):
        options["start"] = start
    sol = run(options, time_limit_s)
    if _objective_mismatch(lp, sol):
        sol = _resolve_mismatch(lp, sol, backend, options, run, t0 + time_limit_s)
    sol.solve_seconds = time.perf_counter() - t0
    sol.lp = lp.copy()  # the program as solved: later stages may change ``lp``
    return sol


OBJECTIVE_RTOL = 1e-6
"""A reported objective must equal the objective recomputed from the returned solution within
this relative tolerance (of max(1, |objective|))."""


def _objective_mismatch(lp: LinearProgram, sol: Solution) -> bool:
    """Whether the backend's objective is not the value of the solution it returned."""
    if not sol.status.has_solution or sol.x is None:
        return False
    value = lp.evaluate(sol.x)
    return not abs(value - sol.objective) <= OBJECTIVE_RTOL * max(1.0, abs(value), abs(sol.objective))


def _resolve_mismatch(lp: LinearProgram, sol: Solution, backend: str, options: dict[str, Any],
                      run: Any, deadline: float) -> Solution:
    """Never report an objective the solution does not have.

    HiGHS given a MIP start with presolve on has been seen to report the objective of a better
    (presolved) incumbent while returning the start's values. Re-solve without the start, then
    (HiGHS) with presolve off too, within what is left of the time limit; keep the first answer
    whose objective is its own. When none is, report the returned solution at its recomputed value
    (a MIP incumbent then has status ``feasible``: its optimality is not proven) and say so in
    ``fallback``.
    """
    import logging

    log = logging.getLogger(__name__)
    value = lp.evaluate(sol.x)  # type: ignore[arg-type]
    note = (f"{backend} reported objective {sol.objective:.10g}, but the solution it returned evaluates to "
            f"{value:.10g}")
    log.info("%s; re-solving", note)
    retries: list[tuple[str, dict[str, Any], bool]] = []
    plain = {k: v for k, v in options.items() if k != "start"}
    if "start" in options:
        retries.append(("without the start", plain, True))
    if backend == "highs":
        retries.append(("without the start and with presolve off", plain, False))
    for how, opts, with_presolve in retries:
        left = deadline - time.perf_counter()
        if left <= 0.1:
            break
        alt = run(opts, left, with_presolve)
        if (alt.status.has_solution and alt.x is not None and not _objective_mismatch(lp, alt)
                and lp.evaluate(alt.x) <= value + OBJECTIVE_RTOL * max(1.0, abs(value))):
            alt.fallback = f"{note}; re-solved {how}: {alt.objective:.10g} ({alt.status.value})"
            return alt
    sol.objective = value
    if lp.is_mip and sol.status == Status.OPTIMAL and (sol.bound is None or not np.isfinite(sol.bound)
                                                       or value - sol.bound > OBJECTIVE_RTOL * max(1.0, abs(value))):
        sol.status = Status.FEASIBLE  # the incumbent is not proven optimal (an LP optimum stays one)
    if sol.bound is not None and np.isfinite(sol.bound):
        sol.bound = min(sol.bound, value)
    sol.fallback = f"{note}; reported at its recomputed value ({sol.status.value})"
    return sol
