"""The workspace's scenario tools and the newer what-if changes in headless Chromium (as
tests/api/test_workspace_browser.py): search the scenarios by name, upload a scenario file (and a bad one, whose
problems name the file, record and field), download a version with the token as a header, fork a version; add
modules to a link and a candidate route and save them as a version; fail an SRLG as a failures job shown in its
failure state; a viewer sees none of upload, fork or editing. ``BACKBONE_SCREENSHOTS=1`` saves
docs/img/workspace-scenarios.png."""

from __future__ import annotations

import io
import json
import sys
import zipfile
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from apitest_helpers import auth

from backbone.io import save_scenario
from backbone.io.scenario import network_from_dict

from tests.api import test_workspace_browser as workspace

live = workspace.live
browser = workspace.browser
page = workspace.page
screenshot = workspace.screenshot
sign_in = workspace.sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]


_doc = workspace.three_site_doc


def _versions(live: dict[str, Any], sid: str) -> list[int]:
    r = httpx.get(f"{live['server'].url}/v1/scenarios/{sid}/versions", headers=auth(live["token"]), timeout=30)
    return sorted(v["version"] for v in r.json())


def _wait_state(page: Any, state: str) -> None:
    """Wait for the editor's check to reach ``state``; a timeout names the state and text it reached instead."""
    try:
        page.wait_for_selector(f"#edit-state[data-state={state}]", timeout=30_000)
    except Exception as error:
        raise AssertionError(f"editor state {page.get_attribute('#edit-state', 'data-state')!r}: "
                             f"{page.inner_text('#edit-state')!r}; {page.inner_text('#edit-panel')!r}") from error


def _create(live: dict[str, Any], doc: dict[str, Any]) -> str:
    r = httpx.post(f"{live['server'].url}/v1/scenarios", json=doc, headers=auth(live["token"]), timeout=60)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _get(live: dict[str, Any], sid: str, version: int | None = None) -> dict[str, Any]:
    query = f"?version={version}" if version else ""
    r = httpx.get(f"{live['server'].url}/v1/scenarios/{sid}{query}", headers=auth(live["token"]), timeout=30)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _opened(page: Any, version: int = 1) -> str:
    """Wait for the URL to name a scenario's version; answer the scenario's id."""
    page.wait_for_function(f"() => /^#\\/scenario\\/[0-9a-f-]{{36}}\\/version\\/{version}$/.test(location.hash)")
    return str(page.evaluate("location.hash")).split("/")[2]


def _visible_names(page: Any) -> list[str]:
    return [n.strip() for n in page.locator("#scenario-list > li:not([hidden]) .scenario-name").all_inner_texts()]


def test_search_upload_download_and_fork(page: Any, live: dict[str, Any], tmp_path: Path) -> None:
    alpha = _create(live, _doc("alpha ring"))
    _create(live, _doc("beta ring"))
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    sign_in(page, live)
    page.wait_for_selector(f"#scenario-list > li[data-id='{alpha}']")
    # search: by name, case-insensitive, on the listed scenarios
    page.fill("#scenario-search", "ALPHA")
    assert _visible_names(page) == ["alpha ring"]
    assert page.inner_text("#scenario-search-note").startswith("1 of ")
    page.fill("#scenario-search", "ring")
    assert sorted(_visible_names(page)) == ["alpha ring", "beta ring"]
    page.fill("#scenario-search", "")
    assert "global" in _visible_names(page)

    # upload a YAML file: sent as multipart/form-data, stored, listed and opened
    good = tmp_path / "uploaded.yaml"
    good.write_text(yaml.safe_dump(_doc("uploaded from yaml")))
    page.set_input_files("#upload-file", str(good))
    page.click("#upload-submit")
    uploaded = _opened(page)
    stored = _get(live, uploaded)
    assert stored["name"] == "uploaded from yaml" and stored["source_format"] == "canonical-yaml"
    assert stored["sites"] == 3 and stored["links"] == 2
    page.wait_for_selector(f"#scenario-list > li[data-id='{uploaded}']")
    assert "uploaded from yaml" in page.inner_text("#upload-message")

    # a bad file: the API's 422 problems, each naming the file, table, record and field; nothing stored
    bad_doc = _doc("bad upload")
    bad_doc["links"][0]["site_b"] = "nowhere"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(bad_doc))
    before = len(httpx.get(f"{live['server'].url}/v1/scenarios", headers=auth(live["token"]), timeout=30).json())
    page.set_input_files("#upload-file", str(bad))
    page.click("#upload-submit")
    item = "#upload-errors li[data-file='bad.yaml'][data-table=links][data-record='nyc-bos'][data-field=site_b]"
    page.wait_for_selector(item)
    api = httpx.post(f"{live['server'].url}/v1/scenarios", files={"file": ("bad.yaml", bad.read_bytes())},
                     headers=auth(live["token"]), timeout=60)
    assert api.status_code == 422
    expected = next(e for e in api.json()["errors"] if e["record"] == "nyc-bos" and e["field"] == "site_b")
    assert page.inner_text(item) == f"bad.yaml / links / nyc-bos / site_b: {expected['message']}"
    assert "bad.yaml was not stored" in page.inner_text("#upload-message") and "HTTP 422" in page.inner_text("#upload-message")
    assert len(httpx.get(f"{live['server'].url}/v1/scenarios", headers=auth(live["token"]), timeout=30).json()) == before
    page.fill("#scenario-search", "ring")
    page.click(f".scenario-link[data-id='{alpha}']")
    page.wait_for_selector(f"#scenario-actions[data-id='{alpha}'][data-version='1'] #scenario-download")
    page.wait_for_timeout(500)  # the map's last frame
    screenshot(page, "workspace-scenarios.png")

    # download the open version: the canonical JSON the API serves, fetched with the token as a header
    with page.expect_download() as info:
        page.click("#scenario-download")
    download = info.value
    assert download.suggested_filename == "alpha_ring-v1.json"
    assert json.loads(Path(download.path()).read_text()) == _get(live, alpha, 1)["content"]

    # fork the open version into a new scenario at version 1
    page.fill("#scenario-fork-name", "alpha, forked")
    page.click("#scenario-fork")
    page.wait_for_function(f"() => /\\/version\\/1$/.test(location.hash) && !location.hash.includes('{alpha}')")
    fork = str(page.evaluate("location.hash")).split("/")[2]
    forked = _get(live, fork)
    assert forked["name"] == "alpha, forked" and not forked["read_only"]
    assert {k: v for k, v in forked["content"].items() if k != "name"} == \
        {k: v for k, v in _get(live, alpha)["content"].items() if k != "name"}
    assert _versions(live, alpha) == [1]
    page.wait_for_selector(f"#scenario-list > li[data-id='{fork}']")
    assert not [u for u in urls if live["token"] in urllib.parse.unquote(u)], "a token in a URL"
    assert not [p for p in page.problems if "422" not in p]


GRAPHML = b"""<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="Longitude" attr.type="double" for="node" id="d1"/>
  <key attr.name="Latitude" attr.type="double" for="node" id="d0"/>
  <key attr.name="label" attr.type="string" for="node" id="d2"/>
  <graph edgedefault="undirected">
    <node id="0"><data key="d0">40.7</data><data key="d1">-74.0</data><data key="d2">New York</data></node>
    <node id="1"><data key="d0">51.5</data><data key="d1">-0.1</data><data key="d2">London</data></node>
    <edge source="0" target="1"/>
  </graph>
</graphml>"""


def _zipped_folder(doc: dict[str, Any], tmp: Path) -> bytes:
    """The scenario saved as a folder (scenario.yaml and its tables' CSV files), zipped."""
    folder = save_scenario(network_from_dict(doc), tmp / "scn")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.iterdir()):
            z.writestr(f"scn/{p.name}", p.read_bytes())
    return buf.getvalue()


def test_upload_canonical_json_graphml_and_a_zipped_folder(page: Any, live: dict[str, Any], tmp_path: Path) -> None:
    """The other importable formats through the same picker (YAML is uploaded above): each stored in its format."""
    files = {"upload.json": (json.dumps(_doc("uploaded json")).encode(), "canonical-json", (3, 2)),
             "zoo.graphml": (GRAPHML, "graphml", (2, 1)),
             "folder.zip": (_zipped_folder(_doc("uploaded zip"), tmp_path), "zip", (3, 2))}
    sign_in(page, live)
    page.wait_for_selector("#upload-file")
    for name, (data, source_format, (sites, links)) in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        before = str(page.evaluate("location.hash"))
        page.set_input_files("#upload-file", str(path))
        page.click("#upload-submit")
        page.wait_for_function(f"(before) => location.hash !== before && /\\/version\\/1$/.test(location.hash)",
                               arg=before)
        stored = _get(live, str(page.evaluate("location.hash")).split("/")[2])
        assert (stored["source_format"], stored["sites"], stored["links"]) == (source_format, sites, links), name
        assert f"Uploaded {name}" in page.inner_text("#upload-message")
    assert page.problems == []


def test_add_modules_and_a_candidate_route_saved_as_a_version(page: Any, live: dict[str, Any]) -> None:
    sid = _create(live, _doc("what-if: modules"))
    sign_in(page, live, f"#/scenario/{sid}")
    page.wait_for_selector("#tab-changes")
    page.click("#tab-changes")
    page.select_option("#modules-link", "nyc-bos")
    assert "module 400 Gb/s" in page.inner_text("#modules-note")
    page.fill("#modules-count", "2")
    page.click("#modules-add")
    page.wait_for_selector("#edit-list li[data-kind=add-modules]")
    _wait_state(page, "valid")
    # a candidate route the API refuses (no modules may be bought): its problem under the change, nothing saved
    page.fill("#cand-id", "bos-lon")
    page.select_option("#cand-a", "bos")
    page.select_option("#cand-b", "lon")
    page.select_option("#cand-kind", "cable")
    page.select_option("#cand-link-kind", "submarine")
    page.fill("#cand-max_modules", "0")
    page.click("#candidate-add")
    _wait_state(page, "invalid")
    problem = page.locator("#edit-list li[data-kind=add-candidate] .field-error")
    assert "bos-lon" in problem.inner_text() and page.is_disabled("#edit-save")
    page.click("#edit-list li[data-kind=add-candidate] button.undo")
    page.fill("#cand-max_modules", "8")
    page.click("#candidate-add")
    _wait_state(page, "valid")
    page.locator("#edit-panel h3").scroll_into_view_if_needed()
    screenshot(page, "workspace-whatif.png")
    assert _versions(live, sid) == [1]
    page.click("#edit-save")
    page.wait_for_function(f"() => location.hash === '#/scenario/{sid}/version/2'")
    saved = _get(live, sid, 2)["content"]
    assert next(lk for lk in saved["links"] if lk["id"] == "nyc-bos")["capacity_gbps"] == 400 + 2 * 400
    route = next(c for c in saved["candidates"] if c["id"] == "bos-lon")
    assert (route["site_a"], route["site_b"], route["kind"], route["link_kind"], route["max_modules"]) == \
        ("bos", "lon", "cable", "submarine", 8)
    assert _get(live, sid, 1)["content"]["candidates"] == []
    page.wait_for_selector("table.data[data-kind=candidates] tbody tr[data-id='bos-lon']", state="attached")
    assert not [p for p in page.problems if "422" not in p]


def test_fail_an_srlg_runs_a_failures_job_and_shows_the_state(page: Any, live: dict[str, Any]) -> None:
    doc = _doc("what-if: fail")
    doc["links"][1]["cable_system"] = "TAT-X"
    doc["srlgs"] = [{"id": "atlantic", "name": "Atlantic landing", "kind": "landing", "links": ["nyc-lon"]}]
    sid = _create(live, doc)
    sign_in(page, live, f"#/scenario/{sid}")
    page.wait_for_selector("#tab-changes")
    page.click("#tab-changes")
    options = page.locator("#fail-target option").all_inner_texts()
    assert options == ["cable TAT-X (1 links)", "SRLG atlantic (Atlantic landing)"]
    page.select_option("#fail-target", "srlg:atlantic")
    page.click("#fail-run")
    page.wait_for_function("() => decodeURIComponent(location.hash).endsWith('/failure/srlg:atlantic')")
    job = str(page.evaluate("location.hash")).split("/")[2]
    page.wait_for_selector("#failure-table tr.selected[data-scenario='srlg:atlantic']", timeout=240_000)
    page.wait_for_function("() => JSON.stringify(window.backboneMap.getFilter('failed-links')).includes('nyc-lon')")
    record = httpx.get(f"{live['server'].url}/v1/jobs/{job}", headers=auth(live["token"]), timeout=30).json()
    assert record["kind"] == "failures" and record["scenario_version"] == 1
    assert record["options"]["kind"] == "list" and record["options"]["scenarios"] == [{"id": "srlg:atlantic",
                                                                                      "srlgs": ["atlantic"]}]
    assert _versions(live, sid) == [1]  # failing is a job, never a change to the scenario
    assert page.problems == []


def test_a_viewer_sees_search_and_download_but_no_upload_fork_or_edit(page: Any, live: dict[str, Any]) -> None:
    sid = _create(live, _doc("viewer's view"))
    out = live["server"].cli("token", "create", "--scope", "viewer", "--team", "Network Planning", "--name", "dave")
    assert out.returncode == 0, out.stderr
    page.goto(f"{live['server'].url}/#/scenario/{sid}")
    page.fill("#token", out.stdout.split()[-1])
    page.click("button[type=submit]")
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
    page.wait_for_selector("#scenario-download")
    page.wait_for_selector("#tab-run")
    assert page.is_visible("#scenario-search")
    for selector in ("#upload-form", "#upload-file", "#scenario-fork", "#scenario-fork-form", "#edit-mode",
                     "#tab-changes", "#modules-form", "#candidate-form", "#fail-form"):
        assert page.locator(selector).count() == 0, selector
    assert page.problems == []
