"""The roadmap job's timeline in headless Chromium: per quarter what is bought and what comes online, backbone and GPU
capex apart, survivability with the violated states named and the design status, as the job's roadmap.json serves
them; a hover card on each chart, the charts as SVG and PNG downloads, and the job's report and review deck fetched
with the token as a header. ``BACKBONE_SCREENSHOTS=1`` saves docs/img/workspace-timeline.png."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import httpx
import pytest
from apitest_helpers import auth
from test_workspace_browser import SCREENSHOTS, browser, live, page, sign_in  # noqa: F401, F811 (fixtures)

from backbone.io import network_to_dict
from backbone.validate import build_network

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]

FAST_ROADMAP = {"periods": 3, "growth_per_year": {}, "maps": False, "failures": {"workers": 1},
                "place": {"time_limit_s": 5}}
"""Three quarters, no growth, no maps: a roadmap of the toy below in seconds."""


def timeline_toy() -> dict[str, Any]:
    """New York (a data centre with room for GPUs, serving a metro's inference) and Boston over one link in a
    conduit SRLG; candidate route C1 (lead time 2 quarters) is its only protection. So 2027Q1 buys GPUs and C1, both
    online in 2027Q3; the conduit's failure is violated in 2027Q1, excused in 2027Q2 (C1 cannot be online yet) and
    survived in 2027Q3."""
    dc = {"kind": "datacenter", "region": "NA", "gpus_max": 4096, "power_available_mw": 10, "power_max_mw": 10,
          "capex_per_gpu_usd": 20000, "power_price_usd_per_mwh": 60}
    net = build_network({
        "sites": [{"id": "A", "name": "New York", "lon": -74.0, "lat": 40.7, "region": "NA", "metro": "M", **dc},
                  {"id": "B", "name": "Boston", "lon": -71.1, "lat": 42.4, "region": "NA"}],
        "links": [{"id": "L1", "site_a": "A", "site_b": "B", "capacity_gbps": 100, "module_gbps": 100,
                   "module_cost_usd": 1e6, "max_capacity_gbps": 400}],
        "candidates": [{"id": "C1", "site_a": "A", "site_b": "B", "kind": "terrestrial", "link_kind": "terrestrial",
                        "waypoints": "-73 41.8", "module_gbps": 100, "module_cost_usd": 2e6, "fixed_cost_usd": 5e6,
                        "max_modules": 2, "lead_time_quarters": 2}],
        "demands": [{"id": "d1", "src": "A", "dst": "B", "demand_gbps": 50, "traffic_class": "bulk"}],
        "srlgs": [{"id": "s1", "kind": "conduit", "links": "L1"}],
        "metros": [{"id": "M", "lon": -74.0, "lat": 40.7, "region": "NA", "inference_gpus": 1000}]},
        name="timeline toy")
    return network_to_dict(net)


@pytest.fixture(scope="module")
def roadmap_job(live: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    """A succeeded roadmap job of the toy, with its result (roadmap.json as the API serves it)."""
    url, headers = live["server"].url, auth(live["token"])
    created = httpx.post(f"{url}/v1/scenarios", json=timeline_toy(), headers=headers, timeout=120)
    assert created.status_code == 201, created.text
    job = httpx.post(f"{url}/v1/scenarios/{created.json()['id']}/jobs",
                     json={"kind": "roadmap", "options": FAST_ROADMAP}, headers=headers, timeout=60).json()
    deadline = time.monotonic() + 300
    while job["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
        job = httpx.get(f"{url}/v1/jobs/{job['id']}", headers=headers, timeout=30).json()
    assert job["status"] == "succeeded", job
    result = httpx.get(f"{url}/v1/jobs/{job['id']}/result", headers=headers, timeout=30).json()
    return {"job": job, "result": result}


def _money(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _downloaded(page: Any, selector: str) -> tuple[str, bytes]:
    with page.expect_download() as download:
        page.click(selector)
    with open(download.value.path(), "rb") as handle:
        return download.value.suggested_filename, handle.read()


def test_roadmap_timeline_per_quarter(page: Any, live: dict[str, Any], roadmap_job: dict[str, Any]) -> None:  # noqa: F811
    job, doc = roadmap_job["job"], roadmap_job["result"]
    periods = {p["period"]: p for p in doc["periods"]}
    # the premise: GPUs and C1 bought in 2027Q1, online in 2027Q3; the conduit violated in 2027Q1, survived in 2027Q3
    assert list(periods) == ["2027Q1", "2027Q2", "2027Q3"]
    assert periods["2027Q1"]["gpu_capex_usd"] > 0 and periods["2027Q1"]["network_capex_usd"] > 0
    assert periods["2027Q1"]["survivability"]["violated"] == ["srlg:s1"]
    assert not periods["2027Q3"]["survivability"]["violated"]
    sign_in(page, live, f"#/job/{job['id']}")
    page.wait_for_selector("#roadmap-timeline #timeline-table tbody tr")
    rows = page.locator("#timeline-table tbody tr")
    assert [rows.nth(i).get_attribute("data-period") for i in range(rows.count())] == list(periods)
    q1 = page.locator("#timeline-table tr[data-period='2027Q1']")
    assert q1.locator("[data-col=backbone-capex]").inner_text() == _money(periods["2027Q1"]["network_capex_usd"])
    assert q1.locator("[data-col=gpu-capex]").inner_text() == _money(periods["2027Q1"]["gpu_capex_usd"])
    bought = q1.locator("[data-col=bought]").inner_text()
    assert "C1" in bought and "GPUs at A" in bought
    assert q1.locator("[data-col=violated]").inner_text() == "srlg:s1"
    assert "srlg:s1" in page.locator("#timeline-table tr[data-period='2027Q2'] [data-col=excused]").inner_text()
    q3 = page.locator("#timeline-table tr[data-period='2027Q3']")
    assert "C1" in q3.locator("[data-col=online]").inner_text()
    design = periods["2027Q3"]["design"]
    assert q3.locator("[data-col=design]").inner_text() == f"{design['mode']} ({design['status']})"
    sv = periods["2027Q3"]["survivability"]
    assert page.inner_text("#timeline-end-survivability").startswith(f"{sv['survived']} of {sv['states']} srlg")
    # hover the capex chart's first quarter: its card shows the backbone and the GPU capex the API served
    capex = page.locator("#timeline-capex .chart-column[data-index='0']")
    capex.scroll_into_view_if_needed()
    capex.hover()
    card = page.locator("#timeline-capex .chart-card")
    card.wait_for(state="visible")
    text = card.inner_text()
    assert f"backbone: {_money(periods['2027Q1']['network_capex_usd'])} USD" in text
    assert f"GPUs: {_money(periods['2027Q1']['gpu_capex_usd'])} USD" in text
    # the survivability chart from the keyboard: focus shows the violated state and the design status
    page.focus("#timeline-survivability .chart-column[data-index='0']")
    survival = page.locator("#timeline-survivability .chart-card")
    survival.wait_for(state="visible")
    assert "violated: srlg:s1" in survival.inner_text() and "design: " in survival.inner_text()
    # the screenshot: the timeline alone, in a window tall enough for the lower pane (the results share it with the
    # Run form) to show its headline, figures and charts
    page.set_viewport_size({"width": 1280, "height": 3000})
    page.mouse.move(0, 0)
    page.evaluate("""() => { document.querySelector('#roadmap-timeline').scrollIntoView({ block: 'start' });
        document.querySelector("#timeline-capex .chart-column[data-index='0']").focus({ preventScroll: true }); }""")
    card.wait_for(state="visible")
    page.wait_for_timeout(300)
    if os.environ.get("BACKBONE_SCREENSHOTS") == "1":
        page.locator(".jobs").screenshot(path=str(SCREENSHOTS / "workspace-timeline.png"))
    # the charts as files
    name, data = _downloaded(page, "#timeline-capex .chart-svg-download")
    assert name == "timeline-capex.svg"
    assert data.startswith(b"<?xml") and b"<svg" in data and b"2027Q1" in data and b"font-family" in data
    name, data = _downloaded(page, "#timeline-survivability .chart-png-download")
    assert name == "timeline-survivability.png" and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    assert page.problems == []


def _source(page: Any, name: str) -> list[dict[str, Any]]:
    """The features of one of the map's GeoJSON sources, as drawn now."""
    return page.evaluate(f"async () => (await window.backboneMap.getSource('{name}').getData()).features")  # type: ignore[no-any-return]


def _drawn(page: Any, job_id: str, period: str) -> None:
    page.wait_for_function(f"() => location.hash === '#/job/{job_id}/period/{period}'")
    page.wait_for_selector(f"#roadmap-timeline[data-period-drawn='{period}'] #timeline-table tr.selected[data-period='{period}']")
    page.wait_for_selector(f"#period-legend:has-text('{period}')")


def test_roadmap_period_builds_on_the_map(page: Any, live: dict[str, Any], roadmap_job: dict[str, Any]) -> None:  # noqa: F811
    """A period chosen in the timeline (the select, a row's click, Enter on a row) draws the period's map from
    GET v1/jobs/<id>/periods/<period>/map: C1 committed in 2027Q1 (dashed, along its candidate route) and online in
    2027Q3 (a link of that period), the GPUs at A committed then online and labelled; the deep link restores it; the
    widened results show the timeline table without sideways scrolling at 1280x800."""
    job, doc = roadmap_job["job"], roadmap_job["result"]
    gpus = {p["period"]: p["gpus_installed"] for p in doc["periods"]}
    assert gpus["2027Q1"] == 0 and gpus["2027Q3"] > 0  # the premise: the GPUs bought in 2027Q1 are online in 2027Q3
    sign_in(page, live, f"#/job/{job['id']}")
    page.wait_for_selector("#roadmap-timeline #timeline-table tbody tr")
    page.select_option("#timeline-period", "2027Q1")
    _drawn(page, job["id"], "2027Q1")
    builds = {f["properties"]["id"]: f["properties"] for f in _source(page, "builds")}
    assert builds == {"C1": {"id": "C1", "action": "new route", "state": "committed"}}
    assert [f["properties"] for f in _source(page, "gpu-sites")] == [{"id": "A", "state": "committed"}]
    assert {f["properties"]["id"] for f in _source(page, "links")} == {"L1"}  # 2027Q1's backbone: C1 not yet built
    legend = page.locator("#period-legend")
    assert legend.locator("[data-state=committed] .legend-count").inner_text() == "2"
    assert legend.locator("[data-state=online] .legend-count").inner_text() == "0"
    assert "committed, not yet online" in page.inner_text(".gpu-label[data-site=A]")
    # a row's click: 2027Q3, where C1 and the GPUs come online
    page.click("#timeline-table tr[data-period='2027Q3'] th")
    _drawn(page, job["id"], "2027Q3")
    assert {f["properties"]["id"]: f["properties"]["state"] for f in _source(page, "builds")} == {"C1": "online"}
    links = {f["properties"]["id"]: f for f in _source(page, "links")}
    assert set(links) == {"L1", "C1"}  # the period's own map: C1 is a link, along its candidate's waypoint
    assert any(abs(lon + 73) < 0.5 and abs(lat - 41.8) < 0.5 for lon, lat in links["C1"]["geometry"]["coordinates"])
    sites = {f["properties"]["id"]: f["properties"] for f in _source(page, "sites")}
    assert sites["A"]["gpus_installed"] == gpus["2027Q3"]
    label = page.inner_text(".gpu-label[data-site=A]")
    gained = f"{gpus['2027Q3']:,.0f}"
    assert f"{gained} GPUs in 2027Q3" in label and f"+{gained} online this quarter" in label, label
    assert legend.locator("[data-state=online] .legend-count").inner_text() == "2"
    assert "built by 2027Q2" in legend.inner_text()
    # the deep link restores the period after a reload
    page.reload()
    page.wait_for_selector("#identity")
    _drawn(page, job["id"], "2027Q3")
    assert page.input_value("#timeline-period") == "2027Q3"
    assert {f["properties"]["id"]: f["properties"]["state"] for f in _source(page, "builds")} == {"C1": "online"}
    # the keyboard: Enter on 2027Q2's row
    page.focus("#timeline-table tr[data-period='2027Q2']")
    page.keyboard.press("Enter")
    _drawn(page, job["id"], "2027Q2")
    assert {f["properties"]["id"]: f["properties"]["state"] for f in _source(page, "builds")} == {"C1": "committed"}
    # the wider results: at 1280x800 the timeline table fits its pane
    scroll = "() => { const s = document.querySelector('#timeline-table').parentElement; return [s.scrollWidth, s.clientWidth]; }"
    page.click("#results-wide")
    page.wait_for_selector(".shell.results-wide")
    assert page.locator("#scenario-list").is_hidden() and page.locator("#run-form").is_hidden()
    width, visible = page.evaluate(scroll)
    assert width <= visible + 1, (width, visible)
    page.click("#timeline-table tr[data-period='2027Q3'] th")
    _drawn(page, job["id"], "2027Q3")
    page.mouse.move(0, 0)
    page.evaluate("() => document.querySelector('#timeline-table').scrollIntoView({ block: 'start' })")
    page.wait_for_function("() => window.backboneMap.loaded() && !window.backboneMap.isMoving()")
    page.wait_for_timeout(500)
    if os.environ.get("BACKBONE_SCREENSHOTS") == "1":
        page.screenshot(path=str(SCREENSHOTS / "workspace-roadmap-map.png"))
    # the scenario as given: no period drawn, the layout put back by the toggle
    page.select_option("#timeline-period", "")
    page.wait_for_function(f"() => location.hash === '#/job/{job['id']}'")
    page.wait_for_selector("#period-legend", state="detached")
    assert _source(page, "builds") == [] and page.locator(".gpu-label").count() == 0
    page.click("#results-wide")
    page.wait_for_selector(".shell:not(.results-wide)")
    assert page.problems == []


def test_report_and_deck_download_with_the_token_as_a_header(page: Any, live: dict[str, Any],  # noqa: F811
                                                             roadmap_job: dict[str, Any]) -> None:
    job = roadmap_job["job"]
    sign_in(page, live, f"#/job/{job['id']}")
    page.wait_for_selector("#report-downloads #job-deck")
    requests: list[Any] = []
    page.on("request", lambda r: requests.append(r) if "/deck" in r.url or "report.html" in r.url else None)
    name, data = _downloaded(page, "#job-report")
    assert name == f"report-{job['id']}.html" and b"<html" in data[:500].lower()
    name, data = _downloaded(page, "#job-deck")
    assert name == f"review-{job['id']}.pptx" and data[:2] == b"PK"  # a .pptx is a zip
    assert len(requests) == 2
    for request in requests:
        assert request.headers.get("authorization") == f"Bearer {live['token']}"
        assert live["token"] not in request.url
    assert page.problems == []


def test_a_running_job_is_followed_by_its_event_stream(page: Any, live: dict[str, Any]) -> None:  # noqa: F811
    """The job view reads GET v1/jobs/<id>/events with fetch (the token as a header) while the job runs, and polls
    GET v1/jobs/<id> when the stream cannot be had; the job cancelled from the view ends it."""
    url, headers = live["server"].url, auth(live["token"])
    created = httpx.post(f"{url}/v1/scenarios", json=timeline_toy(), headers=headers, timeout=120).json()
    job = httpx.post(f"{url}/v1/scenarios/{created['id']}/jobs", json={"kind": "roadmap", "options": {"periods": 40}},
                     headers=headers, timeout=60).json()  # long enough to be watched, then cancelled
    # no stream (a server or proxy without it): the view polls
    page.route("**/events", lambda route: route.fulfill(status=503, body=""))
    sign_in(page, live, f"#/job/{job['id']}")
    page.wait_for_selector("#job-detail[data-live=polling][data-status=running]", timeout=120_000)
    page.unroute("**/events")
    # with the stream: the view follows it, and stops polling the job every second
    streams: list[Any] = []
    polls: list[str] = []
    page.on("request", lambda r: streams.append(r) if r.url.endswith("/events") else None)
    page.reload()
    page.wait_for_selector("#job-detail[data-live=events][data-status=running]")
    page.on("request", lambda r: polls.append(r.url) if r.url.endswith(f"/v1/jobs/{job['id']}") else None)
    page.wait_for_timeout(3000)
    assert len(polls) <= 2  # the list's refresh every 5 s, not a poll a second
    assert streams and streams[0].headers.get("authorization") == f"Bearer {live['token']}"
    assert live["token"] not in streams[0].url
    page.click("#job-cancel")
    page.wait_for_selector("#job-detail[data-status=cancelled]")
    # left out: the refused stream's console line, and a poll the reload cut short
    assert [p for p in page.problems if "503" not in p and not p.endswith("net::ERR_ABORTED")] == []
