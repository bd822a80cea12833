"""``--time-limit`` is a hard limit: path search, model building and the LP all stop at the deadline,
and the solve returns the best feasible answer found with its bound (status ``time_limit``)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from backbone.errors import SolverError
from backbone.model import Network
from backbone.solver.checks.te import check_te
from backbone.solver.deadline import Deadline, TimeLimitReached
from backbone.solver.paths import candidate_paths
from backbone.solver.synthetic import synthetic_backbone
from backbone.solver.tasks.te import TEOptions, run_te_task
from backbone.solver.te import solve_te

SLACK_S = 3.0
"""What a stopped solve may take beyond its limit: the lowest-latency routing, its bound and the tables
(tens of milliseconds here; generous for a loaded 2-core machine)."""


@pytest.fixture(scope="module")
def big() -> Network:
    """A synthetic backbone whose exact solve takes far longer than the limits used here."""
    net = synthetic_backbone(160, seed=3)
    solve_te(synthetic_backbone(12, seed=1), "min-mlu", k_paths=2)  # compile the path kernels outside the timings
    return net


def _timed(net: Network, **kw: object) -> tuple[object, float]:
    t0 = time.perf_counter()
    r = solve_te(net, **kw)  # type: ignore[arg-type]
    return r, time.perf_counter() - t0


@pytest.mark.parametrize("method", ["exact", "colgen", "pop"])
def test_min_mlu_stops_at_the_limit_with_a_feasible_answer_and_a_valid_bound(big: Network, method: str) -> None:
    limit = 0.3
    r, seconds = _timed(big, objective="min-mlu", k_paths=4, method=method, time_limit_s=limit)
    s = r.summary  # type: ignore[attr-defined]
    assert seconds <= limit + SLACK_S
    assert s["status"] == "time_limit"
    assert s["method"] == method
    assert check_te(big, r).ok, check_te(big, r).to_dict()
    assert s["lower_bound"] is not None and 0 < s["lower_bound"] <= s["mlu"] + 1e-12
    assert 0 <= s["gap"] < 1
    # every demand is carried (min-MLU has no capacity limit) unless no path meets its SLO
    d = r.demands  # type: ignore[attr-defined]
    assert set(d.loc[d["unmet_gbps"] > 0, "reason"]) <= {"no_path_within_slo", "disconnected"}
    assert any("time limit" in n for n in s["notes"])


@pytest.mark.parametrize("objective", ["max-throughput", "max-min-fair", "min-latency"])
def test_capped_objectives_stop_at_the_limit_under_their_ceiling(big: Network, objective: str) -> None:
    r, seconds = _timed(big, objective=objective, k_paths=4, method="exact", time_limit_s=0.2)
    s = r.summary  # type: ignore[attr-defined]
    assert seconds <= 0.2 + SLACK_S
    assert s["status"] == "time_limit"
    assert check_te(big, r).ok, check_te(big, r).to_dict()
    assert float(r.links["utilisation"].max()) <= s["utilisation_ceiling"] + 1e-9  # type: ignore[attr-defined]


def test_a_generous_limit_still_solves_to_optimality() -> None:
    net = synthetic_backbone(20, seed=2)
    r = solve_te(net, "min-mlu", k_paths=4, time_limit_s=120)
    assert r.summary["status"] == "optimal"
    assert not any("time limit" in n for n in r.summary["notes"])


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


def test_the_te_task_reports_time_limit_and_verifies(big: Network) -> None:
    opts = TEOptions(objective="min-mlu", time_limit_s=0.3, verify=True, impact=False)
    out = run_te_task(big, opts, None, lambda f, m: None)
    assert out.summary["status"] == "time_limit"
    assert out.summary["verification"]["ok"]
    assert np.isfinite(out.summary["mlu"])
