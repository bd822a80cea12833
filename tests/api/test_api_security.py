"""Attacks from issue #13, each reproduced through the API and shown to fail safely.

Server files through options or scenario fields (1), network addresses through options (2), and odd
input that used to give 500s or corrupt data (6).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.api.input_policy import server_job_options
from backbone.io import network_to_dict
from backbone.model import Network

SNDLIB = Path(__file__).resolve().parent.parent / "data" / "sndlib"
SECRET = "hunter2-do-not-leak"


def _post_job(client: TestClient, tok: str, sid: str, kind: str, options: dict[str, Any]) -> Any:
    return client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": options}, headers=auth(tok))


def _wait(client: TestClient, tok: str, jid: str) -> dict[str, Any]:
    return wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                    lambda j: j["status"] in FINAL, timeout_s=120)


def _fields(r: Any) -> set[str]:
    return {e["field"] for e in r.json()["errors"]}


def _scenario(client: TestClient, tok: str, doc: dict[str, Any]) -> str:
    r = client.post("/v1/scenarios", json=doc, headers=auth(tok))
    assert r.status_code == 201, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- 1. server files
def test_design_model_file_is_refused(client: TestClient, tokens: dict[str, str], triangle: Network,
                                      tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(f"TOKEN = {SECRET}\n")
    tok = tokens["planner"]
    sid = _scenario(client, tok, network_to_dict(triangle))
    for path in ("/etc/passwd", "/proc/self/environ", str(secret)):
        r = _post_job(client, tok, sid, "design", {"model_file": path})
        assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
        assert _fields(r) == {"model_file"} and SECRET not in r.text
    r = _post_job(client, tok, sid, "plan", {"plan_file": str(secret)})
    assert r.status_code == 422 and _fields(r) == {"plan_file"}
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []  # nothing was queued


def test_scenario_naming_a_server_file_is_refused(client: TestClient, tokens: dict[str, str],
                                                  triangle: Network) -> None:
    tok = tokens["planner"]
    doc = network_to_dict(triangle)
    doc["meta"] = {**doc["meta"], "sndlib": {"file": "/etc/passwd"}}
    r = client.post("/v1/scenarios", json=doc, headers=auth(tok))
    assert r.status_code == 422 and _fields(r) == {"meta.sndlib.file"}
    sid = _scenario(client, tok, network_to_dict(triangle))
    r = client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(tok))
    assert r.status_code == 422 and _fields(r) == {"meta.sndlib.file"}


@pytest.mark.slow
def test_a_stored_file_reference_is_never_read(client: TestClient, tokens: dict[str, str], triangle: Network,
                                               tmp_path: Path) -> None:
    """A scenario stored before the fix (meta.sndlib.file set) designs from its own data; the file is not read."""
    secret = tmp_path / "secret.txt"
    secret.write_text(f"?SNDlib native format; type: network\nLINKS ( {SECRET} )\n")
    store = client.app.state.store  # type: ignore[attr-defined]
    doc = network_to_dict(triangle)
    doc["meta"] = {**doc["meta"], "sndlib": {"file": str(secret)}}
    sc, _ = store.create_scenario(doc, {"sites": 3, "links": 3, "demands": 1}, "canonical-json",
                                  store.authenticate(tokens["planner"]))
    r = _post_job(client, tokens["planner"], sc.id, "design", {"model": "D-B-M-N-C-A-N-N", "time_limit_s": 30})
    assert r.status_code == 202, r.text
    job = _wait(client, tokens["viewer"], r.json()["id"])
    assert job["status"] == "succeeded", job
    assert SECRET not in json.dumps(job)
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tokens["viewer"]))
    assert SECRET not in result.text


def test_unexpected_errors_do_not_reach_viewers(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    """A task failing with an unexpected exception: viewers see its type, not its text (the server log has it)."""
    sid = _scenario(client, tokens["planner"], network_to_dict(triangle))
    r = _post_job(client, tokens["planner"], sid, "leaky", {})
    assert r.status_code == 202
    job = _wait(client, tokens["viewer"], r.json()["id"])
    assert job["status"] == "failed" and job["error"]["status"] == 500
    assert job["error"]["detail"].startswith("OSError") and SECRET not in json.dumps(job) and "/srv" not in json.dumps(job)


@pytest.mark.slow
def test_sndlib_design_on_an_uploaded_scenario(client: TestClient, tokens: dict[str, str]) -> None:
    """Upload an SNDlib file, then solve its survivable model through the API (hand-computed optimum 197)."""
    tok = tokens["planner"]
    r = client.post("/v1/scenarios", files={"file": ("routing.txt", (SNDLIB / "routing.txt").read_bytes())},
                    headers=auth(tok))
    assert r.status_code == 201, r.text
    assert r.json()["name"] == "routing"  # named after the upload, not the scratch file
    sid = r.json()["id"]
    content = client.get(f"/v1/scenarios/{sid}", headers=auth(tok)).json()["content"]
    assert "file" not in content["meta"]["sndlib"] and content["meta"]["sources"][0]["file"] == "routing.txt"
    assert "uploads" not in json.dumps(content)
    r = _post_job(client, tok, sid, "design", {"model": "U-U-M-N-C-A-N-U", "time_limit_s": 30, "verify": True})
    assert r.status_code == 202, r.text
    job = _wait(client, tok, r.json()["id"])
    assert job["status"] == "succeeded", job
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
    assert result["cost"] == pytest.approx(197.0) and result["verification"]["ok"]
    assert "design.sol.txt" in job["files"]
    sol = client.get(f"/v1/jobs/{job['id']}/files/design.sol.txt", headers=auth(tok))
    assert sol.status_code == 200 and "LINK-CONFIGURATIONS" in sol.text


def test_bad_sndlib_model_code_is_refused_before_queueing(client: TestClient, tokens: dict[str, str],
                                                          triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, network_to_dict(triangle))
    r = _post_job(client, tok, sid, "design", {"model": "X-X-X"})
    assert r.status_code == 422 and _fields(r) == {"model"}


# ---------------------------------------------------------------------- 2. network addresses
def test_dask_scheduler_option_is_refused(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, network_to_dict(triangle))
    r = _post_job(client, tok, sid, "failures", {"engine": "dask", "scheduler": "tcp://203.0.113.7:8786"})
    assert r.status_code == 422 and _fields(r) == {"scheduler"}
    assert "BACKBONE_DASK_SCHEDULER" in r.text
    r = _post_job(client, tok, sid, "plan", {"failures": {"engine": "dask", "scheduler": "tcp://203.0.113.7:8786"}})
    assert r.status_code == 422 and _fields(r) == {"failures.scheduler"}
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []


def test_dask_scheduler_comes_from_server_settings() -> None:
    assert server_job_options("failures", {"engine": "dask"}, "tcp://10.0.0.1:8786")["scheduler"] == \
        "tcp://10.0.0.1:8786"
    assert "scheduler" not in server_job_options("failures", {"engine": "local"}, "tcp://10.0.0.1:8786")
    assert "scheduler" not in server_job_options("failures", {"engine": "dask"}, "")
    plan = server_job_options("plan", {"failures": {"engine": "dask"}}, "tcp://10.0.0.1:8786")
    assert plan["failures"]["scheduler"] == "tcp://10.0.0.1:8786"


# ---------------------------------------------------------------------- 6. odd input
@pytest.mark.parametrize("name", ["東京バックボーン", "backbone 🚀 net", "\u202eevil\u200f.exe", 'quo"te\\name'])
def test_map_of_a_scenario_named_in_any_script(client: TestClient, tokens: dict[str, str], triangle: Network,
                                               name: str) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, {**network_to_dict(triangle), "name": name})
    r = client.get(f"/v1/scenarios/{sid}/map", params={"format": "geojson"}, headers=auth(tok))
    assert r.status_code == 200, r.text
    header = r.headers["content-disposition"]
    assert header.isascii() and header.startswith('inline; filename="')
    shown = name.replace("\u202e", "").replace("\u200f", "")  # direction marks never reach a header
    if not shown.isascii() or '"' in shown:
        from urllib.parse import unquote

        encoded = header.split("filename*=UTF-8''")[1]
        assert unquote(encoded) == f"{shown}-v1.geojson"
    else:
        assert header == f'inline; filename="{shown}-v1.geojson"'


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_deeply_nested_json_is_a_client_error(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    deep = _nested(5000)
    body = json.dumps({**network_to_dict(triangle), "meta": {"x": 1}}).replace('{"x": 1}', f'{{"x": {deep}}}')
    r = client.post("/v1/scenarios", content=body, headers=auth(tok, **{"Content-Type": "application/json"}))
    assert 400 <= r.status_code < 500, r.text
    body = json.dumps({**network_to_dict(triangle), "meta": {"x": 1}}).replace('{"x": 1}', f'{{"x": {_nested(200)}}}')
    r = client.post("/v1/scenarios", content=body, headers=auth(tok, **{"Content-Type": "application/json"}))
    assert r.status_code == 422 and _fields(r) == {"meta.x" + ".0" * 31}
    sid = _scenario(client, tok, network_to_dict(triangle))
    r = client.post(f"/v1/scenarios/{sid}/jobs", content=f'{{"kind": "te", "options": {{"x": {deep}}}}}',
                    headers=auth(tok, **{"Content-Type": "application/json"}))
    assert 400 <= r.status_code < 500, r.text
    r = client.post(f"/v1/scenarios/{sid}/jobs", content=f'{{"kind": "te", "options": {{"x": {_nested(100)}}}}}',
                    headers=auth(tok, **{"Content-Type": "application/json"}))
    assert r.status_code == 422, r.text
    for name in ("deep.yaml", "deep.json"):  # uploads too
        r = client.post("/v1/scenarios", files={"file": (name, f'{{"sites": {deep}}}'.encode())}, headers=auth(tok))
        assert r.status_code == 422, (name, r.text)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(client: TestClient, tokens: dict[str, str], triangle: Network,
                                        value: str) -> None:
    tok = tokens["planner"]
    body = json.dumps({**network_to_dict(triangle), "meta": {"weight": 1.5}}).replace("1.5", value)
    r = client.post("/v1/scenarios", content=body, headers=auth(tok, **{"Content-Type": "application/json"}))
    assert r.status_code == 422 and _fields(r) == {"meta.weight"}
    sid = _scenario(client, tok, network_to_dict(triangle))
    for kind in ("te", "place", "failures", "design"):
        r = client.post(f"/v1/scenarios/{sid}/jobs", content=f'{{"kind": "{kind}", "options": {{"time_limit_s": {value}}}}}',
                        headers=auth(tok, **{"Content-Type": "application/json"}))
        assert r.status_code == 422 and _fields(r) == {"time_limit_s"}, (kind, r.text)
    r = _post_job(client, tok, sid, "te", {"time_limit_s": 1e12})
    assert r.status_code == 422 and _fields(r) == {"time_limit_s"}


def test_huge_whole_numbers_are_refused(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    doc = network_to_dict(triangle)
    doc["sites"][0]["gpus_installed"] = 1e30
    r = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"]))
    assert r.status_code == 422 and _fields(r) == {"gpus_installed"}
    assert "out of range" in r.text


@pytest.mark.slow
def test_co_located_sites_get_the_minimum_length(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    site = {"lon": 139.69, "lat": 35.69, "region": "APAC"}
    doc = {"name": "campus", "sites": [{"id": "H1", **site}, {"id": "H2", **site}],
           "links": [{"id": "L", "site_a": "H1", "site_b": "H2", "capacity_gbps": 100}],
           "demands": [{"id": "d", "src": "H1", "dst": "H2", "demand_gbps": 10}]}
    sid = _scenario(client, tok, doc)
    link = client.get(f"/v1/scenarios/{sid}", headers=auth(tok)).json()["content"]["links"][0]
    assert link["length_km"] == pytest.approx(0.1) and link["latency_ms"] > 0
    r = _post_job(client, tok, sid, "te", {"time_limit_s": 30})
    assert r.status_code == 202
    assert _wait(client, tok, r.json()["id"])["status"] == "succeeded"


def test_nested_plan_options_and_backends_are_checked_before_queueing(client: TestClient, tokens: dict[str, str],
                                                                      triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, network_to_dict(triangle))
    r = _post_job(client, tok, sid, "te", {"backend": "rm -rf /"})
    assert r.status_code == 422 and _fields(r) == {"backend"}
    r = _post_job(client, tok, sid, "plan", {"failures": {"backend": "nope", "paths": 0}, "te": {"bogus": 1},
                                             "design": {"ceiling": 2, "survive": "maybe"}})
    assert r.status_code == 422
    assert _fields(r) == {"failures.backend", "failures.paths", "te.bogus", "design.ceiling", "design.survive"}
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []


# ---------------------------------------------------------------------- issue #26 item 8: browser hardening
def _csp(response: Any) -> dict[str, list[str]]:
    """The Content-Security-Policy header as ``directive -> sources``."""
    policy: dict[str, list[str]] = {}
    for part in response.headers["content-security-policy"].split(";"):
        words = part.split()
        if words:
            policy[words[0]] = words[1:]
    return policy


@pytest.mark.slow
def test_every_response_is_hardened_and_documents_get_a_strict_policy(client: TestClient, tokens: dict[str, str],
                                                                       triangle: Network) -> None:
    """nosniff, no referrer and no framing everywhere; HTML and SVG get a policy that runs the self-contained
    map page (inline script and style) but lets it load, send or embed nothing."""
    import re

    tok = tokens["viewer"]
    sid = _scenario(client, tokens["planner"], network_to_dict(triangle))
    responses = {"json": client.get("/v1/scenarios", headers=auth(tok)), "problem": client.get("/v1/scenarios"),
                 "health": client.get("/healthz"),
                 "html map": client.get(f"/v1/scenarios/{sid}/map", params={"format": "html"}, headers=auth(tok)),
                 "svg map": client.get(f"/v1/scenarios/{sid}/map", params={"format": "svg", "size": "320x200"},
                                       headers=auth(tok))}
    for what, r in responses.items():
        assert r.headers["x-content-type-options"] == "nosniff", what
        assert r.headers["referrer-policy"] == "no-referrer" and r.headers["x-frame-options"] == "DENY", what
    for what in ("html map", "svg map"):
        r = responses[what]
        assert r.status_code == 200, (what, r.text[:300])
        policy = _csp(r)
        assert policy["default-src"] == ["'none'"] and policy["connect-src"] == ["'none'"], policy
        assert policy["frame-ancestors"] == ["'none'"] and policy["base-uri"] == ["'none'"], policy
        assert policy["form-action"] == ["'none'"] and policy["script-src"] == ["'unsafe-inline'"], policy
    # the self-contained map page needs nothing the policy forbids: inline script and style, data: icon
    page = responses["html map"].text
    assert "<script src" not in page and "<link rel=\"stylesheet\"" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the map page loads something from elsewhere"
    assert "content-security-policy" not in responses["json"].headers


def test_api_docs_pages_load_only_from_this_origin(client: TestClient) -> None:
    """Swagger UI and ReDoc are served from the package: every script, style sheet and icon they name is on this
    origin and is served, and their policy names no other origin (they draw offline)."""
    import re

    for path in ("/docs", "/redoc"):
        r = client.get(path)
        assert r.status_code == 200 and r.headers["x-content-type-options"] == "nosniff"
        policy = _csp(r)
        assert policy["frame-ancestors"] == ["'none'"] and "'self'" in policy["connect-src"]
        assert not re.search(r"https?:|//[a-z]", r.headers["content-security-policy"]), policy
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", r.text), r.text
        assets = re.findall(r"""(?:src|href)=["'](/docs-assets/[^"']+)""", r.text)
        assets += re.findall(r"""['"](/docs-assets/[^"']+\.(?:js|css))['"]""", r.text)
        assert assets, r.text
        for asset in set(assets):
            got = client.get(asset)
            assert got.status_code == 200 and len(got.content) > 1000, asset