"""What-if editing in the browser workspace (headless Chromium, as tests/api/test_workspace_browser.py): edit a
link's capacity and save a version with If-Match; a refused value shows the API's problem beside the cell and saves
nothing; a stale save (someone else saved) offers a reload that keeps the changes; a viewer sees no edit controls.
``BACKBONE_SCREENSHOTS=1`` saves the editor to docs/img/."""

from __future__ import annotations

import sys
from typing import Any

import httpx
import pytest
from apitest_helpers import auth

from tests.api import test_workspace_browser as workspace

# the live server, the browser and the offline tab of the workspace's browser tests (one live server per module)
live = workspace.live
browser = workspace.browser
page = workspace.page
screenshot = workspace.screenshot
sign_in = workspace.sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]


_doc = workspace.three_site_doc


def _create(live: dict[str, Any], name: str) -> str:
    r = httpx.post(f"{live['server'].url}/v1/scenarios", json=_doc(name), headers=auth(live["token"]), timeout=60)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _versions(live: dict[str, Any], sid: str) -> list[int]:
    r = httpx.get(f"{live['server'].url}/v1/scenarios/{sid}/versions", headers=auth(live["token"]), timeout=30)
    return sorted(v["version"] for v in r.json())


def _capacity(live: dict[str, Any], sid: str, version: int, link: str) -> float:
    r = httpx.get(f"{live['server'].url}/v1/scenarios/{sid}?version={version}", headers=auth(live["token"]), timeout=30)
    return float(next(lk for lk in r.json()["content"]["links"] if lk["id"] == link)["capacity_gbps"])


def _wait_state(page: Any, state: str) -> None:
    """Wait for the editor's check to reach ``state``; a timeout names the state and text it reached instead."""
    try:
        page.wait_for_selector(f"#edit-state[data-state={state}]", timeout=30_000)
    except Exception as error:
        raise AssertionError(f"editor state {page.get_attribute('#edit-state', 'data-state')!r}: "
                             f"{page.inner_text('#edit-state')!r}; {page.inner_text('#edit-panel')!r}") from error


def _open_for_edit(page: Any, live: dict[str, Any], sid: str) -> None:
    sign_in(page, live, f"#/scenario/{sid}")
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
    page.click("#edit-mode")
    page.wait_for_selector("input.cell-edit[data-id='nyc-bos']")


def test_edit_a_capacity_and_save_a_version(page: Any, live: dict[str, Any]) -> None:
    sid = _create(live, "what-if: save")
    _open_for_edit(page, live, sid)
    page.fill("input.cell-edit[data-id='nyc-bos']", "800")
    page.click("#tab-changes")
    _wait_state(page, "valid")
    assert page.locator("#edit-list li[data-kind=capacity]").count() == 1
    # a second change, undone: the list shrinks back and the check runs again
    assert page.input_value("#move-from") == "nyc"  # the site with the most GPUs
    page.select_option("#move-to", "lon")
    page.fill("#move-gpus", "500")
    page.click("#move-add")
    page.wait_for_selector("#edit-list li[data-kind=move-gpus]")
    _wait_state(page, "valid")
    page.click("#edit-list li[data-kind=move-gpus] button.undo")
    assert page.locator("#edit-list li[data-kind=move-gpus]").count() == 0
    _wait_state(page, "valid")
    assert _versions(live, sid) == [1]  # checking stored nothing
    page.click("#edit-save")
    page.wait_for_function(f"() => location.hash === '#/scenario/{sid}/version/2'")
    page.wait_for_selector(f"#scenario-list > li[data-id='{sid}'] ol.versions a[href$='/version/2']")
    assert _versions(live, sid) == [1, 2]
    assert _capacity(live, sid, 2, "nyc-bos") == 800 and _capacity(live, sid, 1, "nyc-bos") == 400
    page.wait_for_selector("#map:not([aria-busy])", state="attached")  # version 2's map drawn
    page.reload()
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
    cells = page.locator("table.data[data-kind=links] tbody tr[data-id='nyc-bos'] td").all_inner_texts()
    assert "800" in cells, cells
    assert not page.problems


def test_a_negative_capacity_shows_the_api_error_beside_the_cell(page: Any, live: dict[str, Any]) -> None:
    sid = _create(live, "what-if: refused")
    _open_for_edit(page, live, sid)
    page.fill("input.cell-edit[data-id='nyc-lon']", "-5")
    error = ".field-error[data-table=links][data-record='nyc-lon'][data-field=capacity_gbps]:not([hidden])"
    page.wait_for_selector(error)
    bad = _doc("what-if: refused")
    bad["links"][1]["capacity_gbps"] = -5
    api = httpx.put(f"{live['server'].url}/v1/scenarios/{sid}", json=bad, headers=auth(live["token"]), timeout=30)
    assert api.status_code == 422
    expected = [e["message"] for e in api.json()["errors"] if e["record"] == "nyc-lon" and e["field"] == "capacity_gbps"]
    assert expected and page.inner_text(error) == "; ".join(expected)
    screenshot(page, "workspace-edit.png")
    page.click("#tab-changes")
    assert page.get_attribute("#edit-state", "data-state") == "invalid"
    assert page.is_disabled("#edit-save") and page.is_disabled("#edit-fork")
    page.fill("#move-gpus", "1000")
    page.click("#move-add")
    _wait_state(page, "invalid")
    screenshot(page, "workspace-edit-changes.png")
    assert _versions(live, sid) == [1]
    assert not [p for p in page.problems if "422" not in p]


def test_a_stale_save_offers_a_reload_that_keeps_the_changes(page: Any, live: dict[str, Any]) -> None:
    sid = _create(live, "what-if: conflict")
    _open_for_edit(page, live, sid)
    page.fill("input.cell-edit[data-id='nyc-bos']", "1200")
    page.click("#tab-changes")
    _wait_state(page, "valid")
    other = _doc("what-if: conflict")
    other["links"][1]["capacity_gbps"] = 3200  # a colleague saves version 2 meanwhile
    r = httpx.put(f"{live['server'].url}/v1/scenarios/{sid}", json=other, headers=auth(live["token"]), timeout=30)
    assert r.status_code == 200, r.text
    page.click("#edit-save")
    page.wait_for_selector("#edit-conflict:not([hidden]) #edit-reload")
    assert "Someone else saved" in page.inner_text("#edit-conflict")
    assert _versions(live, sid) == [1, 2]
    page.click("#edit-reload")
    page.wait_for_selector("#edit-list li[data-kind=capacity]")
    _wait_state(page, "valid")
    assert page.inner_text("#edit-save") == "Save as version 3"
    page.click("#edit-save")
    page.wait_for_function(f"() => location.hash === '#/scenario/{sid}/version/3'")
    assert _capacity(live, sid, 3, "nyc-bos") == 1200 and _capacity(live, sid, 3, "nyc-lon") == 3200
    assert not [p for p in page.problems if "409" not in p]


def test_a_viewer_sees_no_edit_controls(page: Any, live: dict[str, Any]) -> None:
    sid = _create(live, "what-if: viewer")
    out = live["server"].cli("token", "create", "--scope", "viewer", "--team", "Network Planning", "--name", "carol")
    assert out.returncode == 0, out.stderr
    page.goto(f"{live['server'].url}/#/scenario/{sid}")
    page.fill("#token", out.stdout.split()[-1])
    page.click("button[type=submit]")
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
    page.wait_for_selector("#tab-run")
    for selector in ("#edit-mode", "#tab-changes", "#edit-panel", "input.cell-edit", "#edit-save", "#edit-fork"):
        assert page.locator(selector).count() == 0, selector


def test_the_shared_scenario_is_forked_never_edited(page: Any, live: dict[str, Any]) -> None:
    """The shipped scenario is read-only: its changes can only become a new scenario (a fork) at version 1."""
    shipped = live["shipped"]
    sign_in(page, live, f"#/scenario/{shipped}")
    page.wait_for_selector("table.data[data-kind=links] tbody tr")
    link = page.get_attribute("table.data[data-kind=links] tbody tr", "data-id")
    page.click("#edit-mode")
    page.fill(f"input.cell-edit[data-id='{link}']", "12345")
    page.click("#tab-changes")
    assert page.locator("#edit-save").count() == 0
    _wait_state(page, "valid")
    page.fill("#fork-name", "global, what-if")
    page.click("#edit-fork")
    page.wait_for_function(f"() => /^#\\/scenario\\/[0-9a-f-]{{36}}\\/version\\/1$/.test(location.hash)"
                           f" && !location.hash.includes('{shipped}')")
    fork = str(page.evaluate("location.hash")).split("/")[2]
    r = httpx.get(f"{live['server'].url}/v1/scenarios/{fork}", headers=auth(live["token"]), timeout=60).json()
    assert r["name"] == "global, what-if" and not r["read_only"]
    assert next(lk for lk in r["content"]["links"] if lk["id"] == link)["capacity_gbps"] == 12345
    assert _versions(live, shipped) == [1]
    page.wait_for_selector(f"#scenario-list > li[data-id='{fork}']")


def _content(live: dict[str, Any], sid: str, version: int) -> dict[str, Any]:
    r = httpx.get(f"{live['server'].url}/v1/scenarios/{sid}?version={version}", headers=auth(live["token"]), timeout=30)
    return dict(r.json()["content"])


def _pending(page: Any) -> list[dict[str, Any]]:
    return page.evaluate("async () => (await window.backboneMap.getSource('pending').getData()).features")  # type: ignore[no-any-return]


def test_cell_edits_of_a_site_and_a_demand_saved_as_a_version(page: Any, live: dict[str, Any]) -> None:
    """A site's GPUs and a demand's Gb/s and SLO edited cell by cell (a refused value shows the API's problem beside
    its cell), listed in Changes with undo, saved as version 2; a pending candidate route is drawn dashed between its
    sites until it is undone; modules above the link's max_capacity_gbps are refused by the API's dry run."""
    sid = _create(live, "what-if: cells")
    sign_in(page, live, f"#/scenario/{sid}")
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
    page.click("#tab-sites")
    page.click("#edit-mode-sites")
    gpus = "input.cell-edit[data-table=sites][data-edit=gpus_installed]"
    page.fill(f"{gpus}[data-id=lon]", "2500")
    page.fill(f"{gpus}[data-id=bos]", "-1")  # refused by the API, beside the cell
    error = page.locator(".field-error[data-table=sites][data-record=bos][data-field=gpus_installed]:not([hidden])")
    error.wait_for()
    assert error.inner_text()
    page.fill(f"{gpus}[data-id=bos]", "0")  # back to the stored value: no change
    page.click("#tab-demands")
    assert page.get_attribute("#edit-mode-demands", "aria-pressed") == "true"  # one editing mode for every table
    page.fill("input.cell-edit[data-table=demands][data-edit=demand_gbps][data-id=d1]", "450")
    page.fill("input.cell-edit[data-table=demands][data-edit=slo_rtt_ms][data-id=d1]", "120")
    page.click("#tab-changes")
    _wait_state(page, "valid")
    changes = page.locator("#edit-list li[data-kind=cell]").all_inner_texts()
    assert len(changes) == 3, changes
    assert any("Site lon: GPUs installed 2,000 → 2,500" in c for c in changes), changes
    assert any("Demand d1: demand Gb/s 300 → 450" in c for c in changes), changes
    page.locator("#edit-list li[data-kind=cell]", has_text="latency SLO").locator("button.undo").click()
    assert page.locator("#edit-list li[data-kind=cell]").count() == 2
    # a candidate route, pending: drawn dashed between New York and London until undone
    page.select_option("#cand-a", "nyc")
    page.select_option("#cand-b", "lon")
    page.click("#candidate-add")
    page.wait_for_selector("#edit-list li[data-kind=add-candidate]")
    page.wait_for_function("async () => (await window.backboneMap.getSource('pending').getData()).features.length === 1")
    route = _pending(page)[0]
    assert route["properties"]["site_a"] == "nyc" and route["properties"]["site_b"] == "lon"
    assert route["geometry"]["coordinates"] == [[-74.0, 40.7], [-0.1, 51.5]]
    assert page.evaluate("window.backboneMap.getPaintProperty('pending-candidates', 'line-dasharray')")
    page.click("#edit-list li[data-kind=add-candidate] button.undo")
    page.wait_for_function("async () => (await window.backboneMap.getSource('pending').getData()).features.length === 0")
    # four modules of 400 Gb/s on nyc-bos (400 of at most 1,600): above its ceiling, refused by the dry run
    page.select_option("#modules-link", "nyc-bos")
    page.fill("#modules-count", "4")
    page.click("#modules-add")
    _wait_state(page, "invalid")
    refused = page.inner_text("#edit-list li[data-kind=add-modules] .field-error")
    assert "above the link's max_capacity_gbps 1600" in refused, refused
    page.click("#edit-list li[data-kind=add-modules] button.undo")
    _wait_state(page, "valid")
    page.click("#edit-save")
    page.wait_for_function(f"() => location.hash === '#/scenario/{sid}/version/2'")
    after, before = _content(live, sid, 2), _content(live, sid, 1)
    site = {s["id"]: s for s in after["sites"]}
    demand = {d["id"]: d for d in after["demands"]}["d1"]
    assert site["lon"]["gpus_installed"] == 2500 and site["bos"]["gpus_installed"] == 0
    assert demand["demand_gbps"] == 450 and demand.get("slo_rtt_ms") == before["demands"][0].get("slo_rtt_ms")
    assert {s["id"]: s for s in before["sites"]}["lon"]["gpus_installed"] == 2000
    assert _pending(page) == []
    assert [p for p in page.problems if "422" not in p] == []  # the refused dry runs' console lines
