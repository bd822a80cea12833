"""Uploads through the workspace run as ``import`` jobs (issue #31) in headless Chromium (as
tests/api/test_workspace_browser.py, whose live server runs jobs itself, imports included): the upload is sent with
``Prefer: respond-async``, its job is listed with its status and progress and followed to its end, and the new
scenario opens (a file as the open scenario's next version, by PUT with If-Match, opens version 2); the scenario's
job list names the import and a map job, which show what they made (a link to the scenario version, the map's file)
instead of a Results view; a bad file's job fails with the problems the synchronous upload names (file, table,
record, field) and stores nothing; a request refused at once (an empty file) shows its 422 without a job."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from apitest_helpers import FINAL, auth, wait_for

from tests.api import test_workspace_browser as workspace

live = workspace.live
browser = workspace.browser
page = workspace.page
sign_in = workspace.sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]

# every state the page's import list shows, in order (status and percentage of each row)
RECORD_STATES = """() => {
    window.__importStates = [];
    const list = document.getElementById('import-jobs');
    new MutationObserver(() => {
        for (const li of list.querySelectorAll(':scope > li[data-id]')) {
            const state = `${li.dataset.id} ${li.dataset.status} ${li.querySelector('.import-percent').textContent}`;
            if (!window.__importStates.includes(state)) window.__importStates.push(state);
        }
    }).observe(list, {subtree: true, childList: true, attributes: true, characterData: true});
}"""


def _get(live: dict[str, Any], path: str) -> Any:
    r = httpx.get(f"{live['server'].url}{path}", headers=auth(live["token"]), timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def _scenario_ids(live: dict[str, Any]) -> set[str]:
    return {s["id"] for s in _get(live, "/v1/scenarios?limit=1000")}


def test_an_upload_is_an_import_job_followed_until_its_scenario_opens(page: Any, live: dict[str, Any],
                                                                      tmp_path: Path) -> None:
    posts: list[dict[str, str]] = []
    page.on("request", lambda r: posts.append(r.headers) if r.method == "POST" and r.url.endswith("/v1/scenarios")
            else None)
    sign_in(page, live)
    page.wait_for_selector("#upload-file")
    page.evaluate(RECORD_STATES)
    good = tmp_path / "imported.yaml"
    good.write_text(yaml.safe_dump(workspace.three_site_doc("imported by a job")))
    page.set_input_files("#upload-file", str(good))
    page.click("#upload-submit")
    page.wait_for_function("() => /^#\\/scenario\\/[0-9a-f-]{36}\\/version\\/1$/.test(location.hash)")
    sid = str(page.evaluate("location.hash")).split("/")[2]
    assert [h.get("prefer") for h in posts] == ["respond-async"]

    # the job the page followed: listed with its status and progress from queued to succeeded
    row = page.locator("#import-jobs > li[data-kind=import][data-status=succeeded]")
    job_id = str(row.get_attribute("data-id"))
    job = _get(live, f"/v1/jobs/{job_id}")
    assert (job["kind"], job["status"], job["scenario_id"], job["scenario_version"]) == ("import", "succeeded", sid, 1)
    assert job["options"]["filename"] == "imported.yaml"
    states = [s.split(" ", 1)[1] for s in page.evaluate("() => window.__importStates") if s.startswith(job_id)]
    assert states[0] == "queued 0 %" and states[-1] == "succeeded 100 %", states
    assert row.locator(".import-file").inner_text() == "imported.yaml"
    assert row.locator("progress").get_attribute("value") == "1"
    assert "imported scenario" in row.locator(".import-stage").inner_text()
    assert row.locator("a.import-open").get_attribute("href") == f"#/scenario/{sid}/version/1"
    message = page.inner_text("#upload-message")
    assert "Uploaded imported.yaml: imported by a job, 3 sites, 2 links, 1 demands (canonical-yaml)." == message
    stored = _get(live, f"/v1/scenarios/{sid}")
    assert (stored["name"], stored["sites"], stored["links"], stored["source_format"]) == (
        "imported by a job", 3, 2, "canonical-yaml")
    page.wait_for_selector(f"#scenario-list > li[data-id='{sid}']")

    # the scenario's job list names the import; opened, it links the version it made and has no Results view
    page.click("#tab-run")
    link = page.locator(f"#job-list tr[data-id='{job_id}'][data-kind=import] a.job-link")
    assert link.inner_text() == "import (upload)"
    link.click()
    page.wait_for_selector(f"#job-detail[data-id='{job_id}'][data-status=succeeded] #import-opens")
    assert page.get_attribute("#import-opens", "href") == f"#/scenario/{sid}/version/1"
    assert page.inner_text("#job-detail dd[data-fact=kind]") == "import (upload)"
    assert page.locator("#job-detail #job-files").count() == 0 and page.locator("#job-detail .results").count() == 0
    page.click("#import-opens")
    page.wait_for_function("(sid) => location.hash === `#/scenario/${sid}/version/1`", arg=sid)

    # a map drawn as a job is listed as one; opened, it offers its file
    r = httpx.get(f"{live['server'].url}/v1/scenarios/{sid}/map", params={"format": "geojson", "async": "true"},
                  headers=auth(live["token"]), timeout=60)
    assert r.status_code == 202, r.text
    map_id = r.json()["id"]
    done = wait_for(lambda: _get(live, f"/v1/jobs/{map_id}"), lambda j: j["status"] in FINAL, timeout_s=120)
    assert done["status"] == "succeeded", done
    page.evaluate("(id) => { location.hash = `#/job/${id}`; }", map_id)
    page.wait_for_selector(f"#job-detail[data-id='{map_id}'][data-status=succeeded] #server-job[data-kind=map]")
    assert page.locator(f"#job-list tr[data-id='{map_id}'][data-kind=map] a.job-link").inner_text() == "map (drawing)"
    with page.expect_download() as info:
        page.click("#server-job button[data-file='map.geojson']")
    drawn = json.loads(Path(info.value.path()).read_text())
    assert drawn["type"] == "FeatureCollection" and len(drawn["features"]) >= 5  # 3 sites, 2 links

    # a file as the open scenario's next version: PUT with If-Match, imported as a job, version 2 opens
    second = workspace.three_site_doc("imported again")
    second["links"][0]["capacity_gbps"] = 800
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(second))
    page.wait_for_selector("#upload-as-version-label:not([hidden])")
    assert "imported by a job" in page.inner_text("#upload-as-version-label")
    page.check("#upload-as-version")
    page.set_input_files("#upload-file", str(again))
    page.click("#upload-submit")
    page.wait_for_function("(sid) => location.hash === `#/scenario/${sid}/version/2`", arg=sid)
    assert [h.get("prefer") for h in posts] == ["respond-async"]  # the version went by PUT, not POST
    newest = page.locator("#import-jobs > li").first
    assert newest.get_attribute("data-status") == "succeeded"
    assert _get(live, f"/v1/jobs/{newest.get_attribute('data-id')}")["options"]["mode"] == "version"
    assert sorted(v["version"] for v in _get(live, f"/v1/scenarios/{sid}/versions")) == [1, 2]
    head = _get(live, f"/v1/scenarios/{sid}")
    link = next(r for r in head["content"]["links"] if r["id"] == "nyc-bos")
    assert (head["version"], head["name"], link["capacity_gbps"]) == (2, "imported again", 800)
    assert page.inner_text("#upload-message").startswith("Uploaded again.yaml as version 2: imported again")
    assert page.problems == []


def test_a_bad_upload_fails_its_job_with_the_named_problems_and_stores_nothing(page: Any, live: dict[str, Any],
                                                                               tmp_path: Path) -> None:
    bad_doc = workspace.three_site_doc("bad import")
    bad_doc["links"][0]["site_b"] = "nowhere"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(bad_doc))
    before = _scenario_ids(live)
    sign_in(page, live)
    page.wait_for_selector("#upload-file")
    page.set_input_files("#upload-file", str(bad))
    page.click("#upload-submit")
    item = "#upload-errors li[data-file='bad.yaml'][data-table=links][data-record='nyc-bos'][data-field=site_b]"
    page.wait_for_selector(item)
    row = page.locator("#import-jobs > li[data-kind=import]")
    assert row.count() == 1 and row.get_attribute("data-status") == "failed"
    job = _get(live, f"/v1/jobs/{row.get_attribute('data-id')}")
    assert (job["kind"], job["status"], job["error"]["status"]) == ("import", "failed", 422)
    # exactly what the synchronous upload answers, shown as the synchronous upload showed it
    sync = httpx.post(f"{live['server'].url}/v1/scenarios", files={"file": ("bad.yaml", bad.read_bytes())},
                      headers=auth(live["token"]), timeout=60)
    assert sync.status_code == 422 and job["error"]["errors"] == sync.json()["errors"]
    expected = next(e for e in sync.json()["errors"] if e["record"] == "nyc-bos" and e["field"] == "site_b")
    assert page.inner_text(item) == f"bad.yaml / links / nyc-bos / site_b: {expected['message']}"
    assert page.locator("#upload-errors li").count() == len(sync.json()["errors"])
    message = page.inner_text("#upload-message")
    assert message.startswith("bad.yaml was not stored: ") and message.endswith("(HTTP 422)"), message
    assert _scenario_ids(live) == before
    assert not page.locator("#scenario-list .scenario-name", has_text="bad import").count()

    # a request refused at once (an empty file) is shown at once, with no job
    empty = tmp_path / "empty.json"
    empty.write_text("  ")
    page.set_input_files("#upload-file", str(empty))
    page.click("#upload-submit")
    page.wait_for_function("() => document.getElementById('upload-message').textContent.startsWith('empty.json')")
    assert page.inner_text("#upload-message").endswith("(HTTP 422)")
    assert "the upload is empty" in page.inner_text("#upload-errors li[data-file='empty.json'][data-field=file]")
    assert page.locator("#import-jobs > li").count() == 1  # still only the failed import
    assert _scenario_ids(live) == before
    assert [p for p in page.problems if "422" not in p] == []
