"""The independent placement checker passes on solved plans and catches corrupted ones."""

from __future__ import annotations

import pytest

from backbone.solver.checks.placement import check_placement
from backbone.solver.placement import PlaceOptions, solve_placement
from tests.nets import europe

# the hand-built cases charge 0.1 Gbps per GPU (round numbers; the default is derived from tokens, ~0.0066)

NYC = dict(id="NYC", lon=-74.0, lat=40.7, region="NA", country="US", kind="datacenter", gpus_max=5000,
           power_available_mw=10, power_max_mw=20, capex_per_gpu_usd=20_000)
TAT = dict(id="tat", site_a="LON", site_b="NYC", kind="submarine", capacity_gbps=1000)


@pytest.fixture(scope="module")
def solved():
    """Paris (interactive 50 ms + batch 150 ms) with NYC reachable for batch only, link 50 Gbps."""
    metros = [dict(id="paris", lon=2.35, lat=48.86, region="EMEA", country="FR", inference_gpus=1000,
                   interactive_share=0.6)]
    net = europe(cap_gbps=50, metros=metros, extra_sites=[NYC], extra_links=[TAT])
    opts = PlaceOptions(residency=[], block_gpus=1, n_plus_one=True, gbps_per_gpu=0.1)
    return net, opts, solve_placement(net, opts)


def copy_tables(result):
    return {k: v.copy() for k, v in result.tables.items()}


def test_checker_passes_on_the_solution(solved) -> None:
    net, opts, r = solved
    rep = check_placement(net, opts, r.tables)
    assert rep.ok, rep.violations
    assert rep.counts["n_plus_one_failures"] == 3
    # batch may cross the Atlantic (RTT ~80 ms < 150), interactive may not
    f = r.tables["flows"]
    assert set(f.loc[f["class"] == "interactive", "site"]) <= {"PAR", "LON"}


def test_catches_assignment_beyond_slo(solved) -> None:
    net, opts, r = solved
    t = copy_tables(r)
    f = t["flows"]
    i = f.index[f["class"] == "interactive"][0]
    f.loc[i, ["site", "links"]] = ["NYC", "par-lon;tat"]
    rep = check_placement(net, opts, t)
    assert any("exceeds the interactive SLO" in v for v in rep.messages), rep.violations


def test_catches_broken_path(solved) -> None:
    net, opts, r = solved
    t = copy_tables(r)
    t["flows"].loc[t["flows"].index[0], "links"] = "tat"
    rep = check_placement(net, opts, t)
    assert any("not a path" in v for v in rep.messages)


def test_catches_site_over_power_cap(solved) -> None:
    net, opts, r = solved
    t = copy_tables(r)
    s = t["sites"]
    s.loc["PAR", ["gpus_added", "gpus_after"]] = [s.at["PAR", "gpus_added"] + 20000, s.at["PAR", "gpus_after"] + 20000]
    rep = check_placement(net, opts, t)
    text = " ".join(rep.messages)
    assert "exceed the site maximum" in text and "MW" in text


def test_catches_overloaded_link(solved) -> None:
    net, opts, r = solved
    t = copy_tables(r)
    f = t["flows"]
    remote = f.index[f["links"].str.contains("par-lon")]
    assert len(remote)
    f.loc[remote, "gbps"] *= 3
    f.loc[remote, "gpus"] *= 3
    rep = check_placement(net, opts, t)
    assert any("over its 50 Gbps capacity" in v for v in rep.messages), rep.violations


def test_catches_unserved_demand_and_n_plus_one_gap(solved) -> None:
    net, opts, r = solved
    t = copy_tables(r)
    s = t["sites"]
    biggest = s["gpus_added"].idxmax()
    s.loc[biggest, ["gpus_added", "gpus_after"]] = 0.0
    s.loc[biggest, "capex_usd"] = 0.0
    t["flows"] = t["flows"][t["flows"]["site"] != biggest]
    rep = check_placement(net, opts, t)
    text = " ".join(rep.messages)
    assert "GPUs served" in text and "N+1" in text


def test_catches_residency_violation() -> None:
    net = europe()
    opts = PlaceOptions(residency=[], block_gpus=1)  # plan made without rules (LON serves Paris)
    r = solve_placement(net, opts)
    assert check_placement(net, opts, r.tables).ok
    rep = check_placement(net, PlaceOptions(block_gpus=1), r.tables)  # checked against the EU rule
    assert any("residency forbids" in v for v in rep.messages)


def test_catches_partial_blocks() -> None:
    net = europe()
    opts = PlaceOptions(block_gpus=1024)
    r = solve_placement(net, opts)
    t = copy_tables(r)
    t["sites"].loc["PAR", ["gpus_added", "gpus_after"]] = [1000.0, 1000.0]
    rep = check_placement(net, opts, t)
    assert any("1024-GPU blocks" in v for v in rep.messages)


def test_unprotectable_demand_is_served_and_declared() -> None:
    # New York has one site within 50 ms (NYC): it is served, and the loss of NYC is reported, not hidden
    metros = [dict(id="paris", lon=2.35, lat=48.86, region="EMEA", country="FR", inference_gpus=1000,
                   interactive_share=1.0),
              dict(id="newyork", lon=-74.0, lat=40.7, region="NA", country="US", inference_gpus=300,
                   interactive_share=1.0)]
    net = europe(metros=metros, extra_sites=[NYC], extra_links=[TAT])
    opts = PlaceOptions(residency=[], block_gpus=1, n_plus_one=True, allow_partial=True, gbps_per_gpu=0.1)
    r = solve_placement(net, opts)
    assert r.tables["metros"].loc["newyork/interactive", "served_gpus"] == pytest.approx(300)
    assert r.tables["n_plus_one"].loc["NYC", "shortfall_gpus"] == pytest.approx(300)
    assert any("losing site NYC" in x and "newyork" in x for x in r.infeasibility)
    assert not r.fully_served
    rep = check_placement(net, opts, r.tables, expect_full=False)
    assert rep.ok, rep.violations
    # understating the declared shortfall is caught
    t = copy_tables(r)
    t["n_plus_one"].loc["NYC", "shortfall_gpus"] = 0.0
    rep = check_placement(net, opts, t, expect_full=False)
    assert any("losing site NYC" in v for v in rep.messages)
