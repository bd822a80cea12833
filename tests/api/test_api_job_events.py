"""GET /v1/jobs/{id}/events: a job's progress as server-sent events, authenticated and scoped like GET /v1/jobs/{id},
closed when the job ends or after the time cap, and documented in the OpenAPI document."""

from __future__ import annotations

import json
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.api.routes import job_events
from backbone.io import network_to_dict
from backbone.model import Network


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of an event stream (comments and the retry field skipped)."""
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":")
                      and ": " in line)
        if "event" in fields:
            out.append((fields["event"], json.loads(fields["data"])))
    return out


def _start(client: TestClient, token: str, net: Network, options: dict[str, Any]) -> str:
    sid = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(token)).json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": options}, headers=auth(token))
    assert r.status_code == 202, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


@pytest.mark.slow
def test_events_follow_a_job_to_its_end(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["viewer"]
    jid = _start(client, tokens["planner"], triangle, {"steps": 8, "step_s": 0.25})
    r = client.get(f"/v1/jobs/{jid}/events", headers=auth(tok))
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-store"
    events = _events(r.text)
    jobs = [data for name, data in events if name == "job"]
    assert events[-1] == ("end", {"reason": "finished", "status": "succeeded"})
    assert len(jobs) >= 2 and jobs[-1]["status"] == "succeeded"
    fractions = [j["progress"]["fraction"] for j in jobs]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert len({(j["status"], j["progress"]["fraction"], j["progress"]["message"]) for j in jobs}) == len(jobs)  # changes only
    assert jobs[-1] == client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json()  # the same document as GET
    # a finished job's stream: its state, then the end at once
    again = _events(client.get(f"/v1/jobs/{jid}/events", headers=auth(tok)).text)
    assert [name for name, _ in again] == ["job", "end"]


@pytest.mark.slow
def test_events_stop_at_the_time_cap(client: TestClient, tokens: dict[str, str], triangle: Network,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tok = tokens["planner"]
    jid = _start(client, tok, triangle, {"steps": 200, "step_s": 0.1})
    monkeypatch.setattr(job_events, "EVENTS_MAX_S", 1.0)
    events = _events(client.get(f"/v1/jobs/{jid}/events", headers=auth(tok)).text)
    assert events[-1] == ("end", {"reason": "time cap", "max_s": 1.0})
    assert all(data["status"] in ("queued", "running") for name, data in events if name == "job")
    assert client.delete(f"/v1/jobs/{jid}", headers=auth(tok)).status_code == 200
    wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(), lambda j: j["status"] in FINAL)


def test_events_are_authenticated_and_scoped(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    admin = tokens["admin"]
    for team in ("red", "blue"):
        assert client.post("/v1/teams", json={"name": team}, headers=auth(admin)).status_code == 201
    red = client.post("/v1/tokens", json={"scope": "planner", "name": "red", "team": "red"}, headers=auth(admin))
    blue = client.post("/v1/tokens", json={"scope": "viewer", "name": "blue", "team": "blue"}, headers=auth(admin))
    jid = _start(client, red.json()["token"], triangle, {"steps": 1, "step_s": 0.01})
    r = client.get(f"/v1/jobs/{jid}/events", headers=auth(blue.json()["token"]))
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json")
    assert client.get(f"/v1/jobs/{jid}", headers=auth(blue.json()["token"])).status_code == 404  # scoped alike
    assert client.get(f"/v1/jobs/{jid}/events").status_code == 401
    assert client.get(f"/v1/jobs/{jid}/events", headers=auth("bbk_not-a-token")).status_code == 401
    assert client.get("/v1/jobs/not-a-uuid/events", headers=auth(admin)).status_code == 422


def test_events_are_in_the_openapi_document(client: TestClient) -> None:
    op = client.get("/openapi.json").json()["paths"]["/v1/jobs/{job_id}/events"]["get"]
    schema = op["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert schema["properties"]["event"]["enum"] == ["job", "end"] and schema["properties"]["data"]["type"] == "string"
    assert {"404", "422"} <= set(op["responses"])
    assert op["security"]
