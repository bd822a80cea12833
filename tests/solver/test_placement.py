"""Placement: small instances with hand-computed optimal placements, over every MIP backend.

Cost arithmetic used throughout (defaults: 1.4 kW/GPU all-in, 5-year horizon):
opex per GPU at 100 USD/MWh = 1.4e-3 MW x 8760 h x 5 y x 100 USD/MWh = 6,132 USD, so an added GPU
costs 46,132 USD at PAR (capex 40,000) and 36,132 USD at LON (capex 30,000).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from backbone.errors import InfeasibleError, ValidationError
from backbone.solver.backends import available_backends
from backbone.solver.checks.placement import check_placement
from backbone.solver.placement import PlaceOptions, solve_placement
from backbone.solver.placement.formulation import build_placement
from backbone.solver.placement.inputs import build_inputs
from backbone.solver.placement.options import DIURNAL_PROFILE, REGION_UTC_OFFSET_H
from backbone.solver.tasks.place import run_place_task
from tests.nets import europe

PAR_GPU = 46_132.0
LON_GPU = 36_132.0
MIP_BACKENDS = available_backends(mip=True)


HAND_GBPS_PER_GPU = 0.1
"""The hand-computed cases below charge 0.1 Gbps per GPU (round numbers), not the derived default."""


def solve_checked(net, **options: Any):
    """Solve (at :data:`HAND_GBPS_PER_GPU` unless given), assert the independent checker passes, return the result."""
    opts = PlaceOptions(**{"gbps_per_gpu": HAND_GBPS_PER_GPU, **options})
    result = solve_placement(net, opts)
    report = check_placement(net, opts, result.tables, expect_full=result.fully_served)
    assert report.ok, report.violations
    return result


def added(result) -> dict[str, float]:
    s = result.tables["sites"]["gpus_added"]
    return {k: float(v) for k, v in s.items() if v > 0}


# ---------------------------------------------------------------------- hand-computed optima
@pytest.mark.parametrize("backend", MIP_BACKENDS)
def test_residency_forces_the_costlier_site(backend: str) -> None:
    # Without rules LON (cheaper) serves Paris: one 1,024-GPU block at 36,132 USD per GPU.
    free = solve_checked(europe(), residency=[], backend=backend)
    assert added(free) == {"LON": 1024}
    assert free.totals["cost_usd"] == pytest.approx(1024 * LON_GPU)
    # Default rules keep French (EU) demand in EU sites: PAR only, 1,024 x 46,132 USD.
    eu = solve_checked(europe(), backend=backend)
    assert added(eu) == {"PAR": 1024}
    assert eu.totals["cost_usd"] == pytest.approx(1024 * PAR_GPU)
    assert eu.status == "optimal" and eu.gap is not None and eu.gap <= 1e-4
    assert eu.lp_bound is not None and eu.lp_bound <= eu.objective + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("backend", MIP_BACKENDS)
def test_network_capacity_forbids_the_cheapest_site(backend: str) -> None:
    # 1,000 GPUs served at LON put 1000 x 0.1 = 100 Gbps on par-lon; it has 50.
    # Blocks of 1,024: LON alone cannot serve, LON + PAR costs two blocks, PAR alone one block.
    r = solve_checked(europe(cap_gbps=50), residency=[], backend=backend)
    assert added(r) == {"PAR": 1024}
    assert r.totals["cost_usd"] == pytest.approx(1024 * PAR_GPU)
    # GPU by GPU: LON serves what the link carries (500), PAR the rest.
    r1 = solve_checked(europe(cap_gbps=50), residency=[], block_gpus=1, backend=backend)
    assert added(r1) == {"LON": 500, "PAR": 500}
    assert r1.totals["cost_usd"] == pytest.approx(500 * LON_GPU + 500 * PAR_GPU)
    assert r1.tables["links"].at["par-lon", "utilisation"] == pytest.approx(1.0)


def test_existing_traffic_shares_the_link() -> None:
    # A scenario demand PAR -> LON of 30 Gbps leaves 20 Gbps in that direction: LON serves 200 GPUs.
    d = [dict(id="bulk", src="PAR", dst="LON", demand_gbps=30, traffic_class="bulk")]
    r = solve_checked(europe(cap_gbps=50, demands=d), residency=[], block_gpus=1)
    assert added(r) == {"LON": 200, "PAR": 800}
    assert r.totals["cost_usd"] == pytest.approx(200 * LON_GPU + 800 * PAR_GPU)
    assert r.tables["existing"]["gbps"].sum() == pytest.approx(30)
    # ignoring the scenario's traffic (baseline none) LON serves 500 again
    r0 = solve_checked(europe(cap_gbps=50, demands=d), residency=[], block_gpus=1, baseline="none")
    assert added(r0) == {"LON": 500, "PAR": 500}


@pytest.mark.parametrize("backend", MIP_BACKENDS)
def test_n_plus_one_adds_capacity(backend: str) -> None:
    base = solve_checked(europe(), residency=[], block_gpus=1, backend=backend)
    assert added(base) == {"LON": 1000}
    assert base.totals["cost_usd"] == pytest.approx(1000 * LON_GPU)
    # losing either site, the other must carry all 1,000 GPUs: 1,000 at each.
    n1 = solve_checked(europe(), residency=[], block_gpus=1, n_plus_one=True, backend=backend)
    assert added(n1) == {"LON": 1000, "PAR": 1000}
    assert n1.totals["cost_usd"] == pytest.approx(1000 * (LON_GPU + PAR_GPU))


def test_n_plus_one_three_sites_spreads_backup() -> None:
    # A third site AMS (capex 35,000 -> 41,132 USD/GPU) within SLO. Losing any site f, the other two
    # must hold 1,000: c_a + c_b >= 1000 for every pair. GPU by GPU the optimum spreads 500 per site
    # (cost 500 x (36,132 + 41,132 + 46,132) = 61,698,000 < 1,000 at the two cheapest = 77,264,000).
    ams = dict(id="AMS", lon=4.9, lat=52.37, region="EMEA", country="NL", kind="datacenter", gpus_max=5000,
               power_available_mw=10, power_max_mw=20, power_price_usd_per_mwh=100, capex_per_gpu_usd=35_000)
    net = europe(extra_sites=[ams], extra_links=[dict(id="par-ams", site_a="PAR", site_b="AMS", capacity_gbps=1000)])
    r = solve_checked(net, residency=[], block_gpus=1, n_plus_one=True)
    assert added(r) == {"AMS": 500, "LON": 500, "PAR": 500}
    assert r.totals["cost_usd"] == pytest.approx(500 * (LON_GPU + PAR_GPU + 41_132.0))
    # In 1,024-GPU blocks every pair still needs >= 1,000, so two sites get a block each (the two
    # cheapest): 1,024 x (36,132 + 41,132); three blocks would cost more.
    r2 = solve_checked(net, residency=[], block_gpus=1024, n_plus_one=True)
    assert added(r2) == {"AMS": 1024, "LON": 1024}
    assert r2.totals["cost_usd"] == pytest.approx(1024 * (LON_GPU + 41_132.0))


def test_power_is_built_when_short() -> None:
    # PAR has 0.7 MW spare; 1,000 GPUs need 1.4 MW: build 0.7 MW at 10 M USD/MW.
    r = solve_checked(europe(par=dict(power_available_mw=0.7, power_max_mw=2.0)), block_gpus=1)
    assert added(r) == {"PAR": 1000}
    assert r.tables["sites"].at["PAR", "mw_built"] == pytest.approx(0.7)
    assert r.totals["cost_usd"] == pytest.approx(1000 * PAR_GPU + 0.7 * 10e6)


def test_minimum_build_and_blocks() -> None:
    r = solve_checked(europe(), block_gpus=1024, min_build_gpus=2048)
    assert added(r) == {"PAR": 2048}
    assert r.totals["cost_usd"] == pytest.approx(2048 * PAR_GPU)
    with pytest.raises(Exception, match="multiple of block_gpus"):
        PlaceOptions(block_gpus=1000, min_build_gpus=1500)


def test_the_rounding_cut_prices_the_idle_remainder_of_a_block() -> None:
    """Paris needs 1,000 GPUs, only PAR may serve them, GPUs come in blocks of 1,024. The LP relaxation used to
    buy 1,000 GPUs' worth of fractional blocks (46.13 M USD); with the rounding cut (``gpu_rounding_rows``) it
    must also pay for the 24 GPUs every plan leaves idle, at the cheapest site (LON): 1000 x PAR + 24 x LON.
    The optimum is unchanged: one block at PAR, 1024 x PAR."""
    r = solve_checked(europe(), block_gpus=1024)
    assert r.status == "optimal" and added(r) == {"PAR": 1024}
    assert r.objective == pytest.approx(1024 * PAR_GPU)
    assert r.lp_bound == pytest.approx(1000 * PAR_GPU + 24 * LON_GPU)
    rows = build_placement(build_inputs(europe(), PlaceOptions(gbps_per_gpu=HAND_GBPS_PER_GPU, block_gpus=1024)))
    assert rows.lp.constraints["gpu_rounding"].size == 1  # one row per period with demand beyond the installed


def test_installed_gpus_are_used_first() -> None:
    r = solve_checked(europe(par=dict(gpus_installed=600, power_available_mw=10)), block_gpus=1)
    assert added(r) == {"PAR": 400}
    assert r.tables["sites"].at["PAR", "gpus_after"] == 1000


def test_follow_the_sun_shares_capacity_across_time_zones() -> None:
    # Two batch metros on one site, in NA and APAC: peak hour needs 2,000 GPUs; hourly profile
    # needs the largest hourly sum of the two offset profiles.
    metros = [dict(id="na", lon=2.35, lat=48.86, region="NA", inference_gpus=1000, interactive_share=0.0),
              dict(id="ap", lon=2.35, lat=48.86, region="APAC", inference_gpus=1000, interactive_share=0.0)]
    net = europe(metros=metros)
    peak = solve_checked(net, residency=[], block_gpus=1, deny_sites=["LON"])
    assert added(peak) == {"PAR": 2000}
    p = np.asarray(DIURNAL_PROFILE)
    t = np.arange(24)
    hourly = 1000 * (p[(t + REGION_UTC_OFFSET_H["NA"]) % 24] + p[(t + REGION_UTC_OFFSET_H["APAC"]) % 24])
    need = float(np.ceil(hourly.max() - 1e-9))
    sun = solve_checked(net, residency=[], block_gpus=1, deny_sites=["LON"], periods=24)
    assert added(sun) == {"PAR": need}
    assert need < 2000
    assert sun.totals["served_share"] == pytest.approx(1.0)


def test_training_job_goes_to_the_cheapest_allowed_site() -> None:
    # 2,048 training GPUs plus Paris inference (EU-resident at PAR): training goes to LON.
    r = solve_checked(europe(), block_gpus=1024, training=[dict(id="llm", gpus=2048)])
    assert added(r) == {"PAR": 1024, "LON": 2048}
    assert r.tables["training"][["job", "site", "gpus", "n_sites"]].to_dict("records") == [
        {"job": "llm", "site": "LON", "gpus": 2048.0, "n_sites": 1}]
    # restricted to PAR: shares PAR with inference (3 blocks = 3,072 >= 3,048)
    r2 = solve_checked(europe(), block_gpus=1024, training=[dict(id="llm", gpus=2048, sites=["PAR"])])
    assert added(r2) == {"PAR": 3072}


def test_max_served_within_budget() -> None:
    budget = 500 * LON_GPU
    r = solve_checked(europe(), objective="max-served", budget_usd=budget, residency=[], block_gpus=1)
    assert r.totals["served_share"] == pytest.approx(0.5)
    assert r.totals["cost_usd"] <= budget + 1e-6
    assert added(r) == {"LON": 500}
    with pytest.raises(Exception, match="budget_usd"):
        PlaceOptions(objective="max-served")


# ---------------------------------------------------------------------- infeasible, explained
def test_metro_out_of_reach_is_named() -> None:
    metros = [dict(id="paris", lon=2.35, lat=48.86, region="EMEA", country="FR", inference_gpus=100,
                   interactive_share=1.0),
              dict(id="sydney", lon=151.2, lat=-33.9, region="APAC", country="AU", inference_gpus=100,
                   interactive_share=1.0)]
    net = europe(metros=metros)
    with pytest.raises(InfeasibleError) as exc:
        run_place_task(net, PlaceOptions(block_gpus=1, allow_partial=False), None, lambda f, m: None)
    text = " ".join(exc.value.reasons)
    assert "sydney" in text and "50 ms" in text and "paris" not in text
    partial = run_place_task(net, PlaceOptions(block_gpus=1), None, lambda f, m: None)  # the default
    s = partial.document()
    assert s["status"] == "partial" and s["infeasibility"]
    assert s["unserved_metros"] == [{"metro": "sydney", "class": "interactive", "demand_gpus": 100.0,
                                     "unserved_gpus": 100.0}]
    assert s["gpus_added_by_site"] == {"PAR": 100}
    assert s["served_share"] == pytest.approx(0.5)


def test_residency_blocking_every_site_is_explained() -> None:
    r = solve_placement(europe(), PlaceOptions(deny_sites=["PAR"]))
    assert r.infeasibility and "residency" in r.infeasibility[0] and "paris" in r.infeasibility[0]


def test_power_cap_is_named() -> None:
    # PAR can power 1 MW / 1.4 kW = 714 GPUs; EU residency forbids LON.
    r = solve_placement(europe(par=dict(power_available_mw=0.5, power_max_mw=1.0)), PlaceOptions(block_gpus=1))
    assert any("PAR" in x and "power cap" in x for x in r.infeasibility), r.infeasibility
    assert r.tables["sites"].at["PAR", "gpus_added"] == 714


def test_gpu_maximum_is_named() -> None:
    r = solve_placement(europe(par=dict(gpus_max=800)), PlaceOptions(block_gpus=1))
    assert any("PAR" in x and "GPU maximum" in x for x in r.infeasibility), r.infeasibility


def test_default_traffic_per_gpu_is_derived_from_tokens() -> None:
    from backbone.solver.placement.options import BITS_PER_TOKEN

    o = PlaceOptions()
    assert o.gbps_per_gpu == pytest.approx(o.tokens_per_s_per_gpu * BITS_PER_TOKEN / 1e9)
    assert 0.001 < o.gbps_per_gpu < 0.05  # a few Mbps per GPU: 2,500 tokens/s of ~100 kbps streams of ~50 tokens/s


def test_link_bottleneck_is_named() -> None:
    r = solve_placement(europe(cap_gbps=50), PlaceOptions(residency=[], deny_sites=["PAR"], block_gpus=1,
                                                          gbps_per_gpu=HAND_GBPS_PER_GPU))
    assert any("par-lon" in x and "bottleneck" in x for x in r.infeasibility), r.infeasibility
    assert r.totals["served_share"] == pytest.approx(0.5)


def test_bad_options_are_validation_errors() -> None:
    with pytest.raises(ValidationError) as exc:
        solve_placement(europe(), PlaceOptions(deny_sites=["NOPE"], allow_regions=["MARS"]))
    fields = {p.field for p in exc.value.problems}
    assert {"deny_sites", "allow_regions"} <= fields


def test_summary_json_has_the_contract_keys(tmp_path) -> None:
    from backbone.solver.tasks import run_task

    res = run_task("place", europe(cap_gbps=50), {"residency": [], "block_gpus": 1, "verify": True,
                                                  "gbps_per_gpu": HAND_GBPS_PER_GPU}, tmp_path)
    s = res.document()
    for key in ("status", "objective", "gap", "cost_usd", "gpus_by_site", "served_share", "assignments", "map",
                "lp_bound", "infeasibility"):
        assert key in s
    assert s["verification"]["ok"]
    assert {a["site"] for a in s["assignments"]} == {"LON", "PAR"}
    assert set(s["map"]["site_values"]["gpus_added"]) == {"PAR", "LON"}
    assert sum(a["gpus"] for a in s["map"]["assignments"]) == pytest.approx(1000)
    assert (tmp_path / "place.json").exists() and (tmp_path / "place_sites.csv").exists()
    assert res.files.count("place.json") == 1


def test_tokens_growth_and_carbon_price() -> None:
    # 2.5 M tokens/s at 2,500 tokens/s per GPU = 1,000 GPUs, x 1.5 growth = 1,500 GPUs at PAR.
    # Carbon 400 kg/MWh at 100 USD/t adds 40 USD/MWh: opex per GPU = 1.4e-3 x 8760 x 5 x 140 = 8,584.8.
    r = solve_checked(europe(), block_gpus=1, tokens_per_s={"paris": 2.5e6}, tokens_per_s_per_gpu=2500,
                      demand_growth=1.5, carbon_price_usd_per_t=100)
    assert added(r) == {"PAR": 1500}
    assert r.totals["cost_usd"] == pytest.approx(1500 * (40_000 + 8_584.8))


def test_allow_and_deny_lists() -> None:
    # Only NA sites allowed: none hosts Paris -> explained; deny LON with no rules -> PAR.
    r = solve_placement(europe(extra_sites=[dict(id="NYC", lon=-74.0, lat=40.7, region="NA", kind="datacenter",
                                                 gpus_max=5000, power_available_mw=10)]),
                        PlaceOptions(residency=[], allow_regions=["NA"], block_gpus=1))
    assert set(r.tables["sites"].index) == {"NYC"}
    assert r.infeasibility and "paris" in r.infeasibility[0]
    r2 = solve_checked(europe(), residency=[], deny_sites=["LON"], block_gpus=1)
    assert added(r2) == {"PAR": 1000}


def test_rounded_relaxation_is_a_valid_plan() -> None:
    # LP relaxation of the link-limited case builds fractional blocks; rounding up and re-solving the
    # rest gives a valid plan no cheaper than the MIP optimum.
    from backbone.solver.core.problem import solve
    from backbone.solver.placement.formulation import build_placement
    from backbone.solver.placement.inputs import build_inputs
    from backbone.solver.placement.result import result_tables, round_relaxation

    net = europe(cap_gbps=50)
    opts = PlaceOptions(residency=[], block_gpus=256, training=[dict(id="t", gpus=300)], gbps_per_gpu=HAND_GBPS_PER_GPU)
    inp = build_inputs(net, opts)
    relaxed = solve(build_placement(inp).lp.relaxed(), time_limit_s=30)
    model, sol = round_relaxation(inp, relaxed, opts)
    tables = result_tables(model, sol)
    assert check_placement(net, opts, tables).ok
    assert (tables["sites"]["gpus_added"] % 256 == 0).all()
    best = solve_checked(net, residency=[], block_gpus=256, training=[dict(id="t", gpus=300)])
    assert tables["sites"]["capex_usd"].sum() + tables["sites"]["opex_usd"].sum() >= best.totals["cost_usd"] - 1e-6
    assert len(tables["training"]) == 1


@pytest.mark.slow
def test_slo_failures_keeps_inference_where_a_single_failure_cannot_break_its_slo() -> None:
    """PAR-LON is one link; Paris's access site PAR also reaches AMS. Losing par-lon leaves LON
    unreachable from Paris, so with ``slo_failures="link"`` the cheaper LON may not serve Paris:
    PAR does. A diverse route LON-AMS makes LON robust again (PAR-AMS-LON stays within 50 ms)."""
    ams = [dict(id="AMS", lon=4.90, lat=52.37, kind="pop", region="EMEA", country="NL")]
    par_ams = [dict(id="par-ams", site_a="PAR", site_b="AMS", capacity_gbps=1000)]
    single = europe(extra_sites=ams, extra_links=par_ams)
    assert added(solve_checked(single, residency=[])) == {"LON": 1024}
    robust = solve_checked(single, residency=[], slo_failures="link")
    assert added(robust) == {"PAR": 1024}
    assert any("slo_failures=link" in n for n in robust.notes)
    assert robust.tables["assignments"]["slo_survives_failures"].all()
    # with PAR not allowed, the fragile LON still serves Paris (better than not at all), flagged as such
    fallback = solve_checked(single, residency=[], slo_failures="link", deny_sites=["PAR"])
    assert added(fallback) == {"LON": 1024} and fallback.fully_served
    assert not fallback.tables["assignments"]["slo_survives_failures"].any()
    diverse = europe(extra_sites=ams, extra_links=[*par_ams, dict(id="lon-ams", site_a="LON", site_b="AMS",
                                                                capacity_gbps=1000)])
    assert added(solve_checked(diverse, residency=[], slo_failures="link")) == {"LON": 1024}
