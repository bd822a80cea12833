"""Scenarios through the API: create (JSON and uploads), read, versions, ETag/If-Match, delete,
bad inputs (each a 4xx naming the problem, nothing stored), size limits, problem details."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.io import network_to_dict
from backbone.model import Network

PROBLEM = "application/problem+json"


def create(client: TestClient, token: str, doc: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/v1/scenarios", json=doc, headers=auth(token))
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def count_scenarios(client: TestClient, token: str) -> int:
    return len(client.get("/v1/scenarios", headers=auth(token)).json())


def test_create_read_roundtrip(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    doc = network_to_dict(triangle)
    made = create(client, tokens["planner"], doc)
    uuid.UUID(made["id"])
    assert made["version"] == 1 and (made["sites"], made["links"], made["demands"]) == (3, 3, 1)
    r = client.get(f"/v1/scenarios/{made['id']}", headers=auth(tokens["viewer"]))
    assert r.status_code == 200
    assert r.headers["etag"] == f"W/{made['etag']}"  # gzip'd (the client accepts it): the weak form
    body = r.json()
    assert body["content"]["name"] == "triangle"
    assert {s["id"] for s in body["content"]["sites"]} == {"A", "B", "C"}
    assert {lk["id"]: lk["capacity_gbps"] for lk in body["content"]["links"]} == {"AB": 10, "BC": 10, "AC": 10}
    # the stored content is canonical: reading it back and posting it again gives the same ETag hash
    again = create(client, tokens["planner"], body["content"])
    assert again["etag"].split("-")[1] == made["etag"].split("-")[1]
    listed = client.get("/v1/scenarios", headers=auth(tokens["viewer"])).json()
    assert {s["id"] for s in listed} == {made["id"], again["id"]}
    # conditional GET
    r304 = client.get(f"/v1/scenarios/{made['id']}", headers=auth(tokens["viewer"], **{"If-None-Match": made["etag"]}))
    assert r304.status_code == 304


def test_versions_and_optimistic_concurrency(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    doc = network_to_dict(triangle)
    made = create(client, tok, doc)
    sid, etag1 = made["id"], made["etag"]
    doc2 = json.loads(json.dumps(doc))
    doc2["links"][0]["capacity_gbps"] = 40
    r = client.put(f"/v1/scenarios/{sid}", json=doc2, headers=auth(tok, **{"If-Match": etag1}))
    assert r.status_code == 200, r.text
    assert r.json()["version"] == 2
    etag2 = r.headers["etag"]
    assert etag2 != etag1
    # a second writer still holding version 1's ETag loses: 409, nothing stored
    doc3 = json.loads(json.dumps(doc))
    doc3["links"][0]["capacity_gbps"] = 30  # within the link's ceiling (40): refused only as stale
    stale = client.put(f"/v1/scenarios/{sid}", json=doc3, headers=auth(tok, **{"If-Match": etag1}))
    assert stale.status_code == 409
    assert stale.headers["content-type"].startswith(PROBLEM)
    assert "stale" in stale.json()["detail"]
    versions = client.get(f"/v1/scenarios/{sid}/versions", headers=auth(tok)).json()
    assert [v["version"] for v in versions] == [1, 2]
    v1 = client.get(f"/v1/scenarios/{sid}?version=1", headers=auth(tok)).json()
    v2 = client.get(f"/v1/scenarios/{sid}", headers=auth(tok)).json()
    cap = {v: {lk["id"]: lk["capacity_gbps"] for lk in d["content"]["links"]} for v, d in ((1, v1), (2, v2))}
    assert cap[1]["AB"] == 10 and cap[2]["AB"] == 40
    # stale delete is refused too; the current ETag deletes
    assert client.delete(f"/v1/scenarios/{sid}", headers=auth(tok, **{"If-Match": etag1})).status_code == 409
    assert client.delete(f"/v1/scenarios/{sid}", headers=auth(tok, **{"If-Match": etag2})).status_code == 204
    gone = client.get(f"/v1/scenarios/{sid}", headers=auth(tok))
    assert gone.status_code == 404 and gone.headers["content-type"].startswith(PROBLEM)
    assert count_scenarios(client, tok) == 0


def test_upload_formats(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    payload = json.dumps(network_to_dict(triangle)).encode()
    r = client.post("/v1/scenarios", files={"file": ("../../etc/passwd.json", payload, "application/json")},
                    headers=auth(tok))
    assert r.status_code == 201, r.text
    assert r.json()["source_format"] == "canonical-json" and r.json()["sites"] == 3
    import yaml

    r = client.post("/v1/scenarios", files={"file": ("tri.yaml", yaml.safe_dump(network_to_dict(triangle)).encode())},
                    headers=auth(tok))
    assert r.status_code == 201, r.text
    assert r.json()["source_format"] == "canonical-yaml"
    graphml = b"""<?xml version="1.0" encoding="UTF-8"?>
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
    r = client.post("/v1/scenarios", files={"file": ("zoo.graphml", graphml)}, headers=auth(tok))
    assert r.status_code == 201, r.text
    assert r.json()["sites"] == 2 and r.json()["links"] == 1
    # nothing of the uploads is left on disk
    assert not any((client.app.state.settings.data_dir / "uploads").iterdir())  # type: ignore[attr-defined]


BAD_JSON_CASES = [
    ("not json", b"{nope", "request body"),
    ("unpaired surrogate", b'{"name": "x", "sites": [{"id": "A\\udc00", "lon": 0, "lat": 0, "region": "NA"}]}',
     "Unicode"),
    ("records without fields", b'{"sites": [{"id": "A", "lon": 0, "lat": 0, "region": "NA"}], "links": [{}]}',
     "id"),
    ("missing site field", None, "lat"),
    ("unknown link endpoint", None, "site_b"),
    ("negative capacity", None, "capacity_gbps"),
    ("unknown table", None, "bogus"),
]


def _bad_doc(case: str, triangle: Network) -> dict[str, Any]:
    doc = network_to_dict(triangle)
    if case == "missing site field":
        del doc["sites"][0]["lat"]
    elif case == "unknown link endpoint":
        doc["links"][0]["site_b"] = "NOWHERE"
    elif case == "negative capacity":
        doc["links"][1]["capacity_gbps"] = -5
    elif case == "unknown table":
        doc["bogus"] = []
    return doc


@pytest.mark.parametrize(("case", "raw", "named"), BAD_JSON_CASES, ids=[c[0] for c in BAD_JSON_CASES])
def test_bad_scenarios_are_422_naming_the_problem(client: TestClient, tokens: dict[str, str], triangle: Network,
                                                 case: str, raw: bytes | None, named: str) -> None:
    tok = tokens["planner"]
    if raw is not None:
        r = client.post("/v1/scenarios", content=raw, headers=auth(tok, **{"Content-Type": "application/json"}))
    else:
        r = client.post("/v1/scenarios", json=_bad_doc(case, triangle), headers=auth(tok))
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == 422 and body["title"] and body["errors"]
    assert any(named in " ".join(str(v) for v in e.values()) for e in body["errors"]), body
    assert set(body["errors"][0]) == {"file", "table", "record", "field", "message"}
    assert count_scenarios(client, tok) == 0
    audit = client.get("/v1/audit", headers=auth(tokens["admin"])).json()
    assert not [a for a in audit if a["action"].startswith("scenario.")]


def test_bad_uploads(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    r = client.post("/v1/scenarios", files={"file": ("evil.exe", b"MZ")}, headers=auth(tok))
    assert r.status_code == 422 and "unsupported file type" in r.text
    assert r.json()["errors"][0]["field"] == "file"
    r = client.post("/v1/scenarios", files={"other": ("a.json", b"{}")}, headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "file"
    doc = network_to_dict(triangle)
    doc["links"][0]["site_a"] = "ZZ"
    r = client.post("/v1/scenarios", files={"file": ("mine.json", json.dumps(doc).encode())}, headers=auth(tok))
    assert r.status_code == 422
    err = r.json()["errors"]
    assert any(e["field"] == "site_a" and e["record"] == "AB" for e in err), err
    assert all("uploads" not in e["file"] for e in err), "server paths must not leak"
    assert any(e["file"] == "mine.json" for e in err), err
    r = client.post("/v1/scenarios", content=b"a,b", headers=auth(tok, **{"Content-Type": "text/csv"}))
    assert r.status_code == 415
    assert count_scenarios(client, tok) == 0


def test_size_limits(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    # over max_sites (50 in the test settings) -> 422 naming the table
    sites = [{"id": f"s{i}", "name": f"s{i}", "lon": i * 0.5, "lat": 10.0, "region": "NA"} for i in range(60)]
    r = client.post("/v1/scenarios", json={"name": "big", "sites": sites}, headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"][0]["table"] == "sites"
    assert "limit of 50" in r.json()["errors"][0]["message"]
    # a body over max_body_bytes (256 KiB) -> 413 before parsing
    huge = {"name": "x" * (300 * 1024), "sites": []}
    r = client.post("/v1/scenarios", json=huge, headers=auth(tok))
    assert r.status_code == 413 and r.headers["content-type"].startswith(PROBLEM)
    assert count_scenarios(client, tok) == 0


def test_problem_details_for_framework_errors(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["viewer"]
    for path, status in (("/v1/nowhere", 404), ("/v1/scenarios/not-a-uuid", 422),
                         (f"/v1/scenarios/{uuid.uuid4()}", 404), ("/v1/scenarios?limit=0", 422)):
        r = client.get(path, headers=auth(tok))
        assert r.status_code == status, (path, r.text)
        assert r.headers["content-type"].startswith(PROBLEM)
        body = r.json()
        assert body["status"] == status and body["title"] and "errors" in body
        if status == 422:
            assert body["errors"] and body["errors"][0]["field"]
    r = client.patch("/v1/scenarios", headers=auth(tok))
    assert r.status_code == 405 and r.headers["content-type"].startswith(PROBLEM)


def test_openapi_and_docs(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert spec["info"]["title"] == "backbone planning API"
    for path in ("/v1/scenarios", "/v1/scenarios/{scenario_id}", "/v1/scenarios/{scenario_id}/jobs",
                 "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/result", "/v1/scenarios/{scenario_id}/map", "/v1/audit"):
        assert path in spec["paths"]
    body = spec["paths"]["/v1/scenarios"]["post"]["requestBody"]["content"]
    assert {"application/json", "multipart/form-data"} <= set(body)
    assert client.get("/docs").status_code == 200
