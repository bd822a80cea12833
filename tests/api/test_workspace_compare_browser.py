"""The workspace's Compare view in headless Chromium: a scenario and its second version (a link's capacity raised, a
link added, one removed) compared through the picker and by a deep link: the changed link is in the structure table,
coloured by its change on the map and highlighted when its row is picked; a viewer token opens the same link.
``BACKBONE_SCREENSHOTS=1`` saves docs/img/workspace-compare.png."""

from __future__ import annotations

import sys
import time
from typing import Any

import httpx
import pytest
from apitest_helpers import auth

from backbone.io import network_to_dict
from tests.api import test_workspace_browser as workspace
from tests.nets import small_world_network

# the live server, the browser and the offline tab of the workspace's browser tests (one live server per module)
live = workspace.live
browser = workspace.browser
page = workspace.page
screenshot = workspace.screenshot
sign_in = workspace.sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]


def _doc(capacity: float, links: list[tuple[str, str, str, str]]) -> dict[str, Any]:
    sites = [("nyc", "New York", -74.0, 40.7, "NA"), ("bos", "Boston", -71.1, 42.4, "NA"),
             ("chi", "Chicago", -87.6, 41.9, "NA"), ("lon", "London", -0.1, 51.5, "EMEA")]
    return {"name": "compare: two versions",
            "sites": [{"id": i, "name": n, "lon": lon, "lat": lat, "region": r, "kind": "datacenter"}
                      for i, n, lon, lat, r in sites],
            "links": [{"id": "nyc-bos", "site_a": "nyc", "site_b": "bos", "capacity_gbps": capacity}]
            + [{"id": i, "site_a": a, "site_b": b, "capacity_gbps": 800, "kind": k} for i, a, b, k in links],
            "demands": [{"id": "d1", "src": "nyc", "dst": "lon", "demand_gbps": 300}]}


@pytest.fixture(scope="module")
def two_versions(live: dict[str, Any]) -> str:
    """A scenario at version 1, and version 2 with nyc-bos raised from 400 to 1,000 Gbps, chi-lon added and
    bos-chi removed (saved through the API with If-Match, as the workspace's editor saves)."""
    url, headers = live["server"].url, auth(live["token"])
    v1 = _doc(400, [("bos-chi", "bos", "chi", "terrestrial"), ("nyc-lon", "nyc", "lon", "submarine")])
    created = httpx.post(f"{url}/v1/scenarios", json=v1, headers=headers, timeout=60)
    assert created.status_code == 201, created.text
    sid, etag = created.json()["id"], created.json()["etag"]
    v2 = _doc(1000, [("nyc-lon", "nyc", "lon", "submarine"), ("chi-lon", "chi", "lon", "submarine")])
    saved = httpx.put(f"{url}/v1/scenarios/{sid}", json=v2, headers={**headers, "If-Match": etag}, timeout=60)
    assert saved.status_code == 200 and saved.json()["version"] == 2, saved.text
    return str(sid)


def _changes(page: Any) -> dict[str, str]:
    """The change drawn on the compare map for each link and site id (the map's own source data)."""
    return dict(page.evaluate(
        "() => window.backboneCompareMap.querySourceFeatures('compare')"
        ".map((f) => [f.properties.id, f.properties.change])"))


def _wait_map(page: Any) -> None:
    page.wait_for_function("() => window.backboneCompareMap && window.backboneCompareMap.getSource('compare')"
                           " && window.backboneCompareMap.loaded()"
                           " && window.backboneCompareMap.querySourceFeatures('compare').length >= 3")


def test_compare_two_versions_from_the_picker(page: Any, live: dict[str, Any], two_versions: str) -> None:
    sid = two_versions
    sign_in(page, live)
    page.wait_for_selector("#compare-link")
    page.focus("#compare-link")
    page.keyboard.press("Enter")  # keyboard only, from the link to the Compare button
    page.wait_for_selector("#compare-form")
    page.select_option("#compare-before-scenario", sid)
    page.wait_for_selector("#compare-before-version option[value='2']", state="attached")
    page.select_option("#compare-before-version", "1")
    page.select_option("#compare-after-scenario", sid)
    page.wait_for_selector("#compare-after-version option[value='2']", state="attached")
    page.select_option("#compare-after-version", "2")
    page.focus("#compare-go")
    page.keyboard.press("Enter")
    page.wait_for_function("(h) => location.hash === h", arg=f"#/compare/scenario/{sid}/1/{sid}/2")
    row = page.locator("#compare-structure tbody tr[data-table='links'][data-id='nyc-bos'][data-field='capacity_gbps']")
    row.wait_for()
    assert row.get_attribute("data-change") == "changed"
    cells = row.locator("td").all_inner_texts()
    assert cells[:6] == ["links", "nyc-bos", "changed", "capacity_gbps", "400", "1,000"], cells
    # at 1280x800 the structural table fits its pane, unit column included: no sideways scroll (a long field name
    # such as max_capacity_gbps breaks after an underscore)
    fits = page.evaluate("""() => { const b = document.getElementById('compare-body');
                                    const t = document.getElementById('compare-structure');
                                    return [b.scrollWidth - b.clientWidth, t.parentElement.scrollWidth - t.parentElement.clientWidth,
                                            Math.round(t.getBoundingClientRect().right - b.getBoundingClientRect().right)]; }""")
    assert max(fits) <= 1, fits
    assert page.locator("#compare-structure tbody tr[data-id='chi-lon']").get_attribute("data-change") == "added"
    assert page.locator("#compare-structure tbody tr[data-id='bos-chi']").get_attribute("data-change") == "removed"
    # the map: each changed link in its change's colour (the removed one drawn from version 1), the legend counts
    _wait_map(page)
    changes = _changes(page)
    assert changes["nyc-bos"] == "capacity up" and changes["chi-lon"] == "added" and changes["bos-chi"] == "removed"
    assert "nyc-lon" not in changes
    legend = page.inner_text("#compare-legend")
    assert "capacity up: 1" in legend and "added: 1" in legend and "removed (dashed): 1" in legend
    page.wait_for_timeout(800)  # the map's last frame (framed on the changes)
    screenshot(page, "workspace-compare.png")
    # picking the row (keyboard) highlights the link on the map and selects its row
    row.focus()
    page.keyboard.press("Enter")
    assert "nyc-bos" in str(page.evaluate("() => window.backboneCompareMap.getFilter('selected-line')"))
    assert "selected" in (row.get_attribute("class") or "")
    assert page.locator("#compare-kpis").count() == 0  # two scenarios: structure only, as the API's note says
    assert "structural changes only" in page.inner_text("#compare-body")
    # back to the scenario: the workspace's map and tables return
    page.click(f".scenario-link[data-id='{sid}']")
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='chi-lon']")
    assert page.locator("#compare").count() == 0
    assert page.problems == []


def test_a_viewer_opens_a_compare_link(page: Any, live: dict[str, Any], two_versions: str) -> None:
    sid = two_versions
    out = live["server"].cli("token", "create", "--scope", "viewer", "--team", "Network Planning", "--name", "dave")
    assert out.returncode == 0, out.stderr
    page.goto(f"{live['server'].url}/#/compare/scenario/{sid}/1/{sid}/2")
    page.fill("#token", out.stdout.split()[-1])
    page.click("button[type=submit]")
    row = page.locator("#compare-structure tbody tr[data-table='links'][data-id='nyc-bos'][data-field='capacity_gbps']")
    row.wait_for()
    assert "viewer" in page.inner_text("#identity").lower()
    _wait_map(page)
    assert _changes(page)["nyc-bos"] == "capacity up"
    # a reload keeps the view (the deep link), with the picker showing the two sides
    page.reload()
    row.wait_for()
    assert page.input_value("#compare-before-version") == "1" and page.input_value("#compare-after-version") == "2"
    assert page.problems == []


def test_a_missing_version_is_a_message(page: Any, live: dict[str, Any], two_versions: str) -> None:
    sid = two_versions
    sign_in(page, live, f"#/compare/scenario/{sid}/1/{sid}/9")
    page.wait_for_selector("#compare-error")
    assert "404" in page.inner_text("#compare-error")
    assert [p for p in page.problems if "404" not in p] == []


def _finished_plan(live: dict[str, Any], sid: str, options: dict[str, Any]) -> str:
    url, headers = live["server"].url, auth(live["token"])
    job = httpx.post(f"{url}/v1/scenarios/{sid}/jobs", json={"kind": "plan", "options": options}, headers=headers,
                     timeout=60).json()
    deadline = time.monotonic() + 600
    while job["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(1)
        job = httpx.get(f"{url}/v1/jobs/{job['id']}", headers=headers, timeout=30).json()
    assert job["status"] == "succeeded", job
    return str(job["id"])


def test_compare_two_plan_jobs_and_download_the_deck(page: Any, live: dict[str, Any]) -> None:
    """Two plans of one scenario (the second with 30 % more demand): the KPI and failure changes as the API's job
    diff gives them, picked from the job lists, and the review deck downloaded with the token as a header."""
    url, headers = live["server"].url, auth(live["token"])
    created = httpx.post(f"{url}/v1/scenarios", json=network_to_dict(small_world_network()), headers=headers, timeout=60)
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    a = _finished_plan(live, sid, {"maps": False})
    b = _finished_plan(live, sid, {"maps": False, "demand_growth": 1.3})
    served = httpx.get(f"{url}/v1/jobs/{b}/diff", params={"against": a}, headers=headers, timeout=120).json()
    changed = [k for k in served["kpis"] if k["sign"] in ("+", "-") or (k["before"] is None) != (k["after"] is None)]
    assert changed  # the premise: more demand changes some KPI
    sign_in(page, live, "#/compare")
    page.wait_for_selector("#compare-form")
    page.select_option("#compare-mode", "job")
    page.wait_for_selector(f"#compare-before-job option[value='{a}']", state="attached")
    page.select_option("#compare-before-job", a)
    page.select_option("#compare-after-job", b)
    page.click("#compare-go")
    page.wait_for_function("(h) => location.hash === h", arg=f"#/compare/job/{a}/{b}")
    page.wait_for_selector("#compare-kpis tbody tr")
    kpis = page.locator("#compare-kpis tbody tr")
    assert kpis.count() == len(changed)
    assert kpis.first.locator("td").first.inner_text() == changed[0]["kpi"]
    assert page.locator("#compare-failures").count() == 1  # two plans: the failure states that changed (maybe none)
    assert page.locator("#compare-failures tbody tr").count() == len(served["failures"])
    with page.expect_download() as info:
        page.click("#compare-deck")
    deck = info.value
    assert deck.suggested_filename == f"review-{b}.pptx"
    with open(deck.path(), "rb") as f:
        assert f.read(2) == b"PK"  # a zip: the .pptx
    assert live["token"] not in deck.url
    assert page.problems == []
