"""The TE checker passes on real results and fails on deliberately corrupted ones."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from backbone.model import Network
from backbone.solver.checks.te import check_te
from backbone.solver.te import TEOptions, TEResult, solve_te
from tests.nets import grid
from tests.solver.test_te import diamond  # noqa: F401  (a fixture)


@pytest.fixture(scope="module")
def net() -> Network:
    return grid().scale_demand(1.5)


@pytest.fixture(scope="module")
def results(net: Network) -> dict[str, TEResult]:
    return {f"{o}/{f}": solve_te(net, TEOptions(objective=o, formulation=f)) for o in ("min-mlu", "max-throughput", "min-latency")
            for f in ("path", "edge")}


@pytest.mark.slow
def test_checker_passes_on_real_results(net: Network, results: dict[str, TEResult]) -> None:
    for name, r in results.items():
        report = check_te(net, r)
        assert report.ok, f"{name}: {report}"
        assert {"balance", "paths", "conservation", "capacity", "slo", "reasons", "objective"} <= set(report.checked)


def _scale_path(r: TEResult) -> None:
    r.paths.loc[r.paths.index[0], "gbps"] *= 1.5


def _link_flow(r: TEResult) -> None:
    link = r.links["utilisation"].idxmax()
    r.links.loc[link, "flow_ab_gbps"] += 1.0


def _utilisation(r: TEResult) -> None:
    r.links.loc[r.links.index[0], "utilisation"] += 0.1


def _balance(r: TEResult) -> None:
    r.demands.loc[r.demands.index[0], "carried_gbps"] += 0.5


def _path_latency(r: TEResult) -> None:
    r.paths.loc[r.paths.index[0], "latency_ms"] -= 0.5


def _broken_walk(r: TEResult) -> None:
    i = r.paths.index[r.paths["hops"] >= 2][0]
    links = r.paths.loc[i, "path_links"].split(";")
    r.paths.loc[i, "path_links"] = ";".join(reversed(links))


def _wrong_endpoint(r: TEResult) -> None:
    i = r.paths.index[0]
    r.paths.loc[i, "demand"] = r.demands.index[(r.demands["src"] != r.paths.loc[i, "src"])][0]


def _objective(r: TEResult) -> None:
    r.summary = r.summary.updated(objective_value=r.summary.objective_value * 0.9 + 0.01)


def _mlu(r: TEResult) -> None:
    r.summary = r.summary.updated(mlu=r.summary.mlu - 0.05)


def _reason(r: TEResult) -> None:
    d = r.demands.index[0]
    r.demands.loc[d, ["carried_gbps", "unmet_gbps", "reason"]] = [0.0, r.demands.loc[d, "demand_gbps"],
                                                                  "disconnected"]


CORRUPTIONS: dict[str, tuple[Callable[[TEResult], None], str]] = {
    "path flow scaled": (_scale_path, "conservation"),
    "link flow edited": (_link_flow, "capacity"),
    "utilisation edited": (_utilisation, "capacity"),
    "carried edited": (_balance, "balance"),
    "path latency edited": (_path_latency, "paths"),
    "path links out of order": (_broken_walk, "paths"),
    "split moved to another demand": (_wrong_endpoint, "paths"),
    "objective value edited": (_objective, "objective"),
    "summary mlu edited": (_mlu, "objective"),
    "false disconnected reason": (_reason, "reasons"),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("which", ["min-mlu/path", "max-throughput/edge"])
def test_checker_catches_corruption(net: Network, results: dict[str, TEResult], corruption: str,
                                    which: str) -> None:
    r = copy.deepcopy(results[which])
    corrupt, expected_check = CORRUPTIONS[corruption]
    corrupt(r)
    report = check_te(net, r)
    assert not report.ok
    assert expected_check in {v.check for v in report.violations}, str(report)


def test_checker_catches_slo_violation(triangle: Network) -> None:
    r = solve_te(triangle, TEOptions(objective="min-mlu"))
    demands = triangle.demands.copy()
    demands["slo_rtt_ms"] = 3.0  # the A-B-C split (RTT 4 ms) now breaks the SLO
    report = check_te(triangle.copy_with(demands=demands), r)
    assert "slo" in {v.check for v in report.violations}


def test_checker_catches_over_ceiling(diamond: Network) -> None:  # noqa: F811
    r = solve_te(diamond, TEOptions(objective="min-latency", utilisation_ceiling=1.0))
    r.summary = r.summary.updated(utilisation_ceiling=0.5)  # a result claiming a stricter ceiling than it kept
    report = check_te(diamond, r)
    assert "capacity" in {v.check for v in report.violations}


def test_report_serialises(net: Network, results: dict[str, TEResult]) -> None:
    r = copy.deepcopy(results["min-mlu/path"])
    _objective(r)
    d = check_te(net, r).to_dict()
    assert d["ok"] is False and d["violations"][0]["check"] == "objective"
