"""The browser workspace in headless Chromium (Playwright driving Debian's chromium, nothing downloaded): sign in,
open the shipped scenario, select a link on the map and see its row, a row flies the map, deep links, a bad token,
and names holding markup shown as text. ``BACKBONE_SCREENSHOTS=1`` saves the main views to docs/img/."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from apitest_helpers import LiveServer, auth

from tests.browser import chromium

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def screenshot(page: Any, name: str) -> None:
    """Save a screenshot to docs/img/ when BACKBONE_SCREENSHOTS=1 (CI leaves the tree clean)."""
    if os.environ.get("BACKBONE_SCREENSHOTS") == "1":
        page.screenshot(path=str(SCREENSHOTS / name))


def _hostile_doc() -> dict[str, Any]:
    """A small scenario whose scenario, site and link names hold markup."""
    return {"name": HOSTILE,
            "sites": [{"id": "a", "name": HOSTILE, "lon": -74.0, "lat": 40.7, "region": "NA", "kind": "pop"},
                      {"id": "b", "name": "Boston", "lon": -71.1, "lat": 42.4, "region": "NA", "kind": "pop"}],
            "links": [{"id": "a-b", "name": HOSTILE, "site_a": "a", "site_b": "b", "capacity_gbps": 400}]}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A live server with the shipped scenario seeded and a team with a planner token."""
    tmp = tmp_path_factory.mktemp("workspace")
    server = LiveServer(tmp / "live", f"sqlite:///{tmp / 'live.db'}", workers=1)
    (tmp / "live").mkdir(parents=True, exist_ok=True)
    for args in (("db", "upgrade"), ("db", "seed"), ("team", "create", "Network Planning")):
        out = server.cli(*args)
        assert out.returncode == 0, out.stderr
    out = server.cli("token", "create", "--scope", "planner", "--team", "Network Planning", "--name", "alice-laptop")
    assert out.returncode == 0, out.stderr
    token = out.stdout.split()[-1]
    server.start()
    try:
        shipped = [s for s in httpx.get(f"{server.url}/v1/scenarios", headers=auth(token), timeout=60).json() if s["read_only"]]
        yield {"server": server, "token": token, "shipped": shipped[0]["id"]}
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install -e '.[test]')")
    path = chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=shutil.which(path) or path,
                              args=["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh tab at 1280x800 that records console errors, page errors and failed requests, with the network cut
    off: a request to anywhere but this machine is refused and recorded (the workspace must need nothing remote)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    tab.problems = []

    def offline(route: Any) -> None:
        tab.problems.append(f"remote request: {route.request.url}")
        route.abort()

    context.route(re.compile(r"^(?!http://127\.0\.0\.1[:/])[a-z]+://"), offline)
    tab.on("console", lambda m: tab.problems.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: tab.problems.append(str(e)))
    tab.leaving = False
    tab.on("requestfailed",
           lambda r: None if _stream_end(r) or _left_behind(tab, r) else tab.problems.append(f"{r.url}: {r.failure}"))
    for name in ("goto", "reload"):
        setattr(tab, name, _leave(tab, getattr(tab, name)))
    yield tab
    context.close()


def _stream_end(request: Any) -> bool:
    """A job's event stream (GET v1/jobs/{id}/events) that Chromium reports as aborted: it does so for a fetch
    stream the page read to its end (microsoft/playwright#42742), and the workspace also closes a stream it no
    longer needs. What the stream delivered is checked by the tests, not its network status."""
    return bool(request.url.endswith("/events") and request.failure == "net::ERR_ABORTED")


def _leave(tab: Any, navigate: Any) -> Any:
    """The tab's own goto or reload, during which a request of the page left behind is aborted by the test."""
    def leave(*args: Any, **kwargs: Any) -> Any:
        tab.leaving = True
        try:
            return navigate(*args, **kwargs)
        finally:
            tab.leaving = False
    return leave


def _left_behind(tab: Any, request: Any) -> bool:
    """A request the test's own navigation (page.goto, page.reload) cut off: Chromium aborts what the page it leaves
    still had in flight (a map still loading). The page's own aborts, outside a navigation, are still problems."""
    return bool(tab.leaving and request.failure == "net::ERR_ABORTED")


def sign_in(page: Any, live: dict[str, Any], hash_: str = "") -> None:
    page.goto(f"{live['server'].url}/{hash_}")
    page.fill("#token", live["token"])
    page.click("button[type=submit]")
    page.wait_for_selector("#identity")


def _open_shipped(page: Any, live: dict[str, Any]) -> None:
    page.click(f".scenario-link[data-id='{live['shipped']}']")
    page.wait_for_selector("table.data[data-kind=links] tbody tr")
    # predicates are functions, not strings: the page's policy forbids eval, which string predicates need
    page.wait_for_function("() => window.backboneMap && window.backboneMap.loaded()"
                           " && window.backboneMap.querySourceFeatures('links').length > 0")


def test_sign_in_and_open_the_shipped_scenario(page: Any, live: dict[str, Any]) -> None:
    page.goto(f"{live['server'].url}/")
    page.wait_for_selector("#token")
    screenshot(page, "workspace-signin.png")
    page.fill("#token", live["token"])
    page.click("button[type=submit]")
    page.wait_for_selector("#identity")
    identity = page.inner_text("#identity")
    assert "Network Planning" in identity and "planner" in identity.lower() and "alice-laptop" in identity
    assert page.evaluate("sessionStorage.getItem('backbone.token')") == live["token"]
    assert live["token"] not in page.url
    _open_shipped(page, live)
    assert page.evaluate("location.hash") == f"#/scenario/{live['shipped']}"
    assert page.inner_text("#scenario-title") == "global"
    assert page.inner_text("#tab-links") == "Links257" or "257" in page.inner_text("#tab-links")
    assert page.locator("table.data[data-kind=links] tbody tr").count() == 257
    assert page.locator("table.data[data-kind=sites] tbody tr").count() == 128
    assert page.locator("table.data[data-kind=candidates] tbody tr").count() == 62
    page.wait_for_timeout(500)  # the map's last frame
    screenshot(page, "workspace-main.png")
    page.select_option("#centre", "pacific")
    assert abs(page.evaluate("() => window.backboneMap.getCenter().lng") - 160) < 1
    page.uncheck("#layer-candidates")
    assert page.evaluate("() => window.backboneMap.getLayoutProperty('candidates', 'visibility')") == "none"
    page.select_option("#site-size", "mw")
    assert "power_available_mw" in str(page.evaluate("() => window.backboneMap.getPaintProperty('sites', 'circle-radius')"))
    page.wait_for_timeout(500)
    screenshot(page, "workspace-pacific.png")
    assert page.problems == []


def test_click_a_link_on_the_map_selects_its_row(page: Any, live: dict[str, Any]) -> None:
    sign_in(page, live)
    _open_shipped(page, live)
    # a submarine link's middle point on the screen, where no other element is drawn within 6 px and no
    # control lies above the map: the test hovers and clicks where a planner would
    point = page.evaluate("""() => {
        const m = window.backboneMap, canvas = m.getCanvas().getBoundingClientRect();
        const layers = ['sites', 'links-terrestrial', 'links-submarine', 'candidates'];
        for (const f of m.queryRenderedFeatures({layers: ['links-submarine']})) {
            const c = f.geometry.type === 'LineString' ? f.geometry.coordinates : f.geometry.coordinates[0];
            const p = m.project(c[Math.floor(c.length / 2)]);
            const x = canvas.left + p.x, y = canvas.top + p.y;
            const under = document.elementFromPoint(x, y);
            if (!under || under.tagName !== 'CANVAS') continue;
            const near = m.queryRenderedFeatures([[p.x - 6, p.y - 6], [p.x + 6, p.y + 6]], {layers});
            if (near.length === 1) return {x, y, id: f.properties.id, name: f.properties.name};
        }
        return null;
    }""")
    assert point is not None, "no submarine link drawn clear of others"
    page.mouse.move(point["x"], point["y"])
    page.wait_for_selector(".hover-card")
    card = page.inner_text(".hover-card")
    assert point["name"] in card and "capacity (Gb/s)" in card and "latency (ms)" in card
    page.mouse.click(point["x"], point["y"])
    row = page.locator("table.data[data-kind=links] tbody tr.selected")
    row.wait_for()
    assert row.get_attribute("data-id") == point["id"]
    assert row.is_visible() and row.bounding_box()["y"] > 400  # scrolled into the table's view
    assert page.get_attribute("#tab-links", "aria-selected") == "true"
    assert point["id"] in str(page.evaluate("window.backboneMap.getFilter('selected-line')"))
    page.mouse.move(point["x"] + 1, point["y"] + 1)  # the hover card beside the selection
    page.wait_for_selector(".hover-card")
    screenshot(page, "workspace-selection.png")
    assert page.problems == []


def test_click_a_row_highlights_and_flies_the_map(page: Any, live: dict[str, Any]) -> None:
    sign_in(page, live)
    _open_shipped(page, live)
    page.click("#tab-sites")
    page.fill("section[data-kind=sites] input.filter", "singapore")
    page.locator("table.data[data-kind=sites] tbody tr").first.click()
    page.wait_for_function("() => window.backboneMap.getZoom() >= 3.9 && !window.backboneMap.isMoving()")
    centre = page.evaluate("window.backboneMap.getCenter().toArray()")
    assert abs(centre[0] - 103.8) < 3 and abs(centre[1] - 1.3) < 3
    assert "singapore" in str(page.evaluate("window.backboneMap.getFilter('selected-site')")).lower()
    page.click("#tab-srlgs")
    page.fill("section[data-kind=srlgs] input.filter", "cable-marea")
    page.locator("table.data[data-kind=srlgs] tbody tr").first.click()
    assert "marea-virginia-beach-bilbao" in str(page.evaluate("window.backboneMap.getFilter('selected-line')"))
    assert page.problems == []


def test_sorting_and_filtering_a_table(page: Any, live: dict[str, Any]) -> None:
    sign_in(page, live)
    _open_shipped(page, live)
    page.click("table.data[data-kind=links] th:has-text('capacity Gb/s')")
    page.click("table.data[data-kind=links] th:has-text('capacity Gb/s')")  # descending
    first = page.locator("table.data[data-kind=links] tbody tr").first.locator("td").nth(6).inner_text()
    capacities = httpx.get(f"{live['server'].url}/v1/scenarios/{live['shipped']}", headers=auth(live["token"]), timeout=60).json()
    top = max(link["capacity_gbps"] for link in capacities["content"]["links"])
    assert float(first.replace(",", "")) == top
    page.fill("section[data-kind=links] input.filter", "submarine")
    count = page.inner_text("section[data-kind=links] .count")
    assert count == "118 of 257 links"


def test_deep_link_is_restored_on_reload(page: Any, live: dict[str, Any]) -> None:
    sign_in(page, live, f"#/scenario/{live['shipped']}/version/1")
    page.wait_for_selector("#scenario-title")
    page.reload()
    page.wait_for_selector("table.data[data-kind=links] tbody tr")
    assert page.inner_text("#scenario-title") == "global" and "version 1" in page.inner_text("#crumb")
    assert page.locator("ol.versions li.current").inner_text().startswith("v1")
    page.goto(f"{live['server'].url}/#/scenario/00000000-0000-4000-8000-000000000000")  # no such scenario
    page.wait_for_selector(".status.error")
    assert "HTTP 404" in page.inner_text(".status.error")
    page.click("#sign-out")
    page.wait_for_selector("#token")
    assert page.evaluate("sessionStorage.getItem('backbone.token')") is None


def test_a_bad_token_shows_a_clear_message(page: Any, live: dict[str, Any]) -> None:
    page.goto(f"{live['server'].url}/")
    page.fill("#token", "bbk_this-is-not-a-token")
    page.click("button[type=submit]")
    error = page.locator("#signin-error")
    error.wait_for()
    text = error.inner_text()
    assert "refused this token" in text and "invalid, expired or revoked token" in text
    assert page.evaluate("sessionStorage.getItem('backbone.token')") is None
    screenshot(page, "workspace-bad-token.png")
    # only the refused whoami call is an error in the console
    assert all("401" in p for p in page.problems)


def test_names_with_markup_are_shown_as_text(page: Any, live: dict[str, Any]) -> None:
    hostile = httpx.post(f"{live['server'].url}/v1/scenarios", json=_hostile_doc(), headers=auth(live["token"]),
                         timeout=120)
    assert hostile.status_code == 201, hostile.text
    sign_in(page, live)
    link = page.locator(f".scenario-link[data-id='{hostile.json()['id']}'] .scenario-name")
    assert link.inner_text() == HOSTILE
    link.click()
    page.wait_for_selector("table.data[data-kind=links] tbody tr")
    assert page.inner_text("#scenario-title") == HOSTILE
    assert page.locator("table.data[data-kind=links] tbody tr td").nth(1).inner_text() == HOSTILE
    page.click("#tab-sites")
    assert HOSTILE in page.inner_text("table.data[data-kind=sites]")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0 and page.locator("#app script").count() == 0
    assert page.problems == []


def prefix_proxy(upstream: str, prefix: str) -> Any:
    """A reverse proxy on a free port that serves ``upstream`` under ``prefix`` (as nginx's
    ``location /backbone/ { proxy_pass http://app/; }`` does); ``prefix`` itself redirects to ``prefix/``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == prefix:
                self.send_response(301)
                self.send_header("Location", f"{prefix}/")
                self.end_headers()
                return
            if not self.path.startswith(f"{prefix}/"):
                self.send_error(404)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "accept",
                                                                               "if-none-match")}
            r = httpx.get(upstream + self.path.removeprefix(prefix), headers=headers, timeout=120)
            self.send_response(r.status_code)
            for name, value in r.headers.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(r.content)))
            self.end_headers()
            self.wfile.write(r.content)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_works_behind_a_path_prefix(page: Any, live: dict[str, Any]) -> None:
    """Behind a reverse proxy at /backbone/ every asset and API call goes through the prefix (relative URLs)."""
    proxy = prefix_proxy(live["server"].url, "/backbone")
    try:
        base = f"http://127.0.0.1:{proxy.server_address[1]}/backbone"
        seen: list[str] = []
        page.on("request", lambda r: seen.append(r.url))
        page.goto(base)  # redirected to /backbone/
        page.fill("#token", live["token"])
        page.click("button[type=submit]")
        page.wait_for_selector(f".scenario-link[data-id='{live['shipped']}']").click()
        page.wait_for_selector("table.data[data-kind=links] tbody tr")
        page.wait_for_function("() => window.backboneMap && window.backboneMap.loaded()"
                               " && window.backboneMap.querySourceFeatures('links').length > 0")
        assert page.url == f"{base}/#/scenario/{live['shipped']}"
        assert seen[0] == base  # the address typed, then everything under the prefix
        assert all(u.startswith(f"{base}/") for u in seen[1:] if not u.startswith(("data:", "blob:"))), seen
        assert any(u.startswith(f"{base}/v1/scenarios/") for u in seen)
        assert page.problems == []
    finally:
        proxy.shutdown()
        proxy.server_close()


def _open_run_panel(page: Any, live: dict[str, Any], token: str | None = None) -> None:
    """Sign in (with ``token``, default the planner's), open the shipped scenario and its Run tab."""
    page.goto(f"{live['server'].url}/")
    page.fill("#token", token or live["token"])
    page.click("button[type=submit]")
    page.wait_for_selector("#identity")
    page.click(f".scenario-link[data-id='{live['shipped']}']")
    page.click("#tab-run")
    page.wait_for_selector("#job-list tr")


def _job_id(page: Any) -> str:
    page.wait_for_function("() => location.hash.startsWith('#/job/')")
    return str(page.evaluate("location.hash")).removeprefix("#/job/")


def test_run_a_te_job_with_defaults_and_watch_it_succeed(page: Any, live: dict[str, Any]) -> None:
    """The Run form is built from the te options schema with its defaults; a bad value comes back as the API's 422
    beside its field; with the defaults the job runs, its stage and progress show live, it reaches succeeded and
    lists its files; the job stays listed after a reload and its deep link reopens it."""
    _open_run_panel(page, live)
    page.wait_for_selector("#opt-k_paths")
    assert page.input_value("#run-kind") == "te"
    assert page.input_value("#opt-k_paths") == "4" and page.input_value("#opt-objective") == "min-mlu"
    page.fill("#opt-k_paths", "0")
    page.click("#run-submit")
    page.wait_for_selector("#err-k_paths:not([hidden])")
    assert "greater than or equal to 1" in page.inner_text("#err-k_paths")
    page.fill("#opt-k_paths", "4")  # back to the default: not sent
    page.click("#run-submit")
    job_id = _job_id(page)
    page.wait_for_selector(f"#job-detail[data-id='{job_id}']")
    page.wait_for_selector("#job-detail[data-status=succeeded]", timeout=300_000)
    job = httpx.get(f"{live['server'].url}/v1/jobs/{job_id}", headers=auth(live["token"]), timeout=30).json()
    assert job["options"] == {} and job["kind"] == "te" and job["status"] == "succeeded"
    assert page.inner_text("#job-detail [data-fact=status]") == job["status_detail"]
    page.wait_for_selector("#job-files li [data-file]")
    files = page.locator("#job-files [data-file]").evaluate_all("els => els.map(e => e.dataset.file)")
    assert "te.json" in files and set(job["files"]) <= set(files) | {f"te-{job_id}.json"}
    with page.expect_download() as download:
        page.click("#job-files [data-file='te.json']")
    assert download.value.suggested_filename == "te.json"
    screenshot(page, "workspace-run.png")
    page.reload()
    page.wait_for_selector(f"#job-list tr[data-id='{job_id}'][data-status=succeeded]")
    page.wait_for_selector(f"#job-detail[data-id='{job_id}'][data-status=succeeded]")
    assert not [p for p in page.problems if "422" not in p]


def test_cancel_a_running_job(page: Any, live: dict[str, Any]) -> None:
    _open_run_panel(page, live)
    page.wait_for_selector("#opt-k_paths")  # the form, on te
    page.select_option("#run-kind", "roadmap")
    page.wait_for_selector("#opt-periods")  # rebuilt from the roadmap options
    page.click("#run-submit")
    job_id = _job_id(page)
    page.wait_for_selector(f"#job-detail[data-id='{job_id}'][data-status=running]", timeout=120_000)
    page.wait_for_selector("#job-cancel")
    page.click("#job-cancel")
    page.wait_for_selector(f"#job-detail[data-id='{job_id}'][data-status=cancelled]", timeout=60_000)
    assert page.locator("#job-cancel").count() == 0
    page.wait_for_selector(f"#job-list tr[data-id='{job_id}'][data-status=cancelled]")
    job = httpx.get(f"{live['server'].url}/v1/jobs/{job_id}", headers=auth(live["token"]), timeout=30).json()
    assert job["status"] == "cancelled"


def test_a_read_only_token_sees_no_run_controls(page: Any, live: dict[str, Any]) -> None:
    """A viewer sees the scenario's jobs and a running job's progress, but no Run form and no Cancel button."""
    out = live["server"].cli("token", "create", "--scope", "viewer", "--team", "Network Planning", "--name", "bob")
    assert out.returncode == 0, out.stderr
    viewer = out.stdout.split()[-1]
    r = httpx.post(f"{live['server'].url}/v1/scenarios/{live['shipped']}/jobs", headers=auth(live["token"]),
                   json={"kind": "roadmap", "options": {}}, timeout=30)
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    try:
        _open_run_panel(page, live, viewer)
        page.goto(f"{live['server'].url}/#/job/{job_id}")
        page.wait_for_selector(f"#job-detail[data-id='{job_id}']")
        page.wait_for_selector(f"#job-list tr[data-id='{job_id}']")
        assert page.locator("#run-form").count() == 0 and page.locator("#run-submit").count() == 0
        assert page.locator("#job-cancel").count() == 0
        assert page.get_attribute("#job-detail", "data-status") in ("queued", "running")
    finally:
        httpx.delete(f"{live['server'].url}/v1/jobs/{job_id}", headers=auth(live["token"]), timeout=30)


def three_site_doc(name: str) -> dict[str, Any]:
    """Three sites (New York with the most GPUs), a terrestrial and a submarine link, one demand (the what-if and
    scenario tests' scenario)."""
    return {"name": name,
            "sites": [{"id": "nyc", "name": "New York", "lon": -74.0, "lat": 40.7, "region": "NA", "kind": "datacenter",
                       "gpus_installed": 4000},
                      {"id": "bos", "name": "Boston", "lon": -71.1, "lat": 42.4, "region": "NA", "kind": "pop"},
                      {"id": "lon", "name": "London", "lon": -0.1, "lat": 51.5, "region": "EMEA", "kind": "datacenter",
                       "gpus_installed": 2000}],
            "links": [{"id": "nyc-bos", "site_a": "nyc", "site_b": "bos", "capacity_gbps": 400},
                      {"id": "nyc-lon", "site_a": "nyc", "site_b": "lon", "capacity_gbps": 1600, "kind": "submarine"}],
            "demands": [{"id": "d1", "src": "nyc", "dst": "lon", "demand_gbps": 300}]}
