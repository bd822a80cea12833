"""The workspace at scale and by keyboard, in headless Chromium: a 1,000-site scenario (the benchmarks' synthetic
backbone: 1,000 sites on five continents, about 2,200 links, 5,000 demands) uploaded through the API, opened,
sorted, filtered and selected within budgets; every control of the top bar, scenario list, tables and Run form
reached with Tab and drawn with a visible focus ring; no sideways overflow at 1280x800.

The budgets are generous for a loaded machine and tight against redrawing every row. On this 2-core machine at a
load average of 11-20 (2026-12-07) the tables were drawn 3.6 s and the map 5.5-7.3 s after the click (budget 15 s);
a sort, a filter keystroke, scrolling the 5,000 demands to their end and a row selection each answered in 9-240 ms
(budget 1 s); a row selection that flies the map and a map click answered in 17-846 ms (budget 2.5 s: the frame
is drawn by software WebGL). Before the tables were virtual, the same sort took 1.0-1.2 s, scrolling to the end
5.7-6.1 s and the map click 1.9 s at load 11-13: a redraw of thousands of rows, or a scan per row, fails."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest
from apitest_helpers import LiveServer, auth
from test_workspace_browser import browser, page, screenshot  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]

N_SITES = 1_000
N_DEMANDS = 5_000
OPEN_BUDGET_S = 15.0
"""From the scenario link's click to the tables drawn, and again to the map drawn (a 2.6 MB GeoJSON drawn by the
server's document worker, parsed, tiled by MapLibre's worker and rendered by SwiftShader)."""
TABLE_BUDGET_S = 1.0
"""A sort, a filter keystroke, scrolling a table to its end, a row selection: each answered within this."""
MAP_BUDGET_S = 2.5
"""A row selection that flies the map, a click on the map that selects its row: answered within this (the first
frame of a flight is a WebGL frame of 2,200 links drawn by SwiftShader, on the CPU)."""
MAP_ACTIONS = ("select a row (link; the map flies)", "map click to its row (round trip)")


def thousand_site_doc() -> dict[str, Any]:
    """The benchmarks' synthetic backbone at 1,000 sites with average degree 4.4 (about 2,200 links, inter-region
    ones submarine) and 5,000 demands between random site pairs (gravity-like volumes, four traffic classes)."""
    from backbone.io.scenario import network_to_dict
    from benchmarks.synthetic import synthetic_backbone

    net = synthetic_backbone(N_SITES, seed=7, degree=4.4, demand_pairs="none")
    doc = network_to_dict(net)
    rng = np.random.default_rng(7)
    sites = [s["id"] for s in doc["sites"]]
    src = rng.integers(0, N_SITES, N_DEMANDS)
    dst = (src + rng.integers(1, N_SITES, N_DEMANDS)) % N_SITES
    classes = ("training", "inference", "replication", "bulk")
    doc["demands"] = [{"id": f"d{i}", "src": sites[a], "dst": sites[b], "traffic_class": classes[i % 4],
                       "demand_gbps": round(float(rng.lognormal(2, 1)), 3)}
                      for i, (a, b) in enumerate(zip(src.tolist(), dst.tolist(), strict=True))]
    doc["name"] = "synthetic 1000"
    return doc


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A live server, a planner token, the shipped scenario and the 1,000-site scenario uploaded through the API."""
    tmp = tmp_path_factory.mktemp("workspace-perf")
    server = LiveServer(tmp / "live", f"sqlite:///{tmp / 'live.db'}", workers=1)
    (tmp / "live").mkdir(parents=True, exist_ok=True)
    for args in (("db", "upgrade"), ("db", "seed"), ("team", "create", "Network Planning")):
        out = server.cli(*args)
        assert out.returncode == 0, out.stderr
    out = server.cli("token", "create", "--scope", "planner", "--team", "Network Planning", "--name", "perf")
    assert out.returncode == 0, out.stderr
    token = out.stdout.split()[-1]
    server.start()
    try:
        doc = thousand_site_doc()
        created = httpx.post(f"{server.url}/v1/scenarios", json=doc, headers=auth(token), timeout=300)
        assert created.status_code == 201, created.text
        summary = created.json()
        assert summary["sites"] == N_SITES and summary["links"] >= 2_000 and summary["demands"] == N_DEMANDS
        shipped = [s for s in httpx.get(f"{server.url}/v1/scenarios", headers=auth(token), timeout=60).json()
                   if s["read_only"]]
        yield {"server": server, "token": token, "id": summary["id"], "links": summary["links"],
               "shipped": shipped[0]["id"]}
    finally:
        server.stop()


def _sign_in(page: Any, big: dict[str, Any]) -> None:  # noqa: F811
    page.goto(f"{big['server'].url}/")
    page.fill("#token", big["token"])
    page.click("button[type=submit]")
    page.wait_for_selector("#identity")


def _answer_ms(page: Any, action: str, arg: Any = None) -> float:  # noqa: F811
    """Run ``action`` (a JavaScript function of ``arg`` that acts on the page as a planner's input would) and return
    the milliseconds from its start to the end of the first frame after it: the page's own time to answer (event
    handler, layout and paint), without the test's round trips to the browser."""
    timed = ("async (arg) => { const t0 = performance.now(); await (" + action + ")(arg);"
             " await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));"
             " return performance.now() - t0; }")
    return float(page.evaluate(timed, arg))


CLICK = "(selector) => document.querySelector(selector).click()"
SCROLL_TO_END = """async ([kind, id]) => {
    const scroller = document.querySelector(`section[data-kind=${kind}] .table-scroll`);
    for (let i = 0; i < 200 && !scroller.querySelector(`tr[data-id="${id}"]`); i++) {
        scroller.scrollTop = scroller.scrollHeight;
        await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    } }"""
FILTER = """([selector, text]) => { const input = document.querySelector(selector); input.value = text;
                                    input.dispatchEvent(new Event('input', { bubbles: true })); }"""


def test_a_thousand_site_scenario_stays_responsive(page: Any, big: dict[str, Any]) -> None:  # noqa: F811
    """Open the 1,000-site scenario and use it: each step answers within its budget, and shows the right rows."""
    _sign_in(page, big)
    page.evaluate("() => performance.clearMarks()")
    start = time.perf_counter()
    page.click(f".scenario-link[data-id='{big['id']}']")
    page.wait_for_function("() => performance.getEntriesByName('tables-drawn').length > 0", timeout=120_000)
    tables_s = time.perf_counter() - start
    page.wait_for_function("() => performance.getEntriesByName('map-drawn').length > 0", timeout=120_000)
    map_s = time.perf_counter() - start
    print(f"\n1,000 sites: tables drawn {tables_s:.2f} s, map drawn {map_s:.2f} s after the click")
    assert tables_s < OPEN_BUDGET_S and map_s < OPEN_BUDGET_S
    page.wait_for_timeout(500)  # the map's last frame
    screenshot(page, "workspace-1000-sites.png")
    links = big["links"]
    assert page.inner_text("section[data-kind=links] .count") == f"{links:,} links"
    assert page.evaluate("() => window.backboneMap.querySourceFeatures('sites').length") > 0
    # a virtual table: the rows in view (and a margin) are in the page, the scroll bar spans every row
    shown = page.locator("table.data[data-kind=links] tbody tr").count()
    assert 0 < shown < 200
    spans = page.evaluate("""() => { const s = document.querySelector('section[data-kind=links] .table-scroll');
        const row = s.querySelector('tbody tr').getBoundingClientRect().height; return s.scrollHeight / row; }""")
    assert abs(spans - (links + 1)) < 3  # every row and the header

    served = httpx.get(f"{big['server'].url}/v1/scenarios/{big['id']}", headers=auth(big["token"]), timeout=60).json()
    capacity = "table.data[data-kind=links] th[data-key=capacity_gbps]"
    timings = {"sort (ascending)": _answer_ms(page, CLICK, capacity),
               "sort (descending)": _answer_ms(page, CLICK, capacity)}
    first = page.locator("table.data[data-kind=links] tbody tr").first.get_attribute("data-id")
    top = max(link["capacity_gbps"] for link in served["content"]["links"])
    assert next(link for link in served["content"]["links"] if link["id"] == first)["capacity_gbps"] == top
    filter_ = "section[data-kind=links] input.filter"
    timings["filter (one keystroke)"] = _answer_ms(page, FILTER, [filter_, "s"])
    timings["filter (submarine)"] = _answer_ms(page, FILTER, [filter_, "submarine"])
    submarine = sum(1 for link in served["content"]["links"] if link.get("kind") == "submarine")
    assert page.inner_text("section[data-kind=links] .count") == f"{submarine:,} of {links:,} links"
    timings["filter cleared"] = _answer_ms(page, FILTER, [filter_, ""])

    # the demands table scrolled to its end (rows drawn as it scrolls), its last row clicked: its sites highlighted
    page.click("#tab-demands")
    last = served["content"]["demands"][-1]
    timings["scroll demands to the end"] = _answer_ms(page, SCROLL_TO_END, ["demands", last["id"]])
    demand_row = f"table.data[data-kind=demands] tbody tr[data-id='{last['id']}']"
    timings["select a row (demand)"] = _answer_ms(page, CLICK, demand_row)
    assert page.locator(f"{demand_row}.selected").is_visible()
    assert last["src"] in str(page.evaluate("() => window.backboneMap.getFilter('selected-site')"))

    # a link row clicked: highlighted and the map flies there
    page.click("#tab-links")
    link_row = "table.data[data-kind=links] tbody tr:nth-child(3)"
    link_id = page.get_attribute(link_row, "data-id")
    timings["select a row (link; the map flies)"] = _answer_ms(page, CLICK, link_row)
    assert link_id in str(page.evaluate("() => window.backboneMap.getFilter('selected-line')"))
    page.wait_for_function("() => !window.backboneMap.isMoving()", timeout=30_000)

    # a map click on the last site (its row beyond the first window of the sites table): its row selected
    site = served["content"]["sites"][-1]
    page.evaluate("([lon, lat]) => window.backboneMap.jumpTo({ center: [lon, lat], zoom: 9 })", [site["lon"], site["lat"]])
    page.wait_for_function("() => window.backboneMap.loaded() && !window.backboneMap.isMoving()", timeout=30_000)
    page.wait_for_timeout(300)
    box = page.locator("#map canvas").bounding_box()
    point = page.evaluate("([lon, lat]) => window.backboneMap.project([lon, lat])", [site["lon"], site["lat"]])
    start = time.perf_counter()
    page.mouse.click(box["x"] + point["x"], box["y"] + point["y"])
    page.wait_for_selector(f"table.data[data-kind=sites] tbody tr.selected[data-id='{site['id']}']")
    timings["map click to its row (round trip)"] = 1000 * (time.perf_counter() - start)
    assert page.get_attribute("#tab-sites", "aria-selected") == "true"
    print("; ".join(f"{name} {ms:.0f} ms" for name, ms in timings.items()))
    slow = {name: ms for name, ms in timings.items()
            if ms > 1000 * (MAP_BUDGET_S if name in MAP_ACTIONS else TABLE_BUDGET_S)}
    assert not slow, f"over the budget ({TABLE_BUDGET_S} s for a table, {MAP_BUDGET_S} s with the map): {slow}"
    assert page.problems == []


FOCUSED = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1) || style.boxShadow !== 'none';
    return { tag: el.tagName.toLowerCase(), id: el.id, cls: String(el.className), text: (el.textContent || '').trim().slice(0, 40),
             kind: el.closest('[data-kind]')?.getAttribute('data-kind') ?? null, ring,
             inView: box.width > 0 && box.height > 0 && box.bottom > 0 && box.right > 0
                     && box.top < innerHeight && box.left < innerWidth };
}"""
OVERFLOW = """() => ({ page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
                   body: document.body.scrollWidth - document.body.clientWidth })"""


def _tab_until(page: Any, found: Any, limit: int = 80, key: str = "Tab") -> list[dict[str, Any]]:  # noqa: F811
    """Press ``key`` until ``found(focused)`` holds; every element passed must show a focus ring and be in view."""
    passed: list[dict[str, Any]] = []
    for _ in range(limit):
        page.keyboard.press(key)
        focused = page.evaluate(FOCUSED)
        assert focused is not None, f"focus left the page after {passed[-3:]}"
        passed.append(focused)
        assert focused["ring"], f"no visible focus on {focused}"
        assert focused["inView"], f"focused but not in view: {focused}"
        if found(focused):
            return passed
    raise AssertionError(f"not reached in {limit} presses of {key}: {passed[-5:]}")


def test_keyboard_only_and_1280x800(page: Any, big: dict[str, Any]) -> None:  # noqa: F811
    """Sign in, open the shipped scenario, sort and select in a table and start filling the Run form with the
    keyboard alone, every focused control showing a focus ring; at 1280x800 the page never scrolls sideways."""
    page.goto(f"{big['server'].url}/")
    page.wait_for_selector("#token:focus")  # the sign-in form takes the focus itself
    page.keyboard.type(big["token"])
    page.keyboard.press("Enter")
    page.wait_for_selector("#identity")
    assert page.evaluate(OVERFLOW) == {"page": 0, "body": 0}
    sent, size = page.evaluate("""() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/ui/app.js'))
        .map((e) => [e.encodedBodySize, e.decodedBodySize])[0]""")
    assert sent < size / 2  # the bundle came gzip-compressed
    # the top bar first, then the scenario list
    top = _tab_until(page, lambda f: f["id"] == "sign-out")
    assert any(f["id"] == "compare-link" for f in top)
    passed = _tab_until(page, lambda f: "scenario-link" in f["cls"] and big["shipped"] in page.evaluate(
        "() => document.activeElement.dataset.id"))
    assert any(f["tag"] == "input" for f in passed)  # the scenario search
    page.keyboard.press("Enter")
    page.wait_for_selector("table.data[data-kind=links] tbody tr")
    page.wait_for_function("() => performance.getEntriesByName('map-drawn').length > 0", timeout=120_000)
    assert page.evaluate(OVERFLOW) == {"page": 0, "body": 0}
    screenshot(page, "workspace-keyboard.png")
    # on through the map's tools and the tabs to the links table: sort by a column, select a row
    passed = _tab_until(page, lambda f: f["tag"] == "th" and f["kind"] == "links", limit=120)
    assert any(f["id"] == "tab-links" for f in passed) and any(f["id"] == "centre" for f in passed)
    page.keyboard.press("Enter")
    sorted_by = page.evaluate("() => document.activeElement.getAttribute('aria-sort')")
    assert sorted_by == "ascending"
    _tab_until(page, lambda f: f["tag"] == "tr" and f["kind"] == "links", limit=20)
    row = page.evaluate("() => document.activeElement.dataset.id")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"table.data[data-kind=links] tbody tr.selected[data-id='{row}']")
    assert row in str(page.evaluate("() => window.backboneMap.getFilter('selected-line')"))
    # back to the Run tab, open it with Enter and reach the form's first field
    _tab_until(page, lambda f: f["id"] == "tab-run", limit=40, key="Shift+Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector("#run-kind")
    _tab_until(page, lambda f: f["id"] == "run-kind", limit=10)
    _tab_until(page, lambda f: f["id"] == "opt-k_paths", limit=20)
    assert page.evaluate(OVERFLOW) == {"page": 0, "body": 0}
    assert page.problems == []
