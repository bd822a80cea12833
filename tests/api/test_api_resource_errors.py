"""No 500 for what is not a defect: numbers out of range (422), a body Python cannot decode (422), a
non-finite number on its way out (null), and storage that is full or read-only (503 with
``Retry-After``, nothing stored)."""

from __future__ import annotations

import errno
import json
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.settings import Settings
from backbone.io import network_to_dict
from tests.nets import triangle_network

HUGE = "1" + "0" * 5000
"""A 5,001-digit integer: more than Python's integer-string conversion limit (4,300 digits)."""


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[TestClient]:
    """The app on a SQLite file (the full-database test sets SQLite's own page limit)."""
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1)
    with TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False) as c:
        yield c


def _tokens(client: TestClient) -> dict[str, str]:
    store = client.app.state.store  # type: ignore[attr-defined]
    return {scope: store.create_token(scope, f"t-{scope}")[1] for scope in ("viewer", "planner", "admin")}


def _scenario(client: TestClient, token: str) -> str:
    r = client.post("/v1/scenarios", json=network_to_dict(triangle_network()), headers=auth(token))
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _assert_problem(r: Any, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    doc: dict[str, Any] = r.json()
    assert doc["status"] == status and "Traceback" not in r.text
    return doc


def test_a_json_body_with_a_5000_digit_integer_is_422(app_client: TestClient) -> None:
    tok = _tokens(app_client)
    sid = _scenario(app_client, tok["planner"])
    bodies = [(f"/v1/scenarios/{sid}/jobs", tok["planner"], '{"kind": "sleepy", "options": {"steps": %s}}'),
              ("/v1/tokens", tok["admin"], '{"scope": "viewer", "name": "x", "expires_in_days": %s}'),
              ("/v1/teams", tok["admin"], '{"name": "t", "note": %s}')]
    for url, token, body in bodies:
        r = app_client.post(url, content=body % HUGE, headers=auth(token, **{"Content-Type": "application/json"}))
        doc = _assert_problem(r, 422)
        assert "4300 digits" in doc["detail"] and doc["errors"][0]["file"] == "request body", doc
    assert len(app_client.get("/v1/tokens", headers=auth(tok["admin"])).json()) == 3, "nothing was created"
    assert app_client.get("/v1/jobs", headers=auth(tok["viewer"])).json() == []


def test_a_capacity_of_1_7e308_is_422_naming_the_field_in_json_and_yaml(app_client: TestClient) -> None:
    tok = _tokens(app_client)
    doc = network_to_dict(triangle_network())
    doc["links"][0]["capacity_gbps"] = 1.7e308
    link = doc["links"][0]["id"]
    r = app_client.post("/v1/scenarios", json=doc, headers=auth(tok["planner"]))
    problem = _assert_problem(r, 422)
    assert [(e["table"], e["record"], e["field"]) for e in problem["errors"]] == [("links", link, "capacity_gbps")]
    assert "must be <= 1e+09 Gbps" in problem["errors"][0]["message"]
    yml = ("name: y\nsites:\n- {id: A, lon: 0, lat: 0, region: NA}\n- {id: B, lon: 1, lat: 1, region: NA}\n"
           "links:\n- {id: AB, site_a: A, site_b: B, capacity_gbps: 1.7e308}\ndemands: []\n")
    r = app_client.post("/v1/scenarios", files={"file": ("big.yaml", yml.encode())}, headers=auth(tok["planner"]))
    problem = _assert_problem(r, 422)
    assert [(e["file"], e["record"], e["field"]) for e in problem["errors"]] == [("big.yaml", "AB", "capacity_gbps")]
    assert app_client.get("/v1/scenarios", headers=auth(tok["viewer"])).json() == []


def _succeeded_job(client: TestClient, tok: dict[str, str]) -> dict[str, Any]:
    sid = _scenario(client, tok["planner"])
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {"steps": 1, "step_s": 0}},
                    headers=auth(tok["planner"]))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok["viewer"])).json(),
                   lambda j: j["status"] in FINAL, timeout_s=60)
    return job


def test_a_non_finite_number_in_a_json_response_is_null(tmp_path: Path) -> None:
    """The app's default response class: a route answering NaN or infinity sends null, never a 500
    ("Out of range float values are not JSON compliant"); so do problem documents."""
    from backbone.api.problems import problem_response

    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1)
    app = create_app(settings, task_registry=REGISTRY)

    @app.get("/test/non-finite")
    def non_finite() -> dict[str, Any]:
        return {"mlu": float("inf"), "gap": float("nan"), "rows": [1.5, float("-inf")]}

    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.get("/test/non-finite")
    assert r.status_code == 200, r.text
    assert r.json() == {"mlu": None, "gap": None, "rows": [1.5, None]}
    problem = problem_response(422, "Invalid input", errors=[{"field": "x", "value": float("nan")}])
    assert json.loads(problem.body)["errors"] == [{"field": "x", "value": None}]


def _fill_database(client: TestClient) -> None:
    """Make the SQLite database full, as a full disk does: no page may be added (``max_page_count``)."""
    from sqlalchemy import event

    engine = client.app.state.store.engine  # type: ignore[attr-defined]

    @event.listens_for(engine, "connect")
    def _full(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        pages = cur.execute("PRAGMA page_count").fetchone()[0]
        cur.execute(f"PRAGMA max_page_count = {pages}")
        cur.close()

    engine.dispose()  # every connection from now on is a full database


def test_a_full_database_is_503_with_retry_after_and_stores_nothing(app_client: TestClient) -> None:
    tok = _tokens(app_client)
    sid = _scenario(app_client, tok["planner"])
    before = app_client.get(f"/v1/scenarios/{sid}/versions", headers=auth(tok["viewer"])).json()
    _fill_database(app_client)
    big = network_to_dict(triangle_network())
    big["meta"]["notes"] = secrets.token_hex(100_000)  # incompressible: more pages than the database may add
    for method, url, token in (("POST", "/v1/scenarios", tok["planner"]), ("PUT", f"/v1/scenarios/{sid}", tok["planner"])):
        r = app_client.request(method, url, json=big, headers=auth(token))
        doc = _assert_problem(r, 503)
        assert r.headers["Retry-After"].isdigit(), r.headers
        assert doc["title"] == "Storage unavailable" and "database or disk is full" in doc["detail"], doc
    assert [s["id"] for s in app_client.get("/v1/scenarios", headers=auth(tok["viewer"])).json()] == [sid]
    assert app_client.get(f"/v1/scenarios/{sid}/versions", headers=auth(tok["viewer"])).json() == before


@pytest.mark.parametrize("failure", [OSError(errno.ENOSPC, "No space left on device"),
                                     OSError(errno.EDQUOT, "Disk quota exceeded"),
                                     OSError(errno.EROFS, "Read-only file system"),
                                     sqlite3.OperationalError("database or disk is full"),
                                     sqlite3.OperationalError("attempt to write a readonly database")],
                         ids=["ENOSPC", "EDQUOT", "EROFS", "sqlite-full", "sqlite-readonly"])
def test_storage_failures_of_job_submission_and_token_creation_are_503(
        app_client: TestClient, monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    from sqlalchemy import event
    from sqlalchemy.exc import OperationalError

    tok = _tokens(app_client)
    sid = _scenario(app_client, tok["planner"])
    engine = app_client.app.state.store.engine  # type: ignore[attr-defined]

    def refuse_writes(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE")):
            if isinstance(failure, sqlite3.Error):
                raise OperationalError(statement, (), failure)
            raise failure

    event.listen(engine, "before_cursor_execute", refuse_writes)
    try:
        r = app_client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {}},
                            headers=auth(tok["planner"]))
        doc = _assert_problem(r, 503)
        assert r.headers["Retry-After"].isdigit() and doc["title"] == "Storage unavailable", doc
        r = app_client.post("/v1/tokens", json={"scope": "viewer", "name": "new"}, headers=auth(tok["admin"]))
        _assert_problem(r, 503)
        assert r.headers["Retry-After"].isdigit()
    finally:
        event.remove(engine, "before_cursor_execute", refuse_writes)
    assert app_client.get("/v1/jobs", headers=auth(tok["viewer"])).json() == []
    assert "new" not in [t["name"] for t in app_client.get("/v1/tokens", headers=auth(tok["admin"])).json()]


def test_a_full_disk_when_storing_results_fails_the_job_as_storage_and_leaves_no_files(
        app_client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    import backbone.api.jobs as jobs_module

    real_replace = jobs_module.os.replace

    def full_disk(src: Any, dst: Any) -> None:
        if Path(dst).parent.name == "results":
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(jobs_module.os, "replace", full_disk)
    tok = _tokens(app_client)
    job = _succeeded_job(app_client, tok)
    assert job["status"] == "failed", job
    assert job["error"]["title"] == "Storage unavailable" and job["error"]["status"] == 503, job
    data = app_client.app.state.settings.data_dir  # type: ignore[attr-defined]
    assert not (data / "results" / job["id"]).exists() and not (data / "staging" / job["id"]).exists()
    json.dumps(job)  # the job record itself stays valid JSON


@pytest.mark.slow
def test_a_job_finished_while_the_database_is_full_is_failed_as_storage_once_it_takes_writes(
        app_client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's outcome cannot be recorded (database full): its results are removed, and once the database
    takes writes again the job is failed as a storage failure (not left running, not 'Worker died')."""
    from sqlalchemy.exc import OperationalError

    store = app_client.app.state.store  # type: ignore[attr-defined]
    real_finish = store.finish_job
    refusals = [3]

    def full_then_fine(*args: Any, **kwargs: Any) -> Any:
        if refusals[0] > 0:
            refusals[0] -= 1
            raise OperationalError("UPDATE jobs ...", (), sqlite3.OperationalError("database or disk is full"))
        return real_finish(*args, **kwargs)

    monkeypatch.setattr(store, "finish_job", full_then_fine)
    tok = _tokens(app_client)
    job = _succeeded_job(app_client, tok)
    assert refusals == [0]
    assert job["status"] == "failed", job
    assert job["error"]["title"] == "Storage unavailable" and job["error"]["status"] == 503, job
    data = app_client.app.state.settings.data_dir  # type: ignore[attr-defined]
    assert not (data / "results" / job["id"]).exists() and not (data / "staging" / job["id"]).exists()


def test_a_4000_digit_integer_in_a_scenario_is_422_naming_the_field(app_client: TestClient) -> None:
    """Within Python's integer-string limit, so the JSON parses, but beyond any float (was a 500 OverflowError)."""
    tok = _tokens(app_client)
    doc = network_to_dict(triangle_network())
    site = doc["sites"][0]["id"]
    body = json.dumps(doc).replace(f'"id": "{site}",', f'"id": "{site}", "gpus_max": {"1" + "0" * 4000},', 1)
    r = app_client.post("/v1/scenarios", content=body.replace('"gpus_max": 0,', "", 1),
                        headers=auth(tok["planner"], **{"Content-Type": "application/json"}))
    problem = _assert_problem(r, 422)
    assert [(e["table"], e["record"], e["field"]) for e in problem["errors"]] == [("sites", site, "gpus_max")], problem
    assert "out of range" in problem["errors"][0]["message"] and len(r.text) < 2000
