"""Training jobs split evenly over three and four sites (issue #29): the least-latency sync ring, its edges and
Gbps, the pruning of 3- and 4-site sets (and the note that names it), and the diagnosis of a job no split can
place; each solved case is re-checked by the independent placement checker.

Costs: ``capex_per_gpu_usd`` per site, no opex (power price 0); ``block_gpus=1``; no metros. Every job here has
1e9 parameters of 2 bytes and a 10 s step, data-parallel, so its ring all-reduce sends, on each ring edge,
``2 M (1 - 1/R) * 8 / t`` = ``2 * 2e9 B * (1 - 1/R) * 8 / 10 s`` = 3.2 (1 - 1/R) Gbps: 2.1333 Gbps for three sites,
2.4 Gbps for four.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.checks.placement import check_placement
from backbone.solver.placement import PlaceOptions, TrainingJob, solve_placement
from backbone.solver.placement.splits import SplitRanking, ring_edges, split_sets
from backbone.workloads import gradient_sync_gbps
from tests.nets import build_network, world_site

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SYNC_3 = 32.0 / 15.0
"""Gbps per ring edge of a 3-site split: 2 * 2e9 * (2/3) * 8 / 10 / 1e9."""
SYNC_4 = 2.4
"""Gbps per ring edge of a 4-site split: 2 * 2e9 * (3/4) * 8 / 10 / 1e9."""


def dc(i: str, lon: float, lat: float, capex: float, gpus_max: int) -> dict[str, Any]:
    """An empty NA datacenter with room for ``gpus_max`` GPUs at ``capex`` USD each and no opex."""
    return world_site(i, lon, lat, "NA", "US", "datacenter", gpus_max=gpus_max, power_max_mw=100.0,
                      power_available_mw=100.0, capex_per_gpu_usd=capex, capex_per_mw_usd=0.0,
                      power_price_usd_per_mwh=0.0, carbon_kg_per_mwh=0.0)


def job(gpus: int, max_sites: int, **kw: Any) -> dict[str, Any]:
    return {"id": "big", "gpus": gpus, "parameters": 1e9, "bytes_per_parameter": 2, "step_time_s": 10.0,
            "max_sites": max_sites, "checkpoint_replicas": "none", **kw}


def link(a: str, b: str) -> dict[str, Any]:
    return {"id": f"{a}-{b}", "site_a": a, "site_b": b, "capacity_gbps": 100}


def triangle_net(max_sites: int, dear: bool = True) -> Network:
    """``x``, ``y``, ``z`` (30k USD/GPU, room for 1,000 GPUs each) on a triangle of links; ``dear`` (60k USD/GPU,
    room for 4,000) linked to ``x``. A 3,000-GPU job fits whole only at ``dear``, split over two nowhere (1,500 per
    site), split over three at ``x``, ``y``, ``z``: 90 M USD against 180 M USD."""
    sites = [dc("x", -95.0, 40.0, 30_000.0, 1000), dc("y", -90.0, 40.0, 30_000.0, 1000),
             dc("z", -92.5, 36.0, 30_000.0, 1000)]
    links = [link("x", "y"), link("y", "z"), link("z", "x")]
    if dear:
        sites.append(dc("dear", -100.0, 40.0, 60_000.0, 4000))
        links.append(link("dear", "x"))
    return build_network({"sites": sites, "links": links, "training_jobs": [job(3000, max_sites)]}, name="tri")


def square_net(extra_site: bool = False) -> Network:
    """``a`` (NW), ``b`` (NE), ``c`` (SW), ``d`` (SE) with links only round the square's edges, each site with room
    for 1,000 GPUs: a 4,000-GPU job fits only split over all four. ``extra_site`` adds ``e`` far west, linked to
    ``c``, so there are five 4-site sets."""
    sites = [dc("a", -100.0, 40.0, 30_000.0, 1000), dc("b", -90.0, 40.0, 30_000.0, 1000),
             dc("c", -100.0, 32.0, 30_000.0, 1000), dc("d", -90.0, 32.0, 30_000.0, 1000)]
    links = [link("a", "b"), link("b", "d"), link("d", "c"), link("c", "a")]
    if extra_site:
        sites.append(dc("e", -118.0, 34.0, 30_000.0, 1000))
        links.append(link("c", "e"))
    return build_network({"sites": sites, "links": links, "training_jobs": [job(4000, 4)]}, name="square")


def solve(net: Network, **options: Any):
    """Solve with ``block_gpus=1``, no residency rules, the scenario's jobs; assert the independent checker."""
    opts = PlaceOptions(**{"block_gpus": 1, "residency": [], "scenario_jobs": True, **options})
    result = solve_placement(net, opts)
    report = check_placement(net, opts, result.tables, expect_full=result.fully_served)
    assert report.ok, report.violations
    return result


def placed(result) -> dict[str, str]:
    t = result.tables["training"]
    return {str(j): "+".join(sorted(g["site"])) for j, g in t.groupby("job")}


def sync_edges(result) -> list[tuple[str, str, float]]:
    f = result.tables["workload_flows"]
    f = f[f["traffic_class"] == "training-sync"]
    return sorted(zip(f["src"], f["dst"], f["gbps"].round(6), strict=True))


def test_the_formula_gives_the_hand_computed_sync_rates() -> None:
    assert float(gradient_sync_gbps(1e9, 2, 10.0, 3)) == pytest.approx(SYNC_3)
    assert float(gradient_sync_gbps(1e9, 2, 10.0, 4)) == pytest.approx(SYNC_4)


def test_a_four_site_ring_takes_the_least_latency_order_and_its_edges() -> None:
    # a square 0-1-3-2 with 1 ms sides and 10 ms diagonals (0-3, 1-2): of the six rings from site 0,
    # 0->1->3->2->0 costs 4 ms (its reverse too; the first listed wins), 0->1->2->3->0 costs 22 ms
    lat = np.array([[0, 1, 1, 10], [1, 0, 10, 1], [1, 10, 0, 1], [10, 1, 1, 0]], dtype=float)
    jobs = pd.DataFrame({"gpus": [4000.0], "max_sites": [4], "sites": [()]}, index=["big"])
    options, counts = split_sets(jobs, np.full(4, 1000.0), np.ones((1, 4), bool), lat, keep=8)
    assert len(options) == 1 and counts[["n_sites", "admissible", "kept"]].values.tolist() == [[4, 1, 1]]
    row = options.iloc[0]
    assert [row["site_a"], row["site_b"], row["site_c"], row["site_d"]] == [0, 1, 3, 2]
    assert row["ring_latency_ms"] == pytest.approx(4.0)
    opt, src, dst = ring_edges(options[["site_a", "site_b", "site_c", "site_d"]].to_numpy(),
                               options["n_sites"].to_numpy())
    assert list(zip(opt, src, dst, strict=True)) == [(0, 0, 1), (0, 1, 3), (0, 3, 2), (0, 2, 0)]
    # two sites give one edge each way, one site none
    ring = np.array([[2, 5, -1, -1], [4, -1, -1, -1]])
    opt, src, dst = ring_edges(ring, np.array([2, 1]))
    assert list(zip(opt, src, dst, strict=True)) == [(0, 2, 5), (0, 5, 2)]


def test_a_three_site_split_is_the_cheapest_choice() -> None:
    three = solve(triangle_net(max_sites=3))
    assert placed(three) == {"big": "x+y+z"}
    assert three.totals["cost_usd"] == pytest.approx(3000 * 30_000.0)
    t = three.tables["training"]
    assert t["gpus"].tolist() == pytest.approx([1000.0] * 3) and set(t["n_sites"]) == {3}
    edges = sync_edges(three)
    assert len(edges) == 3 and {s for s, _d, _g in edges} == {"x", "y", "z"} == {d for _s, d, _g in edges}
    assert [g for _s, _d, g in edges] == pytest.approx([SYNC_3] * 3)
    # each directed ring edge is one link here: each link carries one ring edge's Gbps
    assert three.tables["links"].loc[["x-y", "y-z", "z-x"], "workload_gbps"].tolist() == pytest.approx([SYNC_3] * 3)
    assert not any("restricted placement" in n for n in three.notes)  # one 3-site set: nothing pruned
    # at most two sites, the job must go whole to the dear site: 180 M USD
    two = solve(triangle_net(max_sites=2))
    assert placed(two) == {"big": "dear"}
    assert two.totals["cost_usd"] == pytest.approx(3000 * 60_000.0)
    assert sync_edges(two) == []


def test_a_three_site_split_is_the_only_feasible_choice_and_without_it_the_job_is_diagnosed() -> None:
    assert placed(solve(triangle_net(max_sites=4, dear=False))) == {"big": "x+y+z"}
    r = solve_placement(triangle_net(max_sites=2, dear=False),
                        PlaceOptions(block_gpus=1, residency=[], scenario_jobs=True))
    assert r.totals["training_unplaced"] == pytest.approx(1.0)
    why = [x for x in r.infeasibility if x.startswith("training job big:")]
    assert why == ["training job big: no allowed site or split can host its 3,000 GPUs: capacity: over at most 2 "
                   "site(s) it needs 1,500 GPUs per site, and 0 of its 3 allowed site(s) have room for that (the largest "
                   "1,000); its max_sites 2 rules out a split over 3 sites that would fit"]


def test_a_job_pinned_to_three_sites_spans_exactly_them() -> None:
    # given with the options (the Python and API path); x+y+z would be cheaper, the pins rule
    opts = {"scenario_jobs": False, "training": [TrainingJob(id="pinned", gpus=3000, max_sites=3,
                                                             sites=["x", "y", "dear"], parameters=1e9,
                                                             step_time_s=10.0, checkpoint_replicas="none")]}
    r = solve(triangle_net(max_sites=3), **opts)
    assert placed(r) == {"pinned": "dear+x+y"}
    assert r.totals["cost_usd"] == pytest.approx(1000 * 60_000.0 + 2000 * 30_000.0)
    assert [g for _s, _d, g in sync_edges(r)] == pytest.approx([SYNC_3] * 3)


def test_a_four_site_split_syncs_round_the_square() -> None:
    net = square_net()
    r = solve(net)
    t = r.tables["training"]
    assert set(t["sites"]) == {"a+b+d+c"}  # the ring round the square's edges, not across its diagonals
    assert t["ring_latency_ms"].iloc[0] == pytest.approx(net.links["latency_ms"].sum())
    assert sync_edges(r) == [("a", "b", pytest.approx(SYNC_4)), ("b", "d", pytest.approx(SYNC_4)),
                             ("c", "a", pytest.approx(SYNC_4)), ("d", "c", pytest.approx(SYNC_4))]
    # each flow rides its own link, one way: the link carries 2.4 Gbps
    assert r.tables["links"]["workload_gbps"].tolist() == pytest.approx([SYNC_4] * 4)


def test_pruned_sets_are_named_in_the_notes() -> None:
    r = solve(square_net(extra_site=True), split_sets_per_job=1)
    assert placed(r) == {"big": "a+b+c+d"}  # the kept set: the square, the shortest of the five rings
    note = [n for n in r.notes if n.startswith("restricted placement")]
    assert len(note) == 1
    assert "big: 1 of 5 4-site sets" in note[0] and "optimal over these sets" in note[0]
    # with every set kept there is nothing to say
    assert not any(n.startswith("restricted placement") for n in solve(square_net(extra_site=True)).notes)


def test_the_checker_rederives_the_ring_and_its_rate() -> None:
    net = square_net()
    opts = PlaceOptions(block_gpus=1, residency=[], scenario_jobs=True)
    r = solve(net)
    # a ring across the diagonals: longer than the square's, and its flows are not the ones reported
    bad = dict(r.tables)
    bad["training"] = r.tables["training"].assign(sites="a+d+b+c")
    report = check_placement(net, opts, bad, expect_full=True)
    assert any("another order of its sites makes a ring" in v.message for v in report.violations)
    # sync at the 2-site rate: the formula for R = 4 gives 2.4 Gbps
    two = float(gradient_sync_gbps(1e9, 2, 10.0, 2))
    bad = dict(r.tables)
    bad["workload_flows"] = r.tables["workload_flows"].assign(gbps=two)
    report = check_placement(net, opts, bad, expect_full=True)
    assert any("the formula gives 2.4000" in v.message for v in report.violations)
    # a sync edge missing
    bad = dict(r.tables)
    bad["workload_flows"] = r.tables["workload_flows"].iloc[1:]
    assert not check_placement(net, opts, bad, expect_full=True).ok


def test_why_a_job_cannot_be_placed() -> None:
    from backbone.solver.placement.splits import unplaceable_reasons

    sites = pd.DataFrame({"region": ["NA", "NA", "EMEA"], "gpus_cap": [1000.0, 1000.0, 500.0]},
                         index=["x", "y", "fra"])
    jobs = pd.DataFrame({"gpus": [1000.0, 2000.0, 1000.0, 2000.0, 5000.0],
                         "max_sites": [1, 2, 1, 2, 5],
                         "regions": [("APAC",), (), ("EMEA",), (), ()],
                         "sites": [(), ("x", "fra"), (), (), ("x", "y", "fra", "a", "b")],
                         "datasets": [(), (), (), ("corpus",), ()]},
                        index=["asia", "pinned", "eu", "resident", "wide"])
    resident = np.ones((5, 3), bool)
    resident[3] = False  # the corpus may live nowhere among these sites
    why = unplaceable_reasons(jobs, sites, resident, np.zeros(5, bool))
    assert why["asia"].endswith("its regions (APAC) hold no candidate site")
    assert why["pinned"].endswith("over at most 2 site(s) it needs 1,000 GPUs per site, and 1 of its 2 allowed "
                                  "site(s) have room for that (the largest 1,000) (pinned to x, fra)")  # fra holds 500
    assert why["eu"].endswith("over at most 1 site(s) it needs 1,000 GPUs per site, and 0 of its 1 allowed "
                              "site(s) have room for that (the largest 500)")
    assert why["resident"].endswith("the residency of the datasets it reads (corpus) leaves none of its 3 candidate "
                                    "sites")
    assert why["wide"].endswith("it is pinned to 5 sites; the placement splits a job over at most 4")


def test_a_split_the_backbone_cannot_connect_is_diagnosed() -> None:
    sites = [dc("x", -95.0, 40.0, 30_000.0, 1000), dc("y", -90.0, 40.0, 30_000.0, 1000),
             dc("z", -85.0, 40.0, 30_000.0, 10)]
    net = build_network({"sites": sites, "links": [link("x", "z")], "training_jobs": [job(2000, 2)]}, name="cut")
    r = solve_placement(net, PlaceOptions(block_gpus=1, residency=[], scenario_jobs=True))
    assert r.totals["training_unplaced"] == pytest.approx(1.0)
    assert any(x.startswith("training job big:") and x.endswith("the backbone connects none of the allowed sets of "
                                                                "sites with room for it (no path for its sync)")
               for x in r.infeasibility)


def test_the_checkpoint_leaves_from_the_rings_first_site() -> None:
    # sites listed z, y, x: the ring starts at z, the training table (sorted by site) at x; the checkpoint copy
    # (1e9 parameters x 14 bytes every hour: 0.0311 Gbps) goes from z to the only storage site in another region
    sites = [dc("z", -92.5, 36.0, 30_000.0, 1000), dc("y", -90.0, 40.0, 30_000.0, 1000),
             dc("x", -95.0, 40.0, 30_000.0, 1000),
             world_site("vault", -0.13, 51.51, "EMEA", "GB", "pop", storage_pb=100.0)]
    links = [link("x", "y"), link("y", "z"), link("z", "x"), link("z", "vault")]
    net = build_network({"sites": sites, "links": links,
                         "training_jobs": [job(3000, 3, checkpoint_replicas="other-region")]}, name="ckpt")
    r = solve(net)  # the checker passes
    t = r.tables["training"]
    assert t["sites"].iloc[0].startswith("z+") and t["site"].iloc[0] == "x"
    f = r.tables["workload_flows"]
    ck = f[f["traffic_class"] == "checkpoint"]
    assert list(zip(ck["src"], ck["dst"], strict=True)) == [("z", "vault")]
    assert ck["gbps"].tolist() == pytest.approx([1e9 * 14 * 8 / 3600 / 1e9])


def test_backbone_place_splits_and_notes_the_pruning(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    scen = save_scenario(square_net(extra_site=True), tmp_path / "scen")
    r = CliRunner().invoke(app, ["place", str(scen), "--block-gpus", "1", "--no-lp-bound", "--split-sets-per-job",
                                 "1", "--verify", "--json", "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert {t["sites"] for t in s["training"]} == {"a+b+d+c"}
    assert s["workload_gbps_by_class"] == {"training-sync": pytest.approx(4 * SYNC_4)}
    assert any("big: 1 of 5 4-site sets" in n for n in s["notes"])
    assert s["verification"]["ok"] is True
    flows = pd.read_csv(tmp_path / "out" / "place_workload_flows.csv")
    assert sorted(zip(flows["src"], flows["dst"], strict=True)) == [("a", "b"), ("b", "d"), ("c", "a"), ("d", "c")]


def test_too_many_sets_are_drawn_from_the_most_compact_sites(monkeypatch) -> None:
    from backbone.solver.placement import splits

    monkeypatch.setattr(splits, "MAX_ENUMERATED_SETS", 10)  # 6 eligible sites make 20 3-site sets; 5 make 10
    pos = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 100.0])  # site 5 is far from the rest: the least compact
    lat = np.abs(pos[:, None] - pos[None, :])
    jobs = pd.DataFrame({"gpus": [3000.0], "max_sites": [3], "sites": [()]}, index=["big"])
    options, counts = split_sets(jobs, np.full(6, 1000.0), np.ones((1, 6), bool), lat, keep=2)
    assert counts[["n_sites", "admissible", "kept", "sites_cut"]].values.tolist() == [[3, 10, 2, True]]
    assert 5 not in options[["site_a", "site_b", "site_c"]].to_numpy()
    # the kept sets: the two rings of 4 ms (0-1-2 and its neighbours 1-2-3, 2-3-4 tie at 4 ms: the first two)
    assert options[["site_a", "site_b", "site_c"]].to_numpy().tolist() == [[0, 1, 2], [1, 2, 3]]
    assert options["ring_latency_ms"].tolist() == pytest.approx([4.0, 4.0])
    note = splits.split_notes(jobs, counts, keep=2)
    assert note[0].startswith("restricted placement") and "big: 2 of 10 3-site sets (drawn from its most compact " \
                                                         "sites)" in note[0]


def line_ranking(cost: list[float], capacity: list[float], room: list[float]) -> SplitRanking:
    """A :class:`SplitRanking` for one 3,000-GPU job (1e9 parameters: ``SYNC_3`` Gbps per ring edge of a 3-site
    split) over four sites on a line of links ``0-1``, ``1-2``, ``2-3`` (arcs 0..2 forward, 3..5 back)."""
    S, L = 4, 3
    rows, cols = [], []
    for x in range(S):
        for y in range(S):
            for link in range(min(x, y), max(x, y)):  # the line's only path
                rows.append(x * S + y)
                cols.append(link if x < y else L + link)
    arcs = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(S * S, 2 * L))
    sync = np.zeros((1, 5))
    sync[0, 3] = SYNC_3
    return SplitRanking(job_gpus=np.array([3000.0]), cost_per_gpu_usd=np.array(cost), free_gpus=np.zeros(S),
                        room_gpus=np.array(room), sync_gbps=sync, pair_arcs=arcs,
                        arc_capacity_gbps=np.tile(np.array(capacity), 2))


def test_the_pruning_keeps_a_cheaper_split_that_latency_alone_would_drop() -> None:
    # sites 1, 2, 3 sit 1 ms apart, site 0 10 ms west of site 1 and half the price: the shortest ring is 1+2+3
    # (4 ms), the cheapest set 0+1+2 (1,000 GPUs at 10k + 2,000 at 30k = 70 M USD against 90 M; ring 22 ms)
    pos = np.array([0.0, 10.0, 11.0, 12.0])
    lat = np.abs(pos[:, None] - pos[None, :])
    jobs = pd.DataFrame({"gpus": [3000.0], "max_sites": [3], "sites": [()]}, index=["big"])
    wide = [100.0, 100.0, 100.0]

    def kept(ranking: SplitRanking | None) -> list[list[int]]:
        options, _ = split_sets(jobs, np.full(4, 1000.0), np.ones((1, 4), bool), lat, keep=1, ranking=ranking)
        return sorted(sorted(r) for r in options[["site_a", "site_b", "site_c"]].to_numpy().tolist())

    assert kept(None) == [[1, 2, 3]]  # latency only: the cheaper split is pruned
    cheap = line_ranking([10_000.0, 30_000.0, 30_000.0, 30_000.0], wide, [1000.0] * 4)
    assert cheap.cost_usd(np.array([[0, 1, 2], [1, 2, 3]]), 0).tolist() == pytest.approx([70e6, 90e6])
    assert kept(cheap) == [[0, 1, 2]]
    # a ring whose sync alone overloads a link (0-1 at 2 Gbps < the 2.13 Gbps of each ring edge), or a site whose
    # power feeds fewer GPUs than its share, is ranked after every set that fits
    assert kept(line_ranking([10_000.0, 30_000.0, 30_000.0, 30_000.0], [2.0, 100.0, 100.0], [1000.0] * 4)) \
        == [[1, 2, 3]]
    assert kept(line_ranking([10_000.0, 30_000.0, 30_000.0, 30_000.0], wide, [500.0, 1000.0, 1000.0, 1000.0])) \
        == [[1, 2, 3]]
    # keeping two: the cheapest and the most compact
    options, _ = split_sets(jobs, np.full(4, 1000.0), np.ones((1, 4), bool), lat, keep=2, ranking=cheap)
    assert sorted(sorted(r) for r in options[["site_a", "site_b", "site_c"]].to_numpy().tolist()) == [[0, 1, 2],
                                                                                                       [1, 2, 3]]


def test_placement_keeps_and_picks_a_cheap_split_far_apart() -> None:
    # three dear sites close together (60k USD/GPU) and three cheap ones far apart (30k), 1,000 GPUs each; with one
    # 3-site set kept per job, latency alone would keep the dear cluster (180 M USD); the ranking keeps the cheap
    # spread (90 M USD) and the placement takes it
    sites = [dc("a1", -95.0, 40.0, 60_000.0, 1000), dc("a2", -94.5, 40.0, 60_000.0, 1000),
             dc("a3", -95.0, 39.5, 60_000.0, 1000), dc("b1", -120.0, 45.0, 30_000.0, 1000),
             dc("b2", -110.0, 32.0, 30_000.0, 1000), dc("b3", -80.0, 30.0, 30_000.0, 1000)]
    links = [link("a1", "a2"), link("a2", "a3"), link("a3", "a1"), link("b1", "b2"), link("b2", "b3"),
             link("b3", "b1"), link("a1", "b2")]
    net = build_network({"sites": sites, "links": links, "training_jobs": [job(3000, 3)]}, name="spread")
    r = solve(net, split_sets_per_job=1)
    assert placed(r) == {"big": "b1+b2+b3"}
    assert r.totals["cost_usd"] == pytest.approx(3000 * 30_000.0)
    assert any(n.startswith("restricted placement") and "of least estimated GPU cost" in n for n in r.notes)


def test_backbone_workloads_shows_the_placements_ring_for_pinned_sites(tmp_path) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import save_scenario
    from backbone.workload_traffic import job_placements, workload_demands

    # the square's sites listed across its diagonals: both the model and the placement run the ring round the
    # square from the first listed site, a -> b -> d -> c -> a (its reverse ties; the first order found wins)
    net = square_net()
    pins = {"big": ["a", "d", "b", "c"]}
    assert job_placements(net, pins)["site"].tolist() == ["a", "b", "d", "c"]
    d = workload_demands(net, pins)
    model_edges = sorted(zip(d["src"], d["dst"], d["demand_gbps"].round(6), strict=True))
    opts = {"scenario_jobs": False, "training": [TrainingJob(id="big", gpus=4000, max_sites=4, sites=pins["big"],
                                                             parameters=1e9, step_time_s=10.0,
                                                             checkpoint_replicas="none")]}
    r = solve(net, **opts)
    assert r.tables["training"]["sites"].iloc[0] == "a+b+d+c"
    assert sync_edges(r) == model_edges
    assert [(s, t) for s, t, _g in model_edges] == [("a", "b"), ("b", "d"), ("c", "a"), ("d", "c")]
    # a least-latency ring is kept as given, whichever way round
    assert job_placements(net, {"big": ["a", "c", "d", "b"]})["site"].tolist() == ["a", "c", "d", "b"]
    out = CliRunner().invoke(app, ["workloads", str(save_scenario(net, tmp_path / "sq")), "--at", "big=a,d,b,c"],
                             env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "a+b+d+c" in out.stdout
