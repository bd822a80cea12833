"""The browser workspace's server side: the page at ``/`` with its strict content security policy, its bundled
assets and licences, ``GET /v1/whoami`` (who a token is) and ``GET /v1/basemap`` (the land under the map)."""

from __future__ import annotations

import re

from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.store import Store
from backbone.api.web import WORKSPACE_CSP, static_dir, workspace_csp
from backbone.io import network_to_dict
from backbone.model import Network


def test_page_is_served_with_a_strict_policy(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"] == WORKSPACE_CSP
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-cache"
    policy = dict(part.strip().split(" ", 1) for part in WORKSPACE_CSP.split(";"))
    assert policy["script-src"] == "'self'" and policy["default-src"] == "'none'"
    assert "unsafe" not in WORKSPACE_CSP and "http" not in WORKSPACE_CSP and "blob:" not in policy["worker-src"]
    assert client.head("/").status_code == 200


def test_policy_with_single_sign_on_adds_only_the_token_endpoint() -> None:
    """With single sign-on the page may also post to the issuer's token endpoint (exactly that URL); every other
    directive is the strict policy's (the sign-in is a top-level navigation, which no directive governs)."""
    token = "https://sso.example.com/realms/backbone/protocol/openid-connect/token"
    strict = dict(part.strip().split(" ", 1) for part in WORKSPACE_CSP.split(";"))
    sso = dict(part.strip().split(" ", 1) for part in workspace_csp(token).split(";"))
    assert sso.pop("connect-src") == f"'self' {token}" and strict.pop("connect-src") == "'self'"
    assert sso == strict and sso["form-action"] == "'none'"
    assert f"connect-src 'self' {token};" in workspace_csp(f"{token}?p=b2c_1_signin")  # a source has no query


def test_page_uses_relative_urls_and_no_inline_script() -> None:
    """Relative URLs only (the app may sit behind a path prefix); every script is a file (the policy forbids
    inline script)."""
    page = (static_dir() / "index.html").read_text(encoding="utf-8")
    urls = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert urls and all(not u.startswith(("/", "http:", "https:", "//")) for u in urls), urls
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, flags=re.S)
    assert scripts and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert "style=" not in page and "<style" not in page


def test_assets_and_licences_are_served(client: TestClient) -> None:
    for name, media in (("app.js", "text/javascript"), ("app.css", "text/css"),
                        ("maplibre-gl-worker.mjs", "text/javascript")):
        r = client.get(f"/ui/{name}")
        assert r.status_code == 200, name
        assert r.headers["content-type"].startswith(media) and r.headers["x-content-type-options"] == "nosniff"
    licences = client.get("/ui/THIRD_PARTY_LICENSES.txt").text
    assert "maplibre-gl 6.20.0  (BSD-3-Clause)" in licences and "Natural Earth" in licences
    bundle = (static_dir() / "app.js").read_text(encoding="utf-8")
    assert "maplibre-gl-worker.mjs" in bundle  # MapLibre starts its worker from the file served beside app.js
    assert client.get("/index.html", follow_redirects=False).headers["location"] == "./"


def test_page_behind_a_path_prefix(client: TestClient) -> None:
    """A reverse proxy at /backbone/ (root_path): the page and its assets answer under the prefix."""
    app = create_app(client.app.state.settings)  # type: ignore[attr-defined]
    with TestClient(app, root_path="/backbone") as prefixed:
        assert prefixed.get("/backbone/").status_code == 200
        assert prefixed.get("/backbone/ui/app.js").status_code == 200


def test_whoami_names_role_and_team(client: TestClient, tokens: dict[str, str]) -> None:
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    team = store.create_team("Network Planning")
    _tok, plain = store.create_token("planner", "alice-laptop", team=team.id)
    me = client.get("/v1/whoami", headers=auth(plain)).json()
    assert me["name"] == "alice-laptop" and me["scope"] == "planner"
    assert me["team_id"] == team.id and me["team_name"] == "Network Planning"
    assert me["can_write"] is True and me["can_admin"] is False
    viewer = client.get("/v1/whoami", headers=auth(tokens["viewer"])).json()
    assert viewer["scope"] == "viewer" and viewer["team_id"] is None and viewer["team_name"] is None
    assert viewer["can_write"] is False
    assert client.get("/v1/whoami", headers=auth(tokens["admin"])).json()["can_admin"] is True


def test_whoami_refuses_a_bad_token_with_a_problem(client: TestClient) -> None:
    r = client.get("/v1/whoami", headers=auth("bbk_not-a-token"))
    assert r.status_code == 401 and r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["detail"] == "invalid, expired or revoked token"
    assert client.get("/v1/whoami").status_code == 401


def test_basemap_is_natural_earth_land(client: TestClient, tokens: dict[str, str]) -> None:
    r = client.get("/v1/basemap", headers=auth(tokens["viewer"]))
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/geo+json")
    doc = r.json()
    assert doc["type"] == "FeatureCollection" and len(doc["features"]) > 150
    assert {f["geometry"]["type"] for f in doc["features"]} <= {"Polygon", "MultiPolygon"}
    assert client.get("/v1/basemap").status_code == 401


def test_openapi_documents_the_workspace_endpoints(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert paths["/v1/whoami"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/WhoAmI")
    assert "application/geo+json" in paths["/v1/basemap"]["get"]["responses"]["200"]["content"]
    assert "/" not in paths and not any(p.startswith("/ui") for p in paths)


def test_job_kinds_publish_the_options_schemas_the_cli_uses(client: TestClient, tokens: dict[str, str]) -> None:
    """``GET /v1/job-kinds``: every shipped kind with the JSON schema of the options model the CLI's flags and the
    job validation come from, defaults included (the workspace's Run form is built from it)."""
    from backbone.solver.tasks.registry import TASKS

    r = client.get("/v1/job-kinds", headers=auth(tokens["viewer"]))
    assert r.status_code == 200
    kinds = {k["kind"]: k for k in r.json()}
    assert {"te", "failures", "place", "design", "plan", "roadmap"} <= set(kinds)
    for kind, task in TASKS.items():
        assert kinds[kind]["options_schema"] == task.options_model.model_json_schema()
    te = kinds["te"]["options_schema"]["properties"]
    assert te["k_paths"]["default"] == 4 and te["k_paths"]["minimum"] == 1
    assert te["objective"]["default"] in te["objective"]["enum"]
    assert client.get("/v1/job-kinds").status_code == 401
    paths = client.get("/openapi.json").json()["paths"]
    assert paths["/v1/job-kinds"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["items"][
        "$ref"].endswith("/JobKind")


def test_bad_job_option_is_a_problem_naming_the_field(client: TestClient, tokens: dict[str, str],
                                                       triangle: Network) -> None:
    """What the Run form shows beside a field: the 422 problem's ``errors`` name the option as ``field``."""
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tokens["planner"])).json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", headers=auth(tokens["planner"]),
                    json={"kind": "te", "options": {"k_paths": 0}})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    assert [(e["table"], e["field"]) for e in r.json()["errors"]] == [("options", "k_paths")]
