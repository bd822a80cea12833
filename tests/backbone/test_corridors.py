"""Corridors in the model (issue #29 item 4): each link's region-pair corridor, the corridor SRLGs, the directional
Gbps per (corridor, class) with the lit capacity, and the one utilisation function -- all by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from backbone.corridors import (
    CORRIDOR_COLUMNS,
    corridor_srlg_links,
    corridor_traffic,
    link_corridors,
)
from backbone.model import Network
from backbone.utilisation import utilisation
from tests.nets import two_oceans_network as two_oceans


def test_each_link_is_named_by_the_regions_of_its_end_sites() -> None:
    lc = link_corridors(two_oceans())
    assert lc["corridor"].to_dict() == {
        "ny-wdc": "intra-NA", "wdc-la": "intra-NA", "lon-par": "intra-EMEA", "par-mrs": "intra-EMEA",
        "tat-1": "transatlantic", "tat-2": "transatlantic", "tpc": "transpacific", "tyo-sin": "intra-APAC",
        "sin-mrs": "EMEA-APAC"}
    assert lc.loc["tat-2", ["region_a", "region_b"]].tolist() == ["EMEA", "NA"]
    # a -> b heads east: New York -> London yes; Paris -> Washington, LA -> Tokyo (over the antimeridian),
    # Singapore -> Marseille, New York -> Washington no
    assert lc["eastbound"].to_dict() == {"ny-wdc": False, "wdc-la": False, "lon-par": True, "par-mrs": True,
                                         "tat-1": True, "tat-2": False, "tpc": False, "tyo-sin": False,
                                         "sin-mrs": False}


def test_corridor_srlgs_are_the_second_view() -> None:
    rows = corridor_srlg_links(two_oceans())
    assert sorted(zip(rows["corridor"], rows["link"], strict=True)) == [
        ("atlantic", "tat-1"), ("atlantic", "tat-2"), ("red-sea", "sin-mrs")]
    assert set(rows.loc[rows["corridor"] == "red-sea", "name"]) == {"Red Sea"}


def test_corridor_gbps_by_class_and_direction_by_hand() -> None:
    net = two_oceans()
    ab = pd.DataFrame({"checkpoint": {"tat-1": 100.0, "tpc": 30.0}, "training-sync": {"tat-2": 40.0}}).fillna(0.0)
    ba = pd.DataFrame({"checkpoint": {"tat-2": 10.0}, "dataset": {"sin-mrs": 50.0, "ny-wdc": 5.0}}).fillna(0.0)
    t = corridor_traffic(net, ab, ba)
    assert tuple(t.columns) == CORRIDOR_COLUMNS
    got = t.set_index(["view", "corridor", "traffic_class"]).sort_index()
    # transatlantic: checkpoint NY->LON 100 east on tat-1, WDC->PAR 10 east on tat-2 (its b -> a); sync PAR->WDC west
    ta = got.loc[("region", "transatlantic")]
    assert ta.loc["checkpoint", ["eastbound_gbps", "westbound_gbps"]].tolist() == [110.0, 0.0]
    assert ta.loc["training-sync", ["eastbound_gbps", "westbound_gbps"]].tolist() == [0.0, 40.0]
    assert ta.loc["all", ["eastbound_gbps", "westbound_gbps", "gbps", "capacity_gbps", "links"]].tolist() == [
        110.0, 40.0, 150.0, 800.0, 2]
    assert ta.loc["all", "utilisation"] == pytest.approx(110 / 800)
    assert ta.loc["checkpoint", "utilisation"] == pytest.approx(110 / 800)
    assert ta.loc["training-sync", "utilisation"] == pytest.approx(40 / 800)
    assert ta.loc["all", "max_link_utilisation"] == pytest.approx(100 / 400)  # tat-1; tat-2 is max(40, 10) / 400
    assert "dataset" not in ta.index  # a class with no traffic on a corridor has no row
    # transpacific: LA -> Tokyo is westbound
    assert got.loc[("region", "transpacific", "checkpoint"), ["eastbound_gbps", "westbound_gbps"]].tolist() == [0, 30]
    # EMEA-APAC: Marseille -> Singapore (b -> a of sin-mrs) is eastbound; half the cable
    ea = got.loc[("region", "EMEA-APAC", "dataset")]
    assert (ea["eastbound_gbps"], ea["westbound_gbps"], ea["utilisation"]) == (50.0, 0.0, 0.5)
    # Washington -> New York (b -> a of ny-wdc) is eastbound; intra-NA pools both NA links
    na = got.loc[("region", "intra-NA", "all")]
    assert (na["eastbound_gbps"], na["capacity_gbps"], na["utilisation"]) == (5.0, 2000.0, 5.0 / 2000)
    # an idle corridor keeps its 'all' row
    assert got.loc[("region", "intra-EMEA", "all"), "gbps"] == 0.0
    # the SRLG view: the same links, the same sums
    pd.testing.assert_series_equal(got.loc[("srlg", "atlantic", "all")], ta.loc["all"], check_names=False)
    assert got.loc[("srlg", "red-sea", "dataset"), "eastbound_gbps"] == 50.0
    # every link in one region corridor: per class, the corridors add up to the link flows
    region = t[t["view"] == "region"].groupby("traffic_class")["gbps"].sum()
    links_total = ab.sum().add(ba.sum(), fill_value=0.0)
    assert region.drop("all").to_dict() == pytest.approx(links_total.to_dict())
    assert region["all"] == pytest.approx(links_total.sum())
    # region pairs first, each view by lit capacity (ties by name)
    assert t["view"].tolist() == sorted(t["view"].tolist(), key=["region", "srlg"].index)
    assert t.drop_duplicates("corridor")["corridor"].tolist()[:3] == ["intra-EMEA", "intra-NA", "transatlantic"]


def test_one_utilisation_function() -> None:
    assert utilisation(np.array([30.0, 0.0, 5.0]), np.array([50.0, 0.0, 1.0]), np.array([100.0, 0.0, 0.0])).tolist() == [
        0.5, 0.0, np.inf]
    assert utilisation(80.0, 20.0, 100.0) == pytest.approx(0.8)


def test_the_shipped_scenario_has_the_named_corridors(shipped: Network) -> None:
    lc = link_corridors(shipped)
    counts = lc["corridor"].value_counts()
    assert {"transatlantic", "transpacific", "EMEA-APAC", "NA-LATAM", "EMEA-AFRICA", "intra-NA"} <= set(counts.index)
    assert counts.sum() == len(shipped.links)
    assert lc.loc["marea-virginia-beach-bilbao", ["corridor", "eastbound"]].tolist() == ["transatlantic", True]
    srlg = corridor_srlg_links(shipped)
    assert {"corridor-red-sea-suez", "corridor-bab-el-mandeb", "corridor-malacca", "corridor-hormuz"} <= set(
        srlg["corridor"])


def test_the_report_shows_backbone_tbps_by_corridor_and_class() -> None:
    from backbone.report import render_report

    block = {"classes": ["checkpoint", "training-sync"],
             "rows": [{"view": "region pair", "corridor": "transatlantic", "links": 2, "lit_tbps": 0.8,
                       "eastbound_tbps": 0.11, "westbound_tbps": 0.04, "utilisation": 0.1375,
                       "max_link_utilisation": 0.25, "checkpoint": "0.11 / 0.00", "training-sync": "0.00 / 0.04"},
                      {"view": "corridor SRLG", "corridor": "red-sea", "links": 1, "lit_tbps": 0.1,
                       "eastbound_tbps": 0.05, "westbound_tbps": 0.0, "utilisation": 1.2,
                       "max_link_utilisation": 1.2, "checkpoint": "–", "training-sync": "–"}]}
    html = render_report({"title": "t", "corridors": block}, {})
    section = html[html.index("<h2>Backbone Tbps by corridor and class</h2>"):]
    section = section[:section.index("</section>")]
    for words in ("<th class=\"t\">checkpoint Tbps E / W</th>", "<td class=\"t\">transatlantic</td>", "13.8%", "25.0%",
                  "0.11 / 0.00", "0.00 / 0.04", '<tr class="bad">'):
        assert words in section, words
    assert "Backbone Tbps by corridor" not in render_report({"title": "t"}, {})  # no rows, no section
