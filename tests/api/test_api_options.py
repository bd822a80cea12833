"""Job options over the API: validated by the task's own options model before queueing (one name per option; a
bad or unknown one a 422 problem document naming it), and every error's HTTP status read from its class."""

from __future__ import annotations

from typing import Any

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.api.jobs import OptionsTooLargeError, error_document
from backbone.api.store import ConflictError, GoneError, QueueFullError
from backbone.errors import (
    BackboneError,
    InfeasibleError,
    NotFoundError,
    Problem,
    SolverError,
    ValidationError,
    VerificationError,
)
from backbone.io import network_to_dict
from backbone.model import Network


def _scenario(client: TestClient, tok: str, net: Network) -> str:
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok))
    assert r.status_code == 201, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


def _post(client: TestClient, tok: str, sid: str, kind: str, options: dict[str, Any]) -> Any:
    return client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": options}, headers=auth(tok))


def _problem(r: Any, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    doc = r.json()
    assert {"type", "title", "status", "detail", "errors"} <= set(doc) and doc["status"] == status
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize(("options", "field", "hint"), [
    ({"paths": 3}, "paths", "did you mean 'k_paths'"),
    ({"time_limit": 30}, "time_limit", "did you mean 'time_limit_s'"),
    ({"ceiling": 0.9}, "ceiling", "unknown option"),
])
def test_an_older_spelling_is_refused(client: TestClient, tokens: dict[str, str], triangle: Network,
                                      options: dict[str, Any], field: str, hint: str) -> None:
    """Each option has one name (issue #30 item 3): an older spelling is an unknown option, a 422 naming it, with a
    hint at the option's name where it is close; nothing is queued."""
    tok = tokens["planner"]
    doc = _problem(_post(client, tok, _scenario(client, tok, triangle), "te", options), 422)
    assert [e["field"] for e in doc["errors"]] == [field]
    assert hint in doc["errors"][0]["message"] and "unknown option" in doc["errors"][0]["message"]
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []


@pytest.mark.parametrize(("kind", "options", "fields"), [
    ("te", {"k_paths": 0}, {"k_paths"}),
    ("te", {"paths": 3, "k_paths": 3}, {"paths"}),  # an older spelling beside the name: unknown
    ("te", {"pathz": 3}, {"pathz"}),
    ("design", {"utilisation_ceiling": 2, "survive": "maybe"}, {"utilisation_ceiling", "survive"}),
    ("plan", {"te": {"k_paths": 0}, "design": {"failure_utilisation_ceiling": 0}},
     {"te.k_paths", "design.failure_utilisation_ceiling"}),
    ("failures", {"time_limit_s": 10 ** 9}, {"time_limit_s"}),  # capped by the server
])
def test_a_bad_option_is_a_422_problem_naming_it(client: TestClient, tokens: dict[str, str], triangle: Network,
                                                 kind: str, options: dict[str, Any], fields: set[str]) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    doc = _problem(_post(client, tok, sid, kind, options), 422)
    assert doc["title"] == "Invalid input"
    assert {e["field"] for e in doc["errors"]} == fields
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []  # nothing was queued


def test_unknown_option_hint_names_the_vocabulary(client: TestClient, tokens: dict[str, str],
                                                  triangle: Network) -> None:
    tok = tokens["planner"]
    doc = _problem(_post(client, tok, _scenario(client, tok, triangle), "te", {"pathz": 3}), 422)
    assert "did you mean 'k_paths'" in doc["errors"][0]["message"]


@pytest.mark.parametrize("exc", [
    ValidationError(Problem("bad", field="k_paths")), InfeasibleError("cannot", ["demand d1"]), SolverError("down"),
    NotFoundError("no such site"), VerificationError("violated"), ConflictError("stale"), GoneError("gone"),
    OptionsTooLargeError("too large"), QueueFullError("full", 429, 5), QueueFullError("full", 503, 5),
])
def test_the_status_comes_from_the_exception_class(exc: Exception) -> None:
    doc = error_document(exc)
    assert doc["status"] == exc.http_status  # type: ignore[attr-defined]
    assert doc["title"] == exc.title  # type: ignore[attr-defined]
    if isinstance(exc, ValidationError):
        assert doc["errors"] == [p.to_dict() for p in exc.problems]
    if isinstance(exc, InfeasibleError):
        assert [e["message"] for e in doc["errors"]] == ["demand d1"]


def test_a_new_error_class_needs_no_table() -> None:
    class Teapot(BackboneError):
        http_status = 418
        title = "I'm a teapot"

    assert error_document(Teapot("short and stout"))["status"] == 418
    assert error_document(RuntimeError("/secret/path"))["status"] == 500
    assert "/secret/path" not in error_document(RuntimeError("/secret/path"))["detail"]


def test_queue_full_answers_with_retry_after(client: TestClient) -> None:
    from fastapi import FastAPI

    app: FastAPI = client.app  # type: ignore[assignment]

    @app.get("/test-queue-full")
    def full() -> None:
        raise QueueFullError("too many queued jobs", 429, 7)

    r = client.get("/test-queue-full")
    doc = _problem(r, 429)
    assert r.headers["retry-after"] == "7" and doc["title"] == "Too Many Requests"
