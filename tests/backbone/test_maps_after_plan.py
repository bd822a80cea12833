"""The map after a plan shows what was bought: new routes and upgraded links in their own styles with legend
entries, and the sites that gained GPUs labelled with how many."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from backbone.maps import map_values, render_map_bytes
from backbone.maps import style as map_style
from backbone.model import Network


@pytest.fixture(scope="module")
def bought(shipped: Network) -> tuple[Network, dict[str, Any]]:
    new = list(shipped.candidates.index[:3])
    after = shipped.with_candidates_built(dict.fromkeys(new, 1))
    upgraded = str(shipped.links.index[5])
    doc = {"map": {"link_values": {"added_gbps": {**dict.fromkeys(new, 400.0), upgraded: 800.0}},
                   "built_candidates": new,
                   "site_values": {"gpus_added": {"lagos-ikeja": 3072.0, "nairobi": 2048.0}}}}
    return after, doc


def test_upgraded_links_are_the_added_capacity_that_is_not_a_new_route(bought: tuple[Network, dict]) -> None:
    after, doc = bought
    mv = map_values(after, doc)
    assert mv.upgraded_links == (str(after.links.index[5]),)
    assert set(mv.built_candidates) == set(doc["map"]["built_candidates"])
    assert list(mv.gpus_added.index) == ["lagos-ikeja", "nairobi"]


@pytest.mark.slow
def test_the_static_map_draws_and_names_what_was_bought(bought: tuple[Network, dict]) -> None:
    after, doc = bought
    svg = render_map_bytes(after, "svg", doc, size="1600x900").decode()
    assert "New route (built candidate): 3" in svg
    assert "Upgraded link (modules added): 1" in svg
    assert map_style.UPGRADED in svg and map_style.BUILT in svg
    assert "Lagos +3,072 GPUs" in svg and "Nairobi +2,048 GPUs" in svg
    plain = render_map_bytes(after, "svg", {"map": {}}, size="1600x900").decode()
    assert "Upgraded link" not in plain and "+3,072 GPUs" not in plain and map_style.UPGRADED not in plain


def test_the_interactive_map_marks_upgraded_links_and_labels_the_gpus(bought: tuple[Network, dict]) -> None:
    after, doc = bought
    html = render_map_bytes(after, "html", doc).decode()
    data = json.loads(re.search(r'<script id="map-data" type="application/json">(.*?)</script>', html, re.S)[1])
    links = {r["id"]: r for r in data["links"]}
    assert links[str(after.links.index[5])]["upgraded"] and not links[str(after.links.index[5])]["built"]
    assert all(links[c]["built"] and not links[c]["upgraded"] for c in doc["map"]["built_candidates"])
    assert {"Lagos +3,072 GPUs", "Nairobi +2,048 GPUs"} <= {r["name"] for r in data["labels"]}
    assert "Upgraded link (modules added)" in html
