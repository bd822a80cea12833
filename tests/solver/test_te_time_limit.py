"""``--time-limit`` is a hard limit: path search, model building and the LP all stop at the deadline,
and the solve returns the best feasible answer found with its bound (status ``time_limit``)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from backbone.errors import SolverError
from backbone.model import Network
from backbone.solver.checks.te import check_te
from backbone.solver.core.deadline import Deadline, TimeLimitReached
from backbone.solver.paths.candidates import candidate_paths, clear_cache
from backbone.solver.tasks.te import TEOptions, run_te_task
from backbone.solver.te import solve_te
from benchmarks.synthetic import synthetic_backbone

SLACK_S = 3.0
"""What a stopped solve may take beyond its limit: the lowest-latency routing, its bound and the tables
(tens of milliseconds here; generous for a loaded 2-core machine)."""


@pytest.fixture(scope="module")
def big() -> Network:
    """A synthetic backbone whose exact solve takes far longer than the limits used here."""
    net = synthetic_backbone(160, seed=3)
    solve_te(synthetic_backbone(12, seed=1), TEOptions(objective="min-mlu", k_paths=2))  # compile the path kernels outside the timings
    return net


def _timed(net: Network, **kw: object) -> tuple[object, float]:
    t0 = time.perf_counter()
    r = solve_te(net, TEOptions(**kw))  # type: ignore[arg-type]
    return r, time.perf_counter() - t0


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exact", "colgen", "pop"])
def test_min_mlu_stops_at_the_limit_with_a_feasible_answer_and_a_valid_bound(big: Network, method: str) -> None:
    limit = 0.3
    r, seconds = _timed(big, objective="min-mlu", k_paths=4, method=method, time_limit_s=limit)
    s = r.summary  # type: ignore[attr-defined]
    assert seconds <= limit + SLACK_S
    assert s.status == "time_limit"
    assert s.method == method
    assert check_te(big, r).ok, check_te(big, r).to_dict()
    assert s.lower_bound is not None and 0 < s.lower_bound <= s.mlu + 1e-12
    assert 0 <= s.gap < 1
    # every demand is carried (min-MLU has no capacity limit) unless no path meets its SLO
    d = r.demands  # type: ignore[attr-defined]
    assert set(d.loc[d["unmet_gbps"] > 0, "reason"]) <= {"no_path_within_slo", "disconnected"}
    assert any("time limit" in n for n in s.notes)


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["max-throughput", "max-min-fair", "min-latency"])
def test_capped_objectives_stop_at_the_limit_under_their_ceiling(big: Network, objective: str) -> None:
    r, seconds = _timed(big, objective=objective, k_paths=4, method="exact", time_limit_s=0.2)
    s = r.summary  # type: ignore[attr-defined]
    assert seconds <= 0.2 + SLACK_S
    assert s.status == "time_limit"
    assert check_te(big, r).ok, check_te(big, r).to_dict()
    assert float(r.links["utilisation"].max()) <= s.utilisation_ceiling + 1e-9  # type: ignore[attr-defined]


def test_a_generous_limit_still_solves_to_optimality() -> None:
    net = synthetic_backbone(20, seed=2)
    r = solve_te(net, TEOptions(objective="min-mlu", k_paths=4, time_limit_s=120))
    assert r.summary.status == "optimal"
    assert not any("time limit" in n for n in r.summary.notes)


def test_path_search_checks_the_deadline_and_caches_nothing(big: Network) -> None:
    pairs = big.demands[["src", "dst"]]
    with pytest.raises(TimeLimitReached, match="candidate path search"):
        candidate_paths(big, pairs, k_paths=4, deadline=Deadline.after(-1.0))
    # the stopped search left nothing in the cache: the same request completes in full
    ps = candidate_paths(big, pairs.head(50), k_paths=2, deadline=Deadline.after(60.0))
    assert ps.n_paths >= 50
    assert issubclass(TimeLimitReached, SolverError)  # callers that do not recover report a solver error


def test_path_search_in_worker_processes_stops_too(big: Network) -> None:
    pairs = big.demands[["src", "dst"]]
    t0 = time.perf_counter()
    with pytest.raises(TimeLimitReached):
        # far less than the search needs (it spans several kernel calls per worker), so the check
        # between calls in a worker must fire however fast the machine is
        candidate_paths(big, pairs, k_paths=16, workers=2, cache=False, deadline=Deadline.after(0.02))
    assert time.perf_counter() - t0 <= 0.02 + SLACK_S


@pytest.mark.slow
def test_the_te_task_reports_time_limit_and_verifies(big: Network) -> None:
    opts = TEOptions(objective="min-mlu", time_limit_s=0.3, verify=True, impact=False)
    out = run_te_task(big, opts, None, lambda f, m: None)
    assert out.summary.status == "time_limit"
    assert out.summary.verification is not None and out.summary.verification.ok
    assert np.isfinite(out.summary.mlu)


@pytest.mark.parametrize("objective", ["max-throughput", "min-mlu"])
def test_colgen_master_stopped_by_the_limit_falls_back(monkeypatch: pytest.MonkeyPatch, objective: str) -> None:
    """The deadline stopping the *first* restricted master inside the solver (HiGHS' own time limit, no
    solution yet) is a time limit, not a solver error: the solve returns the lowest-latency fallback with
    status ``time_limit`` (this made the default ``backbone te`` exit 4 on the 400-site synthetic backbone,
    whose impact figures run a max-throughput column generation)."""
    from backbone.solver.core.problem import Solution, Status
    from backbone.solver.te import colgen

    def stopped(self: object, name: str, costs: object, bounds: object) -> Solution:
        return Solution(Status.TIME_LIMIT, float("nan"), None, "highs", 0.0, message="Time limit reached")

    monkeypatch.setattr(colgen._ColumnGeneration, "master", stopped)
    net = synthetic_backbone(20, seed=2)  # SLO demands: min-mlu runs the masters too (no flow deviation)
    r = solve_te(net, TEOptions(objective=objective, k_paths=2, method="colgen", time_limit_s=30))
    assert r.summary.status == "time_limit"
    assert r.summary.method == "colgen"
    assert "fallback" in r.summary.model_fields_set
    assert check_te(net, r).ok, check_te(net, r).to_dict()


def _overloaded_small() -> Network:
    """A small backbone whose min-MLU routing is overloaded, so the impact needs a max-throughput solve."""
    net = synthetic_backbone(12, seed=1)
    return net.copy_with(demands=net.demands.assign(demand_gbps=net.demands["demand_gbps"] * 50.0))


def test_the_impact_and_edge_bound_get_what_the_routing_left() -> None:
    """``--time-limit`` bounds the whole te run: with the limit already spent, the edge bound and the
    impact's max-throughput solve are skipped with notes, never given the full limit again."""
    from backbone.solver.tasks.te import add_bound_and_impact

    net = _overloaded_small()
    opts = TEOptions(objective="min-mlu", bound=True, time_limit_s=30.0)
    result = solve_te(net, opts)
    assert result.mlu > 1
    spent = time.perf_counter() - opts.time_limit_s  # as if the routing had taken the whole limit
    t0 = time.perf_counter()
    result = add_bound_and_impact(net, opts, result, spent)
    assert time.perf_counter() - t0 < SLACK_S
    notes = result.summary.notes
    assert "edge bound not computed: the time limit was spent on the routing" in notes
    assert "impact not measured: the time limit was spent on the routing" in notes
    assert {"impact", "edge_bound"}.isdisjoint(result.summary.model_fields_set)

    again = solve_te(net, opts)
    again = add_bound_and_impact(net, opts, again, time.perf_counter())  # the whole limit left: both measured
    assert again.summary.impact is not None and again.summary.impact.unmet_gbps > 0
    assert again.summary.edge_bound is not None and again.summary.edge_bound <= again.mlu + 1e-6


def test_an_edge_solve_stopped_by_the_limit_is_not_reported_as_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stopped edge LP's value is a feasible MLU (or the lowest-latency fallback's), not a lower bound."""
    import backbone.solver.tasks.te as te_task

    net = _overloaded_small()
    opts = TEOptions(objective="min-mlu", bound=True, impact=False, time_limit_s=30.0)
    result = solve_te(net, opts)
    real = te_task.solve_te

    def stopped_edge(n: Network, o: TEOptions, **kw: object) -> object:
        r = real(n, o, **kw)  # type: ignore[arg-type]
        if o.formulation == "edge":
            return r.with_summary(status="time_limit")
        return r

    monkeypatch.setattr(te_task, "solve_te", stopped_edge)
    result = te_task.add_bound_and_impact(net, opts, result, time.perf_counter())
    assert {"edge_bound", "gap_to_edge_bound"}.isdisjoint(result.summary.model_fields_set)
    assert any(n.startswith("edge bound not proven") for n in result.summary.notes)


@pytest.mark.slow
def test_a_kernel_still_compiling_does_not_hold_the_deadline() -> None:
    """A compiled kernel's first call (numba compiles it, minutes on a loaded machine) waits at most until the
    deadline, then stops with a time-limit error that says the kernel was compiling."""
    from backbone.solver.core.deadline import call_compiled

    def slow(x: int) -> int:
        time.sleep(3.0)
        return x + 1

    slow.signatures = []  # type: ignore[attr-defined]  # like a numba dispatcher not compiled yet
    t0 = time.perf_counter()
    with pytest.raises(TimeLimitReached, match="still being compiled"):
        call_compiled(slow, (1,), Deadline.after(0.3), "candidate path search")
    assert time.perf_counter() - t0 < 0.3 + 1.0
    assert call_compiled(slow, (1,), Deadline.after(30), "candidate path search") == 2  # in time: its answer
    assert call_compiled(slow, (1,), None, "candidate path search") == 2


@pytest.mark.slow
def test_the_shipped_scenario_stops_at_a_tiny_limit_even_while_the_path_kernel_compiles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #32: an API te job with k_paths=4 ran 336 s against 120 s, stuck in path search (the first run after
    installing compiles the path kernel). The whole te task, impact included, ends within its limit + slack."""
    from backbone.io import load_scenario
    from backbone.solver.paths import kernels as path_kernels

    net = load_scenario()
    for limit in (0.01, 0.05):
        clear_cache()  # the paths are searched within the limit, not read from an earlier test's cache
        t0 = time.perf_counter()
        s = run_te_task(net, TEOptions(k_paths=4, time_limit_s=limit), None, lambda f, m: None).document()
        assert time.perf_counter() - t0 < limit + SLACK_S
        assert s["status"] == "time_limit" and "time limit" in s["notes"][0]
    real = path_kernels.search_targets

    def compiling(*args: object) -> object:
        time.sleep(10.0)
        return real(*args)

    compiling.signatures = []  # type: ignore[attr-defined]
    monkeypatch.setattr(path_kernels, "search_targets", compiling)
    clear_cache()  # the paths are searched again, so the kernel is called
    t0 = time.perf_counter()
    s = run_te_task(net, TEOptions(k_paths=4, time_limit_s=1.0), None, lambda f, m: None).document()
    assert time.perf_counter() - t0 < 1.0 + SLACK_S
    assert s["status"] == "time_limit" and "still being compiled" in s["notes"][0]
    assert check_te(net, solve_te(net, TEOptions(k_paths=4, time_limit_s=1.0))).ok  # the fallback routing is feasible


@pytest.mark.slow
@pytest.mark.parametrize("formulation", ["path", "edge"])
def test_model_building_checks_the_deadline_between_families(monkeypatch: pytest.MonkeyPatch, formulation: str,
                                                             triangle: Network) -> None:
    """A constraint family that outlasts the deadline stops the build right after it, naming it; solve_te then
    answers with the time-limit routing."""
    from backbone.solver.te import formulations
    from backbone.solver.te.instance import build_instance

    inst = build_instance(triangle)
    formulations.build_formulation(inst, formulation)  # the paths are cached: the limit goes to the families
    real = formulations.capacity_rows

    def slow_capacity_rows(*args: object, **kw: object) -> None:
        time.sleep(1.0)
        real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(formulations, "capacity_rows", slow_capacity_rows)
    with pytest.raises(TimeLimitReached, match="capacity rows"):
        formulations.build_formulation(inst, formulation, deadline=Deadline.after(0.5))
    r, seconds = _timed(triangle, formulation=formulation, time_limit_s=0.5)
    assert r.summary.status == "time_limit" and "capacity rows" in r.summary.notes[0]  # type: ignore[attr-defined]
    assert seconds < 1.0 + SLACK_S  # the family itself runs to its end (1 s here)
