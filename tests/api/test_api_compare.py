"""Compare and present through the API: the diff of two scenario versions, of two plan jobs, and a plan job's
review deck; checked against the same functions run on the jobs' result folders."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.io import network_to_dict
from tests.nets import small_world_network


def _scenario(client: TestClient, tok: str) -> tuple[str, dict[str, Any]]:
    doc = network_to_dict(small_world_network())
    sid = client.post("/v1/scenarios", json=doc, headers=auth(tok)).json()["id"]
    return sid, doc


@pytest.mark.slow
def test_scenario_version_diff(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    sid, doc = _scenario(client, tok)
    link = doc["links"][0]
    changed = json.loads(json.dumps(doc))
    changed["links"][0]["capacity_gbps"] = float(link["capacity_gbps"]) + 800.0
    r = client.put(f"/v1/scenarios/{sid}", json=changed, headers=auth(tok))
    assert r.status_code == 200, r.text
    viewer = tokens["viewer"]
    r = client.get(f"/v1/scenarios/{sid}/diff", headers=auth(viewer))  # head against the version before it
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["changed"] is True and body["before"]["label"].endswith("v1") and body["after"]["label"].endswith("v2")
    rows = [x for x in body["structure"] if x["field"] == "capacity_gbps"]
    assert len(rows) == 1 and rows[0]["id"] == link["id"] and rows[0]["delta"] == pytest.approx(800.0)
    assert rows[0]["unit"] == "Gbps"
    same = client.get(f"/v1/scenarios/{sid}/diff", params={"version": 1, "against_version": 1}, headers=auth(viewer))
    assert same.status_code == 200 and same.json()["changed"] is False
    other, _ = _scenario(client, tok)
    across = client.get(f"/v1/scenarios/{sid}/diff", params={"against": other}, headers=auth(viewer)).json()
    assert [x["id"] for x in across["structure"] if x["field"] == "capacity_gbps"] == [link["id"]]
    first = client.get(f"/v1/scenarios/{sid}/diff", params={"version": 1}, headers=auth(viewer))
    assert first.status_code == 422 and "against_version" in first.text
    missing = client.get(f"/v1/scenarios/{sid}/diff", params={"against": "00000000-0000-0000-0000-000000000000"},
                         headers=auth(viewer))
    assert missing.status_code == 404


def _plan_job(client: TestClient, tok: str, sid: str, options: dict[str, Any]) -> str:
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "plan", "options": options}, headers=auth(tok))
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


@pytest.mark.slow
@pytest.mark.sqlite_only  # its time is the job's computing (pyproject's markers)
def test_plan_job_diff_and_deck(client: TestClient, tokens: dict[str, str]) -> None:
    from pptx import Presentation

    from backbone.compare import diff, load_input

    tok = tokens["planner"]
    sid, _ = _scenario(client, tok)
    a = _plan_job(client, tok, sid, {"maps": False})
    b = _plan_job(client, tok, sid, {"maps": False, "demand_growth": 1.3})
    for jid in (a, b):
        job = wait_for(lambda jid=jid: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                       lambda j: j["status"] in FINAL, timeout_s=300)
        assert job["status"] == "succeeded", job
    viewer = tokens["viewer"]
    r = client.get(f"/v1/jobs/{b}/diff", params={"against": a}, headers=auth(viewer))
    assert r.status_code == 200, r.text
    body = r.json()
    results = client.app.state.settings.data_dir / "results"  # type: ignore[attr-defined]
    local = diff(load_input(results / a), load_input(results / b))
    assert body["changed"] is True and body["counts"] == local.counts()
    kpis = {k["kpi"]: k for k in body["kpis"]}
    plan_a = client.get(f"/v1/jobs/{a}/result", headers=auth(viewer)).json()
    plan_b = client.get(f"/v1/jobs/{b}/result", headers=auth(viewer)).json()
    assert kpis["utilisation_max_intact"]["before"] == pytest.approx(plan_a["mlu_after"])
    assert kpis["utilisation_max_intact"]["after"] == pytest.approx(plan_b["mlu_after"])
    assert kpis["gpus_added"]["delta"] == pytest.approx(plan_b["gpus_added"] - plan_a["gpus_added"])
    same = client.get(f"/v1/jobs/{a}/diff", params={"against": a}, headers=auth(viewer)).json()
    assert same["changed"] is False

    deck = client.get(f"/v1/jobs/{b}/deck", params={"against": a}, headers=auth(viewer))
    assert deck.status_code == 200 and deck.headers["content-type"].startswith(
        "application/vnd.openxmlformats-officedocument.presentationml")
    prs = Presentation(io.BytesIO(deck.content))
    titles = [s.shapes.title.text for s in prs.slides if s.shapes.title is not None]
    assert any(t.startswith("Compared with job") for t in titles)
    text = " ".join(sh.text_frame.text for sh in prs.slides[0].shapes if sh.has_text_frame)
    assert plan_b["headline"] in text

    te = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {}}, headers=auth(tok)).json()["id"]
    wait_for(lambda: client.get(f"/v1/jobs/{te}", headers=auth(tok)).json(), lambda j: j["status"] in FINAL)
    wrong = client.get(f"/v1/jobs/{te}/deck", headers=auth(viewer))
    assert wrong.status_code == 422 and "plan and roadmap" in wrong.text
    gone = client.get(f"/v1/jobs/{b}/diff", params={"against": "00000000-0000-0000-0000-000000000000"},
                      headers=auth(viewer))
    assert gone.status_code == 404
