"""The workspace's Results view in headless Chromium: a failures job's sweep as a ranked table whose worst row puts
the map in that failure state (its failed link drawn as failed, the row selected, a deep link that reopens it), a
te job's links coloured by the utilisation the API serves with a legend and a hover card, and the map as a PNG.
``BACKBONE_SCREENSHOTS=1`` saves the views to docs/img/."""

from __future__ import annotations

import base64
import sys
import time
import urllib.parse
from typing import Any

import httpx
import pytest
from apitest_helpers import auth
from test_workspace_browser import browser, live, page, screenshot, sign_in  # noqa: F401, F811 (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]


def _ring() -> dict[str, Any]:
    """Four US sites in a ring; the New York-Boston link carries 500 Gbps of the 1,000 it has, the others have 400
    each, so cutting it leaves 100 Gbps unmet (the worst state) and cutting any other link costs nothing."""
    sites = [("nyc", -74.0, 40.7), ("bos", -71.1, 42.4), ("chi", -87.6, 41.9), ("was", -77.0, 38.9)]
    links = [("nyc-bos", "nyc", "bos", 1000), ("bos-chi", "bos", "chi", 400), ("chi-was", "chi", "was", 400),
             ("was-nyc", "was", "nyc", 400)]
    return {"name": "results ring",
            "sites": [{"id": s, "name": s.upper(), "lon": lon, "lat": lat, "region": "NA", "kind": "pop"}
                      for s, lon, lat in sites],
            "links": [{"id": i, "name": i, "site_a": a, "site_b": b, "capacity_gbps": c} for i, a, b, c in links],
            "demands": [{"id": "nyc-bos", "src": "nyc", "dst": "bos", "traffic_class": "bulk", "demand_gbps": 500},
                        {"id": "chi-was", "src": "chi", "dst": "was", "traffic_class": "bulk", "demand_gbps": 100}]}


def _finished_job(live: dict[str, Any], scenario: str, kind: str, options: dict[str, Any]) -> dict[str, Any]:
    url, headers = live["server"].url, auth(live["token"])
    job = httpx.post(f"{url}/v1/scenarios/{scenario}/jobs", json={"kind": kind, "options": options},
                     headers=headers, timeout=60).json()
    deadline = time.monotonic() + 300
    while job["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
        job = httpx.get(f"{url}/v1/jobs/{job['id']}", headers=headers, timeout=30).json()
    assert job["status"] == "succeeded", job
    return job


@pytest.fixture(scope="module")
def ring_jobs(live: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    """The ring scenario with a finished te job and a finished link-failure sweep."""
    created = httpx.post(f"{live['server'].url}/v1/scenarios", json=_ring(), headers=auth(live["token"]), timeout=120)
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    return {"te": _finished_job(live, sid, "te", {}),
            "failures": _finished_job(live, sid, "failures", {"kind": "link", "engine": "serial"})}


def _api(live: dict[str, Any], path: str) -> Any:
    return httpx.get(f"{live['server'].url}/{path}", headers=auth(live["token"]), timeout=30)


def test_click_the_worst_failure_shows_it_on_the_map(page: Any, live: dict[str, Any],  # noqa: F811
                                                     ring_jobs: dict[str, Any]) -> None:
    job = ring_jobs["failures"]
    worst = _api(live, f"v1/jobs/{job['id']}/result").json()["scenarios"][0]
    assert worst["failed"] == ["nyc-bos"] and worst["unmet_gbps"] > 0  # the API's worst state (the premise)
    sign_in(page, live, f"#/job/{job['id']}")
    page.wait_for_selector("#failure-table tbody tr")
    rows = page.locator("#failure-table tbody tr")
    assert rows.count() == 4
    assert rows.first.get_attribute("data-scenario") == worst["scenario"]
    rows.first.click()
    page.wait_for_selector(f"#failure-table tr.selected[data-scenario='{worst['scenario']}']")
    page.wait_for_function("(s) => decodeURIComponent(location.hash).endsWith('/failure/' + s)", arg=worst["scenario"])
    assert page.inner_text("#failed-elements") == "nyc-bos"
    assert page.inner_text("#state-unmet") == f"{worst['unmet_gbps']:,.0f} Gb/s"
    assert "bulk" in page.inner_text("#unmet-by-class")
    # on the map: the failed link drawn as failed, the others coloured by this state's utilisation as served
    assert page.evaluate("JSON.stringify(window.backboneMap.getFilter('failed-links'))").find('"nyc-bos"') >= 0
    states = _api(live, f"v1/jobs/{job['id']}/files/failures_state_links.csv").text.splitlines()
    served = {line.split(",")[1]: float(line.split(",")[2]) for line in states[1:]
              if line.startswith(f"{worst['scenario']},") and line.split(",")[2]}
    page.wait_for_function("() => window.backboneMap.querySourceFeatures('links')"
                           ".some((f) => typeof f.properties.utilisation === 'number')")
    drawn = page.evaluate("Object.fromEntries(window.backboneMap.querySourceFeatures('links')"
                          ".filter((f) => typeof f.properties.utilisation === 'number')"
                          ".map((f) => [f.properties.id, f.properties.utilisation]))")
    assert drawn and all(drawn[k] == pytest.approx(served[k]) for k in drawn)
    assert page.is_visible("#utilisation-legend")
    page.wait_for_timeout(800)
    screenshot(page, "workspace-failure.png")
    # the deep link reopens the state
    page.reload()
    page.wait_for_selector(f"#failure-table tr.selected[data-scenario='{worst['scenario']}']")
    assert page.inner_text("#failed-elements") == "nyc-bos"
    assert urllib.parse.unquote(page.evaluate("location.hash")) == f"#/job/{job['id']}/failure/{worst['scenario']}"
    # "fail to worst case" from the plain job view selects the same state
    page.goto(f"{live['server'].url}/#/job/{job['id']}")
    page.wait_for_selector("#failure-table tr:not(.selected)[data-scenario='" + worst["scenario"] + "']")
    page.click("#fail-worst")
    page.wait_for_selector(f"#failure-table tr.selected[data-scenario='{worst['scenario']}']")
    assert page.problems == []


def test_te_results_colour_links_by_utilisation(page: Any, live: dict[str, Any],  # noqa: F811
                                                ring_jobs: dict[str, Any]) -> None:
    job = ring_jobs["te"]
    lines = _api(live, f"v1/jobs/{job['id']}/files/te_links.csv").text.splitlines()
    header = lines[0].split(",")
    served = {r[0]: dict(zip(header, r, strict=True)) for r in (line.split(",") for line in lines[1:])}
    sign_in(page, live, f"#/job/{job['id']}")
    page.wait_for_selector("#utilisation-legend")
    assert "Utilisation" in page.inner_text("#utilisation-legend")
    assert page.locator("#busiest-links tbody tr").count() == 4
    busiest = page.locator("#busiest-links tbody tr").first
    link = busiest.get_attribute("data-id")
    assert busiest.locator("td").nth(1).inner_text() == f"{float(served[link]['utilisation']) * 100:,.2f}".rstrip("0").rstrip(".") + " %"
    page.wait_for_function("() => window.backboneMap.loaded() && window.backboneMap.querySourceFeatures('links')"
                           ".some((f) => typeof f.properties.utilisation === 'number')")
    # hover the busiest link: its card shows the utilisation and the loads the API served
    point = page.evaluate("""(id) => {
        const m = window.backboneMap;
        const f = m.querySourceFeatures('links').find((x) => x.properties.id === id);
        const c = f.geometry.coordinates; const mid = [(c[0][0] + c[c.length - 1][0]) / 2, (c[0][1] + c[c.length - 1][1]) / 2];
        m.jumpTo({ center: mid, zoom: 5 });
        const p = m.project(mid); const r = m.getCanvas().getBoundingClientRect();
        return [p.x + r.left, p.y + r.top]; }""", link)
    page.wait_for_timeout(500)
    page.mouse.move(point[0] - 3, point[1])
    page.mouse.move(point[0], point[1])
    page.wait_for_selector(".hover-card .result-figures [data-figure=utilisation]")
    assert "%" in page.inner_text(".hover-card .result-figures [data-figure=utilisation]")
    assert page.locator(".hover-card .result-figures [data-figure='load a→b Gb/s']").count() == 1
    screenshot(page, "workspace-utilisation.png")
    with page.expect_download() as download:
        page.click("#map-png")
    assert download.value.suggested_filename == f"backbone-job-{job['id']}.png"
    with open(download.value.path(), "rb") as handle:
        data = handle.read()
    assert data[:8] == base64.b64decode("iVBORw0KGgo=") and len(data) > 10_000  # a PNG of a drawn map
    assert page.problems == []


def test_failure_sweep_chart_hover_and_click(page: Any, live: dict[str, Any],  # noqa: F811
                                             ring_jobs: dict[str, Any]) -> None:
    """The sweep's impact chart: a column per state in the API's order, its hover card with the figures the sweep
    served, a click that selects the state as its table row does, and the chart as an SVG file."""
    job = ring_jobs["failures"]
    states = _api(live, f"v1/jobs/{job['id']}/result").json()["scenarios"]
    sign_in(page, live, f"#/job/{job['id']}")
    page.wait_for_selector("#failure-impact-chart .chart-column")
    columns = page.locator("#failure-impact-chart .chart-column")
    assert [columns.nth(i).get_attribute("data-category") for i in range(columns.count())] == [s["scenario"] for s in states]
    worst = columns.first
    worst.scroll_into_view_if_needed()
    worst.hover()
    card = page.locator("#failure-impact-chart .chart-card")
    card.wait_for(state="visible")
    assert f"impact: {states[0]['impact_gbps']:,.0f} Gb/s" in card.inner_text()
    assert f"unmet: {states[0]['unmet_gbps']:,.0f} Gb/s" in card.inner_text()
    worst.click()
    page.wait_for_selector(f"#failure-table tr.selected[data-scenario='{states[0]['scenario']}']")
    page.wait_for_function("(s) => decodeURIComponent(location.hash).endsWith('/failure/' + s)", arg=states[0]["scenario"])
    with page.expect_download() as download:
        page.click("#failure-impact-chart .chart-svg-download")
    assert download.value.suggested_filename == "failure-impact-chart.svg"
    with open(download.value.path(), "rb") as handle:
        data = handle.read()
    assert data.startswith(b"<?xml") and states[0]["scenario"].encode() in data
    assert page.problems == []
