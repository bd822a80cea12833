"""Column generation's restricted master: built once, then grown by appending the priced columns.

Every master after the first is the previous one with the new columns appended
(:meth:`~backbone.solver.core.problem.LinearProgram.add_columns`) and the new holds' rows added; the answers are
those of the full path LP (as :mod:`tests.solver.test_te_scale` checks for every objective).
"""

from __future__ import annotations

from typing import Any

import pytest

import backbone.solver.te.colgen as colgen
from backbone.solver.checks.te import check_te
from backbone.solver.core.problem import LinearProgram, Solution
from backbone.solver.te import TEOptions, solve_te
from backbone.solver.te.sections import ColgenFigures
from tests.nets import ALL_PATHS_K, random_te_net


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[tuple[LinearProgram, Solution]]:
    """Record every master colgen solves (the program as solved, and its solution)."""
    seen: list[tuple[LinearProgram, Solution]] = []
    real = colgen.solve

    def solve(lp: LinearProgram, *args: Any, **kwargs: Any) -> Solution:
        sol = real(lp, *args, **kwargs)
        assert sol.lp is not None
        seen.append((sol.lp, sol))
        return sol

    monkeypatch.setattr(colgen, "solve", solve)
    return seen


def _assert_grown(seen: list[tuple[LinearProgram, Solution]]) -> None:
    """Each master holds the one before it: its columns first (same coefficients in the same rows)."""
    for (before, _), (after, _) in zip(seen, seen[1:], strict=False):
        n, rows = before.variables["flow"].size, before.n_rows
        assert after.variables["flow"].size >= n and after.n_rows >= rows
        assert list(after.constraints)[:len(before.constraints)] == list(before.constraints)
        flow = slice(0, n)
        assert (after.A[:rows, flow] != before.A[:, flow]).nnz == 0
        assert after.A[rows:, flow].nnz == 0  # rows added since (holds) are over unmet demand only


@pytest.mark.parametrize("seed", [1, 3])
def test_the_max_throughput_master_is_built_once_across_iterations_and_classes(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    net = random_te_net(seed, n=8, m=13, slo=True, tight=6.0)  # two classes: two stages, a hold between them
    full = solve_te(net, TEOptions(objective="max-throughput", k_paths=ALL_PATHS_K, method="exact"))
    seen = _recording(monkeypatch)
    cg = solve_te(net, TEOptions(objective="max-throughput", k_paths=1, method="colgen"))
    figures = cg.summary.colgen
    assert isinstance(figures, ColgenFigures)
    assert figures.master_builds == 1 and figures.iterations == len(seen) > 2
    assert len({lp.name.rsplit("-", 1)[0] for lp, _ in seen}) == 2  # both classes' stages grew the one master
    _assert_grown(seen)
    assert cg.summary.carried_gbps <= full.summary.carried_gbps * (1 + 1e-6)
    assert check_te(net, cg).ok


@pytest.mark.parametrize("seed", [0, 1])
def test_the_min_mlu_master_grows_and_simplex_masters_start_from_the_last_basis(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    net = random_te_net(seed, slo=True)  # SLO demands: the masters run from the first iteration
    full = solve_te(net, TEOptions(objective="min-mlu", k_paths=ALL_PATHS_K, method="exact")).summary.objective_value
    start = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="exact")).summary.objective_value
    ipm = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="colgen"))
    seen = _recording(monkeypatch)
    simplex = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="colgen", lp_method="simplex"))
    figures = simplex.summary.colgen
    assert isinstance(figures, ColgenFigures)
    assert figures.master_builds == 1 and figures.iterations == len(seen) > 1
    assert all("unmet" not in lp.variables for lp, _ in seen)  # fixed at zero in min-MLU: left out throughout
    _assert_grown(seen)
    assert not seen[0][1].warm_started and all(sol.warm_started for _, sol in seen[1:])
    assert figures.masters_warm_started == len(seen) - 1
    for r in (ipm, simplex):  # feasible over admissible paths, and never worse than the first master's paths
        assert full * (1 - 1e-9) <= r.summary.objective_value <= start * (1 + 1e-9)
        assert check_te(net, r).ok
    assert isinstance(ipm.summary.colgen, ColgenFigures) and ipm.summary.colgen.master_builds == 1
    assert ipm.summary.colgen.masters_warm_started == 0  # interior point starts from no basis
