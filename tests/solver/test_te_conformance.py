"""TE on real data from ../shared/conformance (skipped when absent): B4 with real traffic matrices."""

from __future__ import annotations

import pytest

from backbone.solver.checks.te import check_te
from backbone.solver.te import TEOptions, solve_te
from tests.conftest import conformance_dir

pytestmark = pytest.mark.conformance


@pytest.mark.parametrize("matrix", [0, 17])
def test_b4_real_matrix_path_meets_edge_bound(matrix: int) -> None:
    from backbone.io.nodelink import load_node_link, load_traffic_matrix_csv

    teal = conformance_dir() / "teal"
    b4 = load_node_link(teal / "topologies" / "B4.json", allow_missing_coordinates=True)
    net = b4.copy_with(demands=load_traffic_matrix_csv(teal / "traffic-matrices" / f"B4.json_real_{matrix}_1.0.tm.csv",
                                                       b4))
    path = solve_te(net, TEOptions(objective="min-mlu", formulation="path", k_paths=4))
    edge = solve_te(net, TEOptions(objective="min-mlu", formulation="edge"))
    ecmp = solve_te(net, TEOptions(objective="ecmp"))
    for r in (path, edge, ecmp):
        assert check_te(net, r).ok
    assert path.summary.mlu >= edge.summary.mlu - 1e-9
    assert ecmp.summary.mlu >= edge.summary.mlu - 1e-9
    assert path.summary.unmet_gbps == 0 and path.summary.carried_gbps == pytest.approx(
        net.demands["demand_gbps"].sum())
