"""A TE job's time limit through the API (issue #32): an API ``te`` job with ``{"k_paths": 4}`` on the shipped
scenario ran 336 s against a 120 s limit and said ``succeeded``/``done``. The job ends within its limit plus a
small slack, and its message says the answer hit the time limit."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from apitest_helpers import FINAL, auth, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.job_outcome import TIME_LIMIT_NOTE
from backbone.api.settings import Settings
from backbone.io import load_scenario, network_to_dict

LIMIT_S = 0.05
SLACK_S = 5.0
"""Beyond the limit: the worker's start, loading the scenario, the fallback routing, writing the files (a loaded
2-core machine)."""


@pytest.fixture
def shipped_client(tmp_path: Path) -> Iterator[TestClient]:
    """An app with the default limits, which accept the shipped scenario."""
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1)
    with TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False) as c:
        yield c


@pytest.mark.slow
def test_te_job_on_the_shipped_scenario_stops_at_its_limit(shipped_client: TestClient) -> None:
    client = shipped_client
    tok = client.app.state.store.create_token("planner", "p")[1]  # type: ignore[attr-defined]
    r = client.post("/v1/scenarios", json=network_to_dict(load_scenario()), headers=auth(tok))
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {"k_paths": 4, "time_limit_s": LIMIT_S}},
                    headers=auth(tok))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=120)
    assert job["status"] == "succeeded", job  # an answer, with files
    assert job["progress"] == {"fraction": 1.0, "message": f"done ({TIME_LIMIT_NOTE})"}, job  # the status line says so
    result = client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
    assert result["status"] == "time_limit" and result["total_seconds"] < LIMIT_S + SLACK_S
    assert any("time limit" in n for n in result["notes"])
    ran = datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["started_at"])
    assert ran.total_seconds() < LIMIT_S + SLACK_S, job
