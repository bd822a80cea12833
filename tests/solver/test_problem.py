"""The LinearProgram's staged re-solve: change costs and bounds, add and remove row families, leave blocks out.

Every staged program is checked against the same program built from scratch (same matrix, same optimum).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from backbone.solver.core.problem import INF, LinearProgram, solve


def _transport(cost_x: float = 1.0) -> LinearProgram:
    """Two sources, two sinks: ``x[i, j] >= 0``, supply rows ``<= s_i``, demand rows ``+ u_j = d_j``."""
    lp = LinearProgram("transport")
    lp.add_variables("x", pd.MultiIndex.from_product([["a", "b"], ["p", "q"]]), cost=cost_x * np.array([1, 3, 2, 1.0]))
    lp.add_variables("unmet", pd.Index(["p", "q"]), upper=np.array([4.0, 5.0]))
    lp.add_constraints("supply", {"x": sp.csr_matrix([[1, 1, 0, 0], [0, 0, 1, 1.0]])}, upper=[3.0, 4.0],
                       index=["a", "b"])
    lp.add_constraints("demand", {"x": sp.csr_matrix([[1, 0, 1, 0], [0, 1, 0, 1.0]]), "unmet": sp.identity(2)},
                       lower=[4.0, 5.0], upper=[4.0, 5.0], index=["p", "q"])
    return lp


def test_changed_costs_and_bounds_solve_as_a_program_built_with_them() -> None:
    lp = _transport()
    first = solve(lp, time_limit_s=10)
    lp.set_objective({"unmet": 1.0})  # a new objective: x costs nothing now
    lp.set_bounds("unmet", upper=np.array([1.5, 1.0]))
    fresh = _transport(cost_x=0.0)
    fresh.set_cost("unmet", 1.0)
    fresh.set_bounds("unmet", 0.0, [1.5, 1.0])
    assert (lp.A != fresh.A).nnz == 0
    np.testing.assert_array_equal(lp.c, fresh.c)
    np.testing.assert_array_equal(lp.col_upper, fresh.col_upper)
    staged = solve(lp, time_limit_s=10)
    assert staged.objective == pytest.approx(2.0)  # 7 supply for 9 demand
    assert staged.objective == pytest.approx(solve(fresh, time_limit_s=10).objective, rel=1e-12)
    assert first.lp is not None and first.lp.c[0] == 1.0  # the first solution keeps the program it solved
    assert first.values("unmet").sum() == pytest.approx(9.0)  # unmet cost nothing at first


def test_rows_added_and_removed_between_stages_match_a_fresh_build() -> None:
    lp = _transport()
    base_a = lp.A.copy()
    hold = lp.add_constraints("hold", {"unmet": sp.csr_matrix([[1.0, 1.0]])}, upper=2.5, index=["hold"])
    assert hold.start == 4 and lp.A.shape == (5, 6)  # stacked onto the stacked matrix
    fresh = _transport()
    fresh.add_constraints("hold", {"unmet": sp.csr_matrix([[1.0, 1.0]])}, upper=2.5, index=["hold"])
    assert (lp.A != fresh.A).nnz == 0
    lp.remove_constraints("hold")
    assert "hold" not in lp.constraints and lp.n_rows == 4 and (base_a != lp.A).nnz == 0
    lp.remove_constraints("supply")  # not the last family: the blocks after it move up
    assert lp.constraints["demand"].start == 0 and lp.A.shape == (2, 6)
    np.testing.assert_array_equal(lp.row_lower, [4.0, 5.0])
    lp.set_bounds("unmet", upper=0.0)
    sol = solve(lp, time_limit_s=10)
    assert sol.objective == pytest.approx(4.0 + 5.0)  # no supply limit: each sink from its cheapest source
    with pytest.raises(KeyError):
        lp.remove_constraints("supply")


def test_a_block_left_out_is_the_block_fixed_at_zero() -> None:
    lp = _transport()
    lp.set_bounds("unmet", 0.0, 0.0)
    lp.set_bounds("x", upper=INF)
    lp.remove_constraints("supply")
    fixed = solve(lp, time_limit_s=10)
    small = lp.without_variables({"unmet"})
    assert list(small.variables) == ["x"] and small.A.shape == (2, 4)
    assert list(small.constraints) == ["demand"]
    left_out = solve(small, time_limit_s=10)
    assert left_out.objective == pytest.approx(fixed.objective, rel=1e-12)
    np.testing.assert_allclose(left_out.values("x").to_numpy(), fixed.values("x").to_numpy())
    whole = LinearProgram("whole")
    whole.add_variables("x", 2)
    whole.add_constraints("rows", sp.csr_matrix([[1.0, 1.0]]), lower=1.0)
    with pytest.raises(ValueError, match="one matrix"):
        whole.without_variables({"x"})


def test_relaxed_and_copied_programs_do_not_share_staged_changes() -> None:
    lp = _transport()
    lp.variables["x"]
    lp._int = [np.ones(4, bool), np.zeros(2, bool)]  # make x integer
    relaxed = lp.relaxed()
    lp.add_constraints("hold", {"unmet": sp.csr_matrix([[1.0, 1.0]])}, upper=2.5)
    lp.set_cost("x", 0.0)
    assert "hold" not in relaxed.constraints and relaxed.n_rows == 4 and relaxed.A.shape == (4, 6)
    assert relaxed.c[0] == 1.0 and not relaxed.is_mip and lp.is_mip
    with pytest.raises(KeyError):
        lp.set_objective({"nope": 1.0})


def test_a_stage_warm_started_from_the_last_basis_reaches_the_same_optimum() -> None:
    lp = _transport()
    lp.set_objective({"x": np.array([1, 3, 2, 1.0]), "unmet": 10.0})
    first = solve(lp, time_limit_s=10, lp_method="simplex")
    assert first.basis is not None and not first.warm_started
    lp.add_constraints("hold", {"x": sp.csr_matrix([[1.0, 0.0, 0.0, 0.0]])}, upper=2.0, index=["hold"])
    fresh = solve(lp, time_limit_s=10, lp_method="simplex")
    warm = solve(lp, time_limit_s=10, lp_method="simplex", warm_start=first)
    assert warm.warm_started and not fresh.warm_started
    assert warm.objective == pytest.approx(fresh.objective, rel=1e-12)
    assert warm.objective > first.objective  # the hold row binds
    lp.add_variables("y", 1)  # another program: the basis does not fit, and is not used
    other = solve(lp, time_limit_s=10, lp_method="simplex", warm_start=first)
    assert not other.warm_started and other.objective == pytest.approx(fresh.objective, rel=1e-12)


def _random_program(rng: np.random.Generator, n_x: int, data: dict[str, np.ndarray] | None = None
                    ) -> tuple[LinearProgram, dict[str, np.ndarray]]:
    """A random bounded, feasible LP over blocks ``x`` (the first ``n_x`` of its columns), ``y`` and ``z``; rows
    per block (``cap``, ``mix``) and one family given as a whole matrix (``whole``). ``data`` is the full data
    (drawn on the first call) so a smaller ``n_x`` builds the same program over fewer ``x`` columns."""
    if data is None:
        n = {"x": 40, "y": 7, "z": 3}
        data = {f"{b}_{part}": v for b, k in n.items() for part, v in (
            ("cost", rng.normal(size=k)), ("upper", rng.uniform(1, 5, k)),
            ("cap", sp.random(12, k, 0.3, random_state=rng).toarray()),
            ("mix", sp.random(5, k, 0.5, random_state=rng).toarray()),
            ("whole", sp.random(4, k, 0.5, random_state=rng).toarray()))}
    lp = LinearProgram("random")
    for b in ("x", "y", "z"):
        size = n_x if b == "x" else len(data[f"{b}_cost"])
        lp.add_variables(b, size, cost=data[f"{b}_cost"][:size], upper=data[f"{b}_upper"][:size])
    lp.add_constraints("cap", {b: data[f"{b}_cap"][:, :lp.variables[b].size] for b in ("x", "y")}, upper=3.0)
    lp.add_constraints("mix", {b: data[f"{b}_mix"][:, :lp.variables[b].size] for b in ("x", "z")},
                       lower=-2.0, upper=4.0)
    whole = np.hstack([data["x_whole"][:, :n_x], data["y_whole"], data["z_whole"]])
    lp.add_constraints("whole", sp.csr_matrix(whole), upper=6.0, index=["w0", "w1", "w2", "w3"])
    return lp, data


def _assert_same_program(a: LinearProgram, b: LinearProgram) -> None:
    assert a.n_cols == b.n_cols and a.n_rows == b.n_rows
    assert a.A.shape == b.A.shape and abs(a.A - b.A).max() == 0
    for name in ("c", "col_lower", "col_upper", "integrality", "row_lower", "row_upper"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.column_layout() == b.column_layout()
    for k, block in b.variables.items():
        assert a.variables[k].start == block.start and a.variables[k].index.equals(block.index)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_columns_appended_in_steps_make_the_program_built_in_one_go(seed: int) -> None:
    rng = np.random.default_rng(seed)
    whole, data = _random_program(rng, 40)
    lp, _ = _random_program(rng, 10, data)
    first = solve(lp, time_limit_s=10, lp_method="simplex")
    before = lp.copy()
    for lo, hi in ((10, 25), (25, 25), (25, 40)):  # an empty step too
        rows = {r: data[f"x_{r}"][:, lo:hi] for r in ("cap", "mix", "whole")}
        grown = lp.add_columns("x", hi - lo, cost=data["x_cost"][lo:hi], upper=data["x_upper"][lo:hi],
                               coefficients=rows)
        assert grown.size == hi and lp.variables["y"].start == hi
    _assert_same_program(lp, whole)
    assert before.n_cols == 20 and before.A.shape == (21, 20)  # a copy taken before is not reached
    assert first.values("x").index.equals(pd.RangeIndex(10))  # nor is a solution of the smaller program
    cold = solve(whole, time_limit_s=10, lp_method="simplex")
    warm = solve(lp, time_limit_s=10, lp_method="simplex", warm_start=first)
    assert warm.warm_started and not cold.warm_started
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9, abs=1e-9)
    assert warm.objective <= first.objective + 1e-9  # more columns never make it worse
    assert lp.max_violation(warm.x) <= 1e-7


def test_appended_columns_extend_only_the_named_rows() -> None:
    lp = _transport()
    lp.add_constraints("hold", {"unmet": sp.csr_matrix([[1.0, 1.0]])}, upper=2.5, index=["hold"])
    lp.add_columns("x", pd.Index([("c", "p")]), cost=0.5, upper=1.0,
                   coefficients={"demand": sp.csr_matrix([[1.0], [0.0]]), "hold": sp.csr_matrix([[1.0]])})
    assert lp.variables["x"].size == 5 and lp.variables["unmet"].start == 5
    assert lp.A.shape == (5, 7) and lp.A[0, 4] == 0 and lp.A[2, 4] == 1 and lp.A[4, 4] == 1
    assert lp.variables["x"].index[-1] == ("c", "p")
    lp.set_cost("unmet", 10.0)
    sol = solve(lp, time_limit_s=10)
    assert sol.values("x").loc[("c", "p")] == pytest.approx(1.0)  # the cheap new column is used to its bound
    with pytest.raises(ValueError, match="expected"):
        lp.add_columns("x", 2, coefficients={"demand": sp.csr_matrix((2, 3))})
    with pytest.raises(KeyError):
        lp.add_columns("x", 1, coefficients={"nope": sp.csr_matrix((1, 1))})
