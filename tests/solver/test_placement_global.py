"""Placement on the shipped global scenario: proven optimal, independently verified, explained."""

from __future__ import annotations

import pytest

from backbone.model import Network
from backbone.solver.checks.placement import check_placement
from backbone.solver.placement import PlaceOptions, solve_placement


@pytest.mark.slow
def test_shipped_scenario(shipped: Network) -> None:
    assert shipped.metros["inference_gpus"].sum() > 0, "the shipped scenario has no inference demand"
    opts = PlaceOptions(time_limit_s=60)
    r = solve_placement(shipped, opts)
    assert r.status == "optimal" and r.gap is not None and r.gap <= 1e-4
    assert r.lp_bound is not None and r.lp_bound <= r.objective * (1 + 1e-9)
    assert r.totals["gpus_added"] > 0 and r.totals["cost_usd"] > 0
    report = check_placement(shipped, opts, r.tables, expect_full=r.fully_served)
    assert report.ok, report.violations[:5]
    # unserved demand is explained: metros with no site within their SLO by name, the rest by the
    # sites / links whose limits stand in the way
    m = r.tables["metros"]
    unserved = m[m["unserved_gpus"] > 1e-6]
    assert r.fully_served == unserved.empty
    # the defaults serve every metro (Lagos and Nairobi from their own AI-ready colocation campuses)
    assert r.fully_served and not r.infeasibility, r.infeasibility
    served_from = r.tables["flows"].groupby("metro")["site"].agg(set)
    # Lagos's interactive demand is served from its own campus. (Its batch demand may also come from Johannesburg,
    # 81 ms away, within the batch SLO: the optimum with the scenario's training jobs placed, the default since
    # issue #29, does so; every flow's SLO is checked by check_placement above.)
    f = r.tables["flows"]
    assert set(f.loc[(f["metro"] == "lagos") & (f["class"] == "interactive"), "site"]) == {"lagos-ikeja"}
    assert "lagos-ikeja" in served_from["lagos"] and "nairobi-embakasi" in served_from["nairobi"]
    # Istanbul and Bogota (53-55 ms from the nearest hyperscale campus) are served within the interactive
    # SLO: Bogota from its own colocation campus, Istanbul over the Balkan route or from its campus
    flows = r.tables["flows"]
    near = flows[flows["metro"].isin(["istanbul", "bogota"]) & (flows["class"] == "interactive")]
    assert set(near["metro"]) == {"istanbul", "bogota"} and (near["rtt_ms"] <= 50.0).all(), near
    assert "bogota-mosquera" in served_from["bogota"]
    no_site = unserved[unserved["sites"] == ""]
    for metro in no_site["metro"].unique():
        assert any(f"metro {metro}:" in reason for reason in r.infeasibility), (metro, r.infeasibility)
    if len(unserved) > len(no_site):
        assert any(("GPU maximum" in x or "power cap" in x or "bottleneck" in x) for x in r.infeasibility)
    # EU demand stays in EU/EEA sites (default residency)
    from backbone.solver.placement.options import EU_EEA_COUNTRIES

    f = r.tables["flows"]
    eu_metros = shipped.metros.index[shipped.metros["country"].isin(EU_EEA_COUNTRIES)]
    eu_flows = f[f["metro"].isin(eu_metros)]
    assert len(eu_flows) and shipped.sites.loc[eu_flows["site"], "country"].isin(EU_EEA_COUNTRIES).all()
