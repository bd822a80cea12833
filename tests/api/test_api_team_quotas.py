"""Per-team quota settings (issue #31): an admin sets, reads and clears a team's own quotas through the API
(``PUT/GET/DELETE /v1/teams/{team}/quotas``) and the CLI (``backbone team quota set|show|clear``); each change is
audited; submissions are checked against the team's own quotas, else the server's; ``GET /v1/usage`` shows the
effective quotas and where each comes from. Runs on SQLite and (slow lane) PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from backbone.api.cli.main import app as cli_app
from backbone.api.settings import Settings
from backbone.api.store import JobQuotas, Principal, QuotaExceededError, Store, TeamQuotaSettings

DOC = {"name": "one", "sites": [{"id": "A", "lon": 0.0, "lat": 0.0, "region": "NA"}]}
COUNTS = {"sites": 1, "links": 0, "demands": 0}


def _used(store: Store, sid: str, who: Principal, cpu_s: float, result_bytes: int) -> None:
    """A finished job of ``who``'s team that used ``cpu_s`` CPU seconds and stores ``result_bytes``."""
    job = store.create_job(sid, 1, "te", {}, who)
    claimed = store.claim_next_job()
    assert claimed is not None and claimed.id == job.id
    store.finish_job(job.id, "succeeded", "done")
    store.record_usage(job.id, cpu_s=cpu_s, result_bytes=result_bytes)


def test_a_teams_own_quotas_override_the_servers(db_url: str) -> None:
    store = Store(db_url)
    store.upgrade()
    try:
        blue, red = store.create_team("blue"), store.create_team("red")
        alice, bob = Principal("a", "alice", "planner", blue.id), Principal("b", "bob", "planner", red.id)
        sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", alice)
        _used(store, sc.id, alice, 30.0, 500)
        server = JobQuotas(cpu_s=1000.0, window_s=3600.0, stored_bytes=0)
        assert store.effective_quotas(blue.id, server).quotas == server
        store.create_job(sc.id, 1, "te", {}, alice, quotas=server)  # under the server's quotas

        root = Principal("root-id", "root", "admin")
        eff = store.set_team_quotas("blue", TeamQuotaSettings(max_cpu_s=20.0, max_stored_bytes=400), server, root)
        assert (eff.quotas.cpu_s, eff.quotas.window_s, eff.quotas.stored_bytes) == (20.0, 3600.0, 400)
        assert (eff.sources.max_cpu_s, eff.sources.cpu_window_h, eff.sources.max_stored_bytes) == (
            "team", "server", "team")
        with pytest.raises(QuotaExceededError) as stored:
            store.create_job(sc.id, 1, "te", {}, alice, quotas=server)
        assert stored.value.http_status == 403 and stored.value.problem_errors()[0]["field"] == "max_stored_bytes"
        assert "the team's own max_stored_bytes" in str(stored.value)
        # 0 lifts a quota for the team even where the server sets one; the CPU quota is then the one hit
        store.set_team_quotas(blue.id, TeamQuotaSettings(max_cpu_s=20.0, max_stored_bytes=0), server, root)
        with pytest.raises(QuotaExceededError) as cpu:
            store.create_job(sc.id, 1, "te", {}, alice, quotas=JobQuotas(stored_bytes=1))
        assert cpu.value.http_status == 429 and cpu.value.quota == "max_cpu_s" and cpu.value.source == "team"
        # red has no settings of its own: the server's hold for it
        assert store.effective_quotas(red.id, server).sources.max_cpu_s == "server"
        store.create_job(sc.id, 1, "te", {}, bob, quotas=server)
        # the team-less tenant always gets the server's
        assert store.effective_quotas(None, server).quotas == server

        cleared = store.clear_team_quotas("blue", server, root)
        assert cleared.quotas == server and not cleared.team_settings.any
        store.create_job(sc.id, 1, "te", {}, alice, quotas=server)
        actions = [(a.action, a.target_id, a.token_name) for a in store.list_audit(10, 0, None)
                   if a.action.startswith("team.quotas")]
        assert actions == [("team.quotas.clear", blue.id, "root"), ("team.quotas.set", blue.id, "root"),
                           ("team.quotas.set", blue.id, "root")]
        last_set = next(a for a in store.list_audit(10, 0, "team.quotas.set"))
        assert last_set.detail is not None and last_set.detail["before"]["max_stored_bytes"] == 400
        assert last_set.detail["after"] == {"max_cpu_s": 20.0, "cpu_window_h": None, "max_stored_bytes": 0}
    finally:
        store.dispose()


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    """The shared ``client`` fixture's settings, with server-wide quotas."""
    return Settings(data_dir=tmp_path / "data", database_url=db_url, workers=1, max_cpu_s_per_team=5.0,
                    cpu_quota_window_h=2.0)


def test_admins_set_read_and_clear_a_teams_quotas_over_http(client: TestClient) -> None:
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    blue = store.create_team("blue")
    admin = store.create_token("admin", "root")[1]
    planner = store.create_token("planner", "p", team="blue")[1]
    url = "/v1/teams/blue/quotas"

    shown = client.get(url, headers=auth(admin))
    assert shown.status_code == 200, shown.text
    assert shown.json()["settings"] == {"max_cpu_s": None, "cpu_window_h": None, "max_stored_bytes": None}
    assert (shown.json()["max_cpu_s"], shown.json()["cpu_window_h"]) == (5.0, 2.0)
    assert shown.json()["quota_sources"]["max_cpu_s"] == "server"

    put = client.put(url, json={"max_cpu_s": 0.5, "max_stored_bytes": 1000}, headers=auth(admin))
    assert put.status_code == 200, put.text
    body = put.json()
    assert (body["team_id"], body["team_name"], body["max_cpu_s"], body["cpu_window_h"],
            body["max_stored_bytes"]) == (blue.id, "blue", 0.5, 2.0, 1000)
    assert body["quota_sources"] == {"max_cpu_s": "team", "cpu_window_h": "server", "max_stored_bytes": "team"}
    assert client.get(f"/v1/teams/{blue.id}/quotas", headers=auth(admin)).json() == body  # by id too

    usage = client.get("/v1/usage", headers=auth(planner)).json()
    assert (usage["max_cpu_s"], usage["cpu_window_h"], usage["max_stored_bytes"]) == (0.5, 2.0, 1000)
    assert usage["quota_sources"] == body["quota_sources"]

    # the team's own quota refuses a submission the server's would take
    sid = client.post("/v1/scenarios", json=DOC, headers=auth(planner)).json()["id"]
    _used(store, sid, store.authenticate(planner), 1.0, 10)  # type: ignore[arg-type]
    refused = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {}},
                          headers=auth(planner))
    assert refused.status_code == 429, refused.text
    assert refused.json()["errors"][0]["field"] == "max_cpu_s" and refused.json()["errors"][0]["table"] == "quotas"

    # bad values: 422 naming the field; unknown fields refused; unknown team 404; only admins
    for bad, field in (({"max_cpu_s": -1}, "max_cpu_s"), ({"cpu_window_h": 0}, "cpu_window_h"),
                       ({"max_stored_bytes": 1.5}, "max_stored_bytes"), ({"max_cpu_s": "lots"}, "max_cpu_s"),
                       ({"cpu_window_h": 1e9}, "cpu_window_h"), ({"max_jobs": 3}, "max_jobs"),
                       ({"max_stored_bytes": False}, "max_stored_bytes"), ({"max_cpu_s": True}, "max_cpu_s")):
        r = client.put(url, json=bad, headers=auth(admin))
        assert r.status_code == 422, (bad, r.text)
        assert r.json()["errors"][0]["field"] == field, r.json()
    assert client.put("/v1/teams/nosuch/quotas", json={}, headers=auth(admin)).status_code == 404
    assert client.get(url, headers=auth(planner)).status_code == 403
    assert client.put(url, json={"max_cpu_s": 1e6}, headers=auth(planner)).status_code == 403
    assert client.get(url, headers=auth(admin)).json()["max_cpu_s"] == 0.5  # nothing changed by those

    cleared = client.delete(url, headers=auth(admin))
    assert cleared.status_code == 200 and cleared.json()["quota_sources"]["max_cpu_s"] == "server"
    assert client.get("/v1/usage", headers=auth(planner)).json()["max_cpu_s"] == 5.0
    assert client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {}},
                       headers=auth(planner)).status_code == 202
    audit = client.get("/v1/audit", params={"action": "team.quotas.set"}, headers=auth(admin)).json()
    assert len(audit) == 1 and audit[0]["token_name"] == "root" and audit[0]["detail"]["after"]["max_cpu_s"] == 0.5
    assert len(client.get("/v1/audit", params={"action": "team.quotas.clear"}, headers=auth(admin)).json()) == 1


def test_the_cli_sets_shows_and_clears_a_teams_quotas(tmp_path: Path, db_url: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKBONE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", db_url)
    monkeypatch.setenv("BACKBONE_MAX_STORED_BYTES_PER_TEAM", "5000")
    runner = CliRunner()
    assert runner.invoke(cli_app, ["team", "create", "blue"]).exit_code == 0
    made = runner.invoke(cli_app, ["team", "quota", "set", "blue", "--max-cpu-s", "3600", "--cpu-window-h", "12",
                                   "--json"])
    assert made.exit_code == 0, made.output
    doc = json.loads(made.stdout)
    assert (doc["max_cpu_s"], doc["cpu_window_h"], doc["max_stored_bytes"]) == (3600.0, 12.0, 5000)
    assert doc["quota_sources"] == {"max_cpu_s": "team", "cpu_window_h": "team", "max_stored_bytes": "server"}
    shown = runner.invoke(cli_app, ["team", "quota", "show", "blue"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    assert "3600" in shown.stdout and "team setting" in shown.stdout and "server default" in shown.stdout
    bad = runner.invoke(cli_app, ["team", "quota", "set", "blue", "--cpu-window-h", "0"])
    assert bad.exit_code == 2 and "--cpu-window-h" in bad.output
    assert runner.invoke(cli_app, ["team", "quota", "show", "nosuch"]).exit_code == 2
    store = Store(db_url)
    try:
        blue = store.get_team("blue")
        assert (blue.max_cpu_s, blue.cpu_window_h, blue.max_stored_bytes) == (3600.0, 12.0, None)
        cleared = runner.invoke(cli_app, ["team", "quota", "clear", "blue", "--json"])
        assert cleared.exit_code == 0 and json.loads(cleared.stdout)["settings"]["max_cpu_s"] is None
        assert [a.action for a in store.list_audit(10, 0, None) if a.action.startswith("team.quotas")] == [
            "team.quotas.clear", "team.quotas.set"]
    finally:
        store.dispose()
