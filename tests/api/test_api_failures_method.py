"""The ``failures`` job's ``method`` option over the API: srcflow runs (each scenario's MLU with its bound and gap),
bad values are 422 problem documents naming the field, and srcflow on latency-SLO demands fails the job with a
422 problem (nothing half-written)."""

from __future__ import annotations

from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.io import network_to_dict
from backbone.model import Network
from tests.nets import random_te_net


def _scenario(client: TestClient, tok: str, net: Network) -> str:
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok))
    assert r.status_code == 201, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


def _post(client: TestClient, tok: str, sid: str, options: dict[str, Any]) -> Any:
    return client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "failures", "options": options}, headers=auth(tok))


def _finish(client: TestClient, tok: str, r: Any) -> dict[str, Any]:
    assert r.status_code == 202, r.text
    return wait_for(lambda jid=r.json()["id"]: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                    lambda j: j["status"] in FINAL, timeout_s=180)


@pytest.mark.slow
@pytest.mark.sqlite_only  # its time is the job's computing (pyproject's markers)
def test_srcflow_job_reports_bound_and_gap(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, random_te_net(3, n=8, m=14, tight=0.6))
    job = _finish(client, tok, _post(client, tok, sid, {"kind": "link", "method": "srcflow", "gap_tol": 0.02,
                                                        "time_limit_s": 4, "engine": "serial"}))
    assert job["status"] == "succeeded", job
    res = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
    assert res["method"] == "srcflow" and res["baseline"]["method"] == "srcflow"
    assert res["scenarios_run"] == 15 and res["notes"]
    for r in res["scenarios"]:
        assert r["method"] == "srcflow" and r["mlu_lower_bound"] <= r["mlu"] + 1e-9
        assert r["gap"] == pytest.approx((r["mlu"] - r["mlu_lower_bound"]) / r["mlu"])


@pytest.mark.parametrize(("options", "field"), [({"method": "fast"}, "method"), ({"gap_tol": 0}, "gap_tol"),
                                                 ({"gap_tol": 1.5}, "gap_tol")])
def test_bad_method_options_are_422_problems(client: TestClient, tokens: dict[str, str], triangle: Network,
                                             options: dict[str, Any], field: str) -> None:
    tok = tokens["planner"]
    r = _post(client, tok, _scenario(client, tok, triangle), options)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    doc = r.json()
    assert doc["status"] == 422 and {e["field"] for e in doc["errors"]} == {field}
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []  # nothing was queued


def test_srcflow_on_slo_demands_fails_with_a_problem(client: TestClient, tokens: dict[str, str],
                                                     submarine_cut: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, submarine_cut)
    job = _finish(client, tok, _post(client, tok, sid, {"kind": "link", "method": "srcflow", "engine": "serial"}))
    assert job["status"] == "failed", job
    err = job["error"]
    assert err["status"] == 422 and any(e["field"] == "method" for e in err["errors"])
