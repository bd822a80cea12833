"""Routed Gbps per corridor and traffic class from a TE result (issue #29 item 4): by hand on a known routing, the
class flows adding up to the link loads, and load no listed path accounts for shown as ``unlisted``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from backbone.corridors import UNLISTED_CLASS
from backbone.solver.te import class_link_flows, corridor_table, solve_te
from backbone.solver.te.options import TEOptions
from backbone.solver.te.sections import CorridorRow
from tests.nets import random_te_net, two_oceans_network

DEMANDS = [
    {"id": "ckpt-ny-lon", "src": "ny", "dst": "lon", "demand_gbps": 100, "traffic_class": "checkpoint"},
    {"id": "sync-wdc-par", "src": "wdc", "dst": "par", "demand_gbps": 40, "traffic_class": "training-sync"},
    {"id": "data-lon-ny", "src": "lon", "dst": "ny", "demand_gbps": 30, "traffic_class": "dataset"},
    {"id": "inf-ny-wdc", "src": "ny", "dst": "wdc", "demand_gbps": 20, "traffic_class": "inference"},
    {"id": "ckpt-la-tyo", "src": "la", "dst": "tyo", "demand_gbps": 30, "traffic_class": "checkpoint"},
    {"id": "data-mrs-sin", "src": "mrs", "dst": "sin", "demand_gbps": 50, "traffic_class": "dataset"},
]
"""Each demand has one path at k = 1 (the exact path LP), its direct link: the routing is known."""


def test_corridor_gbps_by_class_on_a_known_routing() -> None:
    net = two_oceans_network(DEMANDS)
    result = solve_te(net, TEOptions(k_paths=1, method="exact"))
    assert result.summary.unmet_gbps == 0
    assert result.mlu == pytest.approx(0.5)  # Marseille -> Singapore: 50 of 100
    t = corridor_table(net, result).set_index(["view", "corridor", "traffic_class"]).sort_index()
    ta = t.loc[("region", "transatlantic")]
    # NY -> London on tat-1 and Washington -> Paris on tat-2 (listed Paris -> Washington) both head east
    assert ta.loc["checkpoint", ["eastbound_gbps", "westbound_gbps"]].tolist() == pytest.approx([100, 0])
    assert ta.loc["training-sync", ["eastbound_gbps", "westbound_gbps"]].tolist() == pytest.approx([40, 0])
    assert ta.loc["dataset", ["eastbound_gbps", "westbound_gbps"]].tolist() == pytest.approx([0, 30])
    assert ta.loc["all", ["eastbound_gbps", "westbound_gbps", "capacity_gbps"]].tolist() == pytest.approx([140, 30, 800])
    assert ta.loc["all", "utilisation"] == pytest.approx(140 / 800)
    assert ta.loc["all", "max_link_utilisation"] == pytest.approx(100 / 400)
    assert "inference" not in ta.index
    assert t.loc[("region", "transpacific", "checkpoint"), "westbound_gbps"] == pytest.approx(30)
    assert t.loc[("region", "EMEA-APAC", "dataset"), "eastbound_gbps"] == pytest.approx(50)
    assert t.loc[("region", "EMEA-APAC", "all"), "utilisation"] == pytest.approx(result.mlu)
    assert t.loc[("region", "intra-NA", "inference"), "westbound_gbps"] == pytest.approx(20)
    assert t.loc[("srlg", "atlantic", "all"), "gbps"] == pytest.approx(170)
    assert t.loc[("srlg", "red-sea", "dataset"), "gbps"] == pytest.approx(50)
    assert UNLISTED_CLASS not in set(t.index.get_level_values("traffic_class"))


@pytest.mark.parametrize("seed", [3, 11])
def test_class_flows_add_up_to_the_link_loads_and_the_corridors_to_the_class_flows(seed: int) -> None:
    net = random_te_net(seed, slo=True)  # bulk and inference demands, several paths each
    result = solve_te(net, TEOptions(k_paths=4))
    ab, ba = class_link_flows(result)
    assert list(ab.columns) == ["inference", "bulk"]
    np.testing.assert_allclose(ab.sum(axis=1), result.links["flow_ab_gbps"], atol=1e-6)
    np.testing.assert_allclose(ba.sum(axis=1), result.links["flow_ba_gbps"], atol=1e-6)
    # each class's flow, by hops: the Gbps of its paths times their hop counts
    cls = result.demands["traffic_class"].reindex(result.paths["demand"]).to_numpy()
    by_hops = (result.paths["gbps"] * result.paths["hops"]).groupby(cls).sum()
    assert (ab + ba).sum().to_dict() == pytest.approx(by_hops.to_dict())
    t = corridor_table(net, result)
    region = t[t["view"] == "region"].groupby("traffic_class")["gbps"].sum()
    assert region.drop("all").to_dict() == pytest.approx((ab + ba).sum().to_dict())


def test_load_no_listed_path_accounts_for_is_unlisted() -> None:
    net = two_oceans_network(DEMANDS)
    result = solve_te(net, TEOptions(k_paths=1, method="exact"))
    dropped = result.paths[result.paths["demand"] == "ckpt-ny-lon"]
    partial = dataclasses.replace(result, paths=result.paths.drop(index=dropped.index))
    ab, ba = class_link_flows(partial)
    assert ab.loc["tat-1", UNLISTED_CLASS] == pytest.approx(100) and ab.loc["tat-1", "checkpoint"] == 0
    assert ab[UNLISTED_CLASS].drop("tat-1").abs().max() == 0 and ba[UNLISTED_CLASS].abs().max() == 0
    t = corridor_table(net, partial).set_index(["view", "corridor", "traffic_class"])
    assert t.loc[("region", "transatlantic", UNLISTED_CLASS), "eastbound_gbps"] == pytest.approx(100)
    assert t.loc[("region", "transatlantic", "all"), "gbps"] == pytest.approx(170)  # the link loads, unchanged


def test_the_report_block_pivots_the_corridor_rows_by_class() -> None:
    from backbone.solver.plan.report_data import corridors_block

    net = two_oceans_network(DEMANDS)
    rows = corridor_table(net, solve_te(net, TEOptions(k_paths=1, method="exact"))).to_dict("records")
    block = corridors_block([CorridorRow.model_validate(r) for r in rows])
    assert block is not None
    assert block.classes == ["inference", "checkpoint", "training-sync", "dataset"]
    by = {(r["view"], r["corridor"]): r for r in block.rows}
    ta = by[("region pair", "transatlantic")]
    assert (ta["lit_tbps"], ta["eastbound_tbps"], ta["westbound_tbps"]) == pytest.approx((0.8, 0.14, 0.03))
    assert (ta["checkpoint"], ta["training-sync"], ta["dataset"], ta["inference"]) == (
        "0.10 / 0.00", "0.04 / 0.00", "0.00 / 0.03", "–")
    assert by[("corridor SRLG", "red-sea")]["dataset"] == "0.05 / 0.00"
    assert len(block.rows) == len([r for r in rows if r["traffic_class"] == "all"])
    assert corridors_block([]) is None


def test_the_facade_result_carries_the_corridor_rows() -> None:
    import backbone

    net = two_oceans_network(DEMANDS)
    result = backbone.solve_te(net, k_paths=1, method="exact")
    rows = result.summary.corridors or []
    assert [row.document() for row in rows] == corridor_table(net, result).to_dict("records")
    ta = next(r for r in rows if r.corridor == "transatlantic" and r.traffic_class == "all")
    assert ta.gbps == pytest.approx(170)


def test_no_demand_and_no_corridor_srlgs_give_idle_region_corridors() -> None:
    net = two_oceans_network()
    net = net.copy_with(srlgs=net.srlgs.iloc[0:0])
    t = corridor_table(net, solve_te(net, TEOptions()))
    assert set(t["view"]) == {"region"} and set(t["traffic_class"]) == {"all"}
    assert t["gbps"].sum() == 0 and t["capacity_gbps"].sum() == net.links["capacity_gbps"].sum()
