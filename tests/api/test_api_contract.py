"""The contract of issue #13 item 8: the OpenAPI document describes what the server sends, and the
documented behaviour holds (405 Allow, 415, UTC offsets, unconditional PUT under concurrency)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.io import network_to_dict
from backbone.model import Network

PROBLEM = "application/problem+json"


def test_openapi_describes_every_error_as_a_problem_document(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    ops = [(path, method, op) for path, item in doc["paths"].items() for method, op in item.items()]
    assert len(ops) >= 18
    for path, method, op in ops:
        codes = {int(c) for c in op["responses"] if c.isdigit()}
        assert {431, 500} <= codes, (path, method)
        if op.get("security"):
            assert {401, 403, 429, 503} <= codes, (path, method)  # failed-auth rate limit, storage or IdP down
        if "requestBody" in op:
            assert {400, 408, 413, 415, 422} <= codes, (path, method)  # 408: the body deadline
        for code, resp in op["responses"].items():
            if int(code) >= 400:
                assert list(resp["content"]) == [PROBLEM], (path, method, code)
                assert resp["content"][PROBLEM]["schema"] == {"$ref": "#/components/schemas/ProblemDetails"}
    created = doc["components"]["schemas"]["ScenarioPublic"]["properties"]["created_at"]
    assert created["format"] == "date-time"


def test_405_names_every_allowed_method(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
    r = client.patch(f"/v1/scenarios/{sid}", headers=auth(tok))
    assert r.status_code == 405 and r.headers["content-type"].startswith(PROBLEM)
    assert set(r.headers["allow"].split(", ")) == {"GET", "PUT", "DELETE"}
    r = client.put("/v1/scenarios", headers=auth(tok))
    assert r.status_code == 405 and set(r.headers["allow"].split(", ")) == {"GET", "POST"}


def test_non_json_bodies_get_415(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["admin"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
    for path, body in ((f"/v1/scenarios/{sid}/jobs", '{"kind": "te"}'), ("/v1/tokens", '{"scope": "viewer"}'),
                       ("/v1/scenarios", "{}")):
        r = client.post(path, content=body, headers=auth(tok, **{"Content-Type": "text/plain"}))
        assert r.status_code == 415 and r.headers["content-type"].startswith(PROBLEM), (path, r.text)
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []


def _utc(stamp: str | None) -> bool:
    return stamp is None or stamp.endswith(("Z", "+00:00"))


def test_timestamps_carry_a_utc_offset(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["admin"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
    client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {"seconds": 0}}, headers=auth(tok))
    rows: list[dict[str, Any]] = [*client.get("/v1/scenarios", headers=auth(tok)).json(),
                                  *client.get(f"/v1/scenarios/{sid}/versions", headers=auth(tok)).json(),
                                  *client.get("/v1/jobs", headers=auth(tok)).json(),
                                  *client.get("/v1/tokens", headers=auth(tok)).json(),
                                  *client.get("/v1/audit", headers=auth(tok)).json()]
    stamps = [v for row in rows for k, v in row.items() if k.endswith("_at") or k == "at"]
    assert stamps and all(_utc(s) for s in stamps), stamps


@pytest.mark.slow
def test_put_without_if_match_is_unconditional_under_concurrency(client: TestClient, tokens: dict[str, str],
                                                                 triangle: Network) -> None:
    tok = tokens["planner"]
    doc = network_to_dict(triangle)
    sid = client.post("/v1/scenarios", json=doc, headers=auth(tok)).json()["id"]
    statuses: list[int] = []
    lock = threading.Lock()

    def writer() -> None:
        for _ in range(5):
            code = client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(tok)).status_code
            with lock:
                statuses.append(code)

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 40
    assert client.get(f"/v1/scenarios/{sid}", headers=auth(tok)).json()["version"] == 41
