"""Teams and identity (issue #13 item 7): teams own scenarios and jobs, roles apply per team, admins manage
teams; tokens expire and rotate; creators are recorded by unique token id; the shipped scenario is read-only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from backbone.api.cli.main import app as cli_app
from backbone.api.store import Store, downgrade_database, upgrade_database
from backbone.io import network_to_dict
from backbone.model import Network


def _store(client: TestClient) -> Store:
    return client.app.state.store  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def teams(client: TestClient, tokens: dict[str, str]) -> dict[str, str]:
    """Teams red and blue made through the API, with a planner and a viewer token each (made through the API)."""
    out: dict[str, str] = {}
    for team in ("red", "blue"):
        r = client.post("/v1/teams", json={"name": team}, headers=auth(tokens["admin"]))
        assert r.status_code == 201, r.text
        for scope in ("planner", "viewer"):
            r = client.post("/v1/tokens", json={"scope": scope, "name": f"{team}-{scope}", "team": team},
                            headers=auth(tokens["admin"]))
            assert r.status_code == 201, r.text
            out[f"{team}-{scope}"] = r.json()["token"]
    return out


@pytest.mark.slow
def test_teams_own_scenarios_and_jobs(client: TestClient, tokens: dict[str, str], teams: dict[str, str],
                                      triangle: Network) -> None:
    red, blue = teams["red-planner"], teams["blue-planner"]
    doc = network_to_dict(triangle)
    r = client.post("/v1/scenarios", json=doc, headers=auth(red))
    assert r.status_code == 201
    sid, red_team = r.json()["id"], r.json()["team_id"]
    assert red_team is not None and r.json()["created_by_token"] == _store(client).authenticate(red).token_id  # type: ignore[union-attr]
    # another team neither sees nor touches it (404: its existence is not revealed)
    assert client.get(f"/v1/scenarios/{sid}", headers=auth(blue)).status_code == 404
    assert client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(blue)).status_code == 404
    assert client.delete(f"/v1/scenarios/{sid}", headers=auth(blue)).status_code == 404
    assert client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {}},
                       headers=auth(blue)).status_code == 404
    assert sid not in {s["id"] for s in client.get("/v1/scenarios", headers=auth(blue)).json()}
    assert client.get(f"/v1/scenarios/{sid}", headers=auth(tokens["planner"])).status_code == 404  # team-less
    # roles apply per team: red's viewer reads but may not write
    assert client.get(f"/v1/scenarios/{sid}", headers=auth(teams["red-viewer"])).status_code == 200
    assert client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(teams["red-viewer"])).status_code == 403
    # jobs belong to the submitting team
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {}}, headers=auth(red))
    assert r.status_code == 202 and r.json()["team_id"] == red_team
    jid = r.json()["id"]
    assert client.get(f"/v1/jobs/{jid}", headers=auth(blue)).status_code == 404
    assert client.delete(f"/v1/jobs/{jid}", headers=auth(blue)).status_code == 404
    assert client.get("/v1/jobs", headers=auth(blue)).json() == []
    assert [j["id"] for j in client.get("/v1/jobs", headers=auth(teams["red-viewer"])).json()] == [jid]
    wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(red)).json(), lambda j: j["status"] in FINAL)
    # admins reach every team
    assert client.get(f"/v1/scenarios/{sid}", headers=auth(tokens["admin"])).status_code == 200
    assert jid in {j["id"] for j in client.get("/v1/jobs", headers=auth(tokens["admin"])).json()}
    assert client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(red)).status_code == 200


def test_admins_manage_teams(client: TestClient, tokens: dict[str, str], teams: dict[str, str]) -> None:
    admin = tokens["admin"]
    assert [t["name"] for t in client.get("/v1/teams", headers=auth(admin)).json()] == ["blue", "red"]
    assert client.post("/v1/teams", json={"name": "red"}, headers=auth(admin)).status_code == 409
    assert client.post("/v1/teams", json={"name": "green"}, headers=auth(teams["red-planner"])).status_code == 403
    assert client.get("/v1/teams", headers=auth(tokens["planner"])).status_code == 403
    r = client.post("/v1/tokens", json={"scope": "planner", "team": "nowhere"}, headers=auth(admin))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "team"
    actions = [a["action"] for a in client.get("/v1/audit", headers=auth(admin)).json()]
    assert actions.count("team.create") == 2


@pytest.mark.slow
def test_the_shipped_scenario_is_read_only(client: TestClient, tokens: dict[str, str], teams: dict[str, str],
                                           triangle: Network) -> None:
    from backbone.api.store import SYSTEM

    doc = network_to_dict(triangle)
    sc, _ = _store(client).create_scenario(doc, {"sites": 3, "links": 3, "demands": 1}, "shipped", SYSTEM,
                                           read_only=True)
    for tok in (teams["red-planner"], teams["blue-viewer"], tokens["planner"]):
        got = client.get(f"/v1/scenarios/{sc.id}", headers=auth(tok))
        assert got.status_code == 200 and got.json()["read_only"] is True
        assert sc.id in {s["id"] for s in client.get("/v1/scenarios", headers=auth(tok)).json()}
    for tok in (teams["red-planner"], tokens["admin"]):
        r = client.put(f"/v1/scenarios/{sc.id}", json={**doc, "sites": []}, headers=auth(tok))
        assert r.status_code == 409 and "read-only" in r.json()["detail"]
        assert client.delete(f"/v1/scenarios/{sc.id}", headers=auth(tok)).status_code == 409
    assert client.get(f"/v1/scenarios/{sc.id}", headers=auth(tokens["admin"])).json()["version"] == 1
    r = client.post(f"/v1/scenarios/{sc.id}/jobs", json={"kind": "sleepy", "options": {}},
                    headers=auth(teams["blue-planner"]))
    assert r.status_code == 202  # every team plans on it; the job is the team's own
    assert client.get(f"/v1/jobs/{r.json()['id']}", headers=auth(teams["red-planner"])).status_code == 404


def test_tokens_expire_and_rotate(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    store = _store(client)
    _tok, short = store.create_token("planner", "short-lived", expires_in_days=1e-9)
    assert client.get("/v1/scenarios", headers=auth(short)).status_code == 401
    r = client.post("/v1/tokens", json={"scope": "planner", "name": "ci", "expires_in_days": 30},
                    headers=auth(tokens["admin"]))
    assert r.status_code == 201
    old, old_id = r.json()["token"], r.json()["id"]
    assert r.json()["expires_at"].endswith("Z")
    # a token rotates itself: the new one works, the old one is revoked
    r = client.post(f"/v1/tokens/{old_id}/rotate", headers=auth(old))
    assert r.status_code == 201, r.text
    new, new_id = r.json()["token"], r.json()["id"]
    assert new_id != old_id and r.json()["rotated_from"] == old_id and r.json()["name"] == "ci"
    assert client.get("/v1/scenarios", headers=auth(old)).status_code == 401
    assert client.get("/v1/scenarios", headers=auth(new)).status_code == 200
    # another token (not admin) may not rotate it
    other = tokens["planner"]
    assert client.post(f"/v1/tokens/{new_id}/rotate", headers=auth(other)).status_code == 403
    assert client.post(f"/v1/tokens/{old_id}/rotate", headers=auth(tokens["admin"])).status_code == 409
    # unique token ids: the audit log and the records name the acting token by id, not by its (shared) name
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(new)).json()["id"]
    audit = client.get("/v1/audit", headers=auth(tokens["admin"])).json()
    create = next(a for a in audit if a["action"] == "scenario.create" and a["target_id"] == sid)
    assert create["token_id"] == new_id
    rotate = next(a for a in audit if a["action"] == "token.rotate")
    assert rotate["token_id"] == old_id and rotate["detail"]["new_token"] == new_id
    got = client.get(f"/v1/scenarios/{sid}", headers=auth(new)).json()
    assert got["created_by_token"] == new_id and got["version_created_by_token"] == new_id


@pytest.mark.slow
def test_team_cli(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKBONE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", db_url)
    runner = CliRunner()
    made = runner.invoke(cli_app, ["team", "create", "ops", "--json"])
    assert made.exit_code == 0, made.output
    team_id = json.loads(made.stdout)["id"]
    assert runner.invoke(cli_app, ["team", "create", "ops"]).exit_code == 2
    tok = runner.invoke(cli_app, ["token", "create", "--scope", "planner", "--team", "ops", "--expires-in-days", "7",
                                  "--json"])
    assert tok.exit_code == 0, tok.output
    row = json.loads(tok.stdout)
    assert row["team_id"] == team_id and row["expires_at"]
    assert runner.invoke(cli_app, ["token", "create", "--scope", "planner", "--team", "nope"]).exit_code == 2
    rotated = runner.invoke(cli_app, ["token", "rotate", row["id"], "--json"])
    assert rotated.exit_code == 0, rotated.output
    store = Store(db_url)
    assert store.authenticate(row["token"]) is None
    principal = store.authenticate(json.loads(rotated.stdout)["token"])
    assert principal is not None and principal.team_id == team_id
    assert json.loads(runner.invoke(cli_app, ["team", "list", "--json"]).stdout)[0]["name"] == "ops"
    seeded = runner.invoke(cli_app, ["db", "seed"])
    assert seeded.exit_code == 0, seeded.output
    again = runner.invoke(cli_app, ["db", "seed"])
    assert again.exit_code == 0 and "already" in again.output
    shipped = store.list_scenarios()
    assert len(shipped) == 1 and shipped[0][0].read_only
    store.dispose()


def test_teams_migration_goes_down_and_up(db_url: str) -> None:
    store = Store(db_url)
    store.upgrade()
    store.create_team("red")
    downgrade_database(store.engine, "0001_initial")
    upgrade_database(store.engine)
    assert store.list_teams() == []
    store.dispose()


def _backdate_family(store: Store, token_id: str, days: float) -> None:
    """Pretend the token's family was first issued ``days`` ago."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import text

    with store.engine.begin() as conn:
        conn.execute(text("UPDATE tokens SET family_issued_at = :t WHERE id = :id"),
                     {"t": datetime.now(UTC) - timedelta(days=days), "id": token_id})


def test_rotation_never_outlives_the_first_issue(db_url: str) -> None:
    """Issue #26 item 8: each rotation used to give a fresh lifetime, so a stolen token could live forever. Now a
    rotated token keeps its family's first issue time and expires at min(now + lifetime, first issue + maximum);
    past the maximum, rotation is refused."""
    from datetime import UTC, datetime, timedelta

    from backbone.api.store import ConflictError

    store = Store(db_url, token_max_lifetime_days=10)
    store.upgrade()
    first, _ = store.create_token("planner", "ci", expires_in_days=7)
    assert first.family_issued_at == first.created_at
    second, _ = store.rotate_token(first.id)
    assert second.family_issued_at == first.created_at  # inherited, not the rotation time
    assert abs(second.expires_at - (second.created_at + timedelta(days=7))) < timedelta(seconds=1)
    _backdate_family(store, second.id, 9.5)
    third, _ = store.rotate_token(second.id)
    now = datetime.now(UTC)
    assert timedelta(days=0.45) < third.expires_at - now < timedelta(days=0.55)  # capped: 10 days from the first
    _backdate_family(store, third.id, 10.5)
    with pytest.raises(ConflictError, match="maximum lifetime of 10 days"):
        store.rotate_token(third.id)
    long, _ = store.create_token("planner", "long", expires_in_days=3650)  # new tokens are capped too
    assert long.expires_at - long.created_at == timedelta(days=10)
    store.dispose()


def test_rotation_past_the_maximum_is_a_409(client: TestClient, tokens: dict[str, str]) -> None:
    store = _store(client)
    r = client.post("/v1/tokens", json={"scope": "viewer", "name": "ci", "expires_in_days": 30},
                    headers=auth(tokens["admin"]))
    tok, tok_id = r.json()["token"], r.json()["id"]
    assert r.json()["family_issued_at"] == r.json()["created_at"]
    days = client.app.state.settings.token_max_lifetime_days  # type: ignore[attr-defined]
    _backdate_family(store, tok_id, days + 1)
    r = client.post(f"/v1/tokens/{tok_id}/rotate", headers=auth(tok))
    assert r.status_code == 409 and r.headers["content-type"].startswith("application/problem+json"), r.text
    assert "maximum lifetime" in r.json()["detail"]
    assert client.get("/v1/scenarios", headers=auth(tok)).status_code == 200  # it still works until it expires


def test_token_family_migration_fills_existing_chains(db_url: str) -> None:
    """Revision 0004 adds a nullable ``family_issued_at``: existing rotation chains get their first token's
    issue time; a row left without one (NULL) counts from its own ``created_at``."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import text

    store = Store(db_url)
    upgrade_database(store.engine, "0003_job_owner")
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [("a", None, t0), ("b", "a", t0 + timedelta(days=80)), ("c", "b", t0 + timedelta(days=160)),
            ("solo", None, t0 + timedelta(days=5))]
    with store.engine.begin() as conn:
        for tid, parent, created in rows:
            conn.execute(text("INSERT INTO tokens (id, name, scope, token_hash, created_at, rotated_from, expires_at) "
                              "VALUES (:id, 'n', 'viewer', :h, :c, :p, :e)"),
                         {"id": tid, "h": tid * 8, "c": created, "p": parent, "e": created + timedelta(days=90)})
    upgrade_database(store.engine)
    got = {t.id: t.family_issued_at for t in store.list_tokens()}
    assert {k: v.replace(tzinfo=UTC) if v.tzinfo is None else v for k, v in got.items() if v} == {
        "a": t0, "b": t0, "c": t0, "solo": t0 + timedelta(days=5)}
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE tokens SET family_issued_at = NULL, expires_at = :e WHERE id = 'solo'"),
                     {"e": datetime.now(UTC) + timedelta(days=30)})
        conn.execute(text("UPDATE tokens SET created_at = :c WHERE id = 'solo'"),
                     {"c": datetime.now(UTC) - timedelta(days=400)})
    from backbone.api.store import ConflictError

    with pytest.raises(ConflictError, match="maximum lifetime"):  # NULL: from its own created_at, 400 days ago
        store.rotate_token("solo")
    downgrade_database(store.engine, "0003_job_owner")
    upgrade_database(store.engine)
    store.dispose()
