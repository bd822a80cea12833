"""``backbone token create|list|revoke`` and ``backbone db upgrade`` (``serve`` is exercised by the live tests)."""

from __future__ import annotations

import json
from pathlib import Path

import backbone.api
import pytest
from backbone.api.cli.main import app
from backbone.api.store import Store, hash_token
from typer.testing import CliRunner


@pytest.fixture
def env(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("BACKBONE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", db_url)
    return db_url


def test_token_lifecycle(env: str) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["token", "create", "--scope", "planner", "--name", "alice"])
    assert out.exit_code == 0, out.output
    token = out.stdout.split()[-1]
    assert token.startswith("bbk_")
    store = Store(env)
    principal = store.authenticate(token)
    assert principal is not None and principal.scope == "planner" and principal.name == "alice"
    assert [t.token_hash for t in store.list_tokens()] == [hash_token(token)]
    listed = runner.invoke(app, ["token", "list", "--json"])
    assert listed.exit_code == 0
    rows = json.loads(listed.stdout)
    assert [(r["name"], r["scope"], r["revoked_at"]) for r in rows] == [("alice", "planner", None)]
    assert token not in listed.stdout
    revoked = runner.invoke(app, ["token", "revoke", rows[0]["id"]])
    assert revoked.exit_code == 0
    assert Store(env).authenticate(token) is None
    assert runner.invoke(app, ["token", "revoke", "no-such-id"]).exit_code == 2
    bad = runner.invoke(app, ["token", "create", "--scope", "root"])
    assert bad.exit_code == 2 and "scope" in bad.output
    made = runner.invoke(app, ["token", "create", "--scope", "viewer", "--json"])
    assert json.loads(made.stdout)["scope"] == "viewer"
    store.dispose()


def test_db_upgrade_is_idempotent(env: str) -> None:
    runner = CliRunner()
    for _ in range(2):
        out = runner.invoke(app, ["db", "upgrade"])
        assert out.exit_code == 0, out.output
    from sqlalchemy import inspect, text

    store = Store(env)
    names = set(inspect(store.engine).get_table_names())
    assert {"tokens", "scenarios", "scenario_versions", "jobs", "audit_log", "alembic_version"} <= names
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(str(Path(backbone.api.__file__).with_name("migrations"))).get_current_head()
    assert head is not None
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head
    store.dispose()
