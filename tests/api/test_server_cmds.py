"""``backbone token create|list|revoke``, ``backbone db upgrade`` and ``backbone db purge`` (``serve`` is exercised by the live tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import backbone.api
from backbone.api.cli.main import app
from backbone.api.store import Store, hash_token


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


def test_db_purge_applies_retention(env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`backbone db purge` frees what the retention settings no longer keep and says what it freed."""
    from backbone.api.store import SYSTEM

    runner = CliRunner()
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    store = Store(env)
    doc = {"name": "x", "sites": [{"id": "A", "name": "A", "lon": 0, "lat": 0, "region": "NA"}]}
    counts = {"sites": 1, "links": 0, "demands": 0}
    sc, _ = store.create_scenario(doc, counts, "json", SYSTEM)
    store.delete_scenario(sc.id, SYSTEM, None)
    out = runner.invoke(app, ["db", "purge", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == {"jobs": 0, "scenarios": 0, "versions": 0, "audit_entries": 0}
    monkeypatch.setenv("BACKBONE_DELETED_RETENTION_DAYS", "1e-9")
    out = runner.invoke(app, ["db", "purge", "--json"])
    assert json.loads(out.stdout) == {"jobs": 0, "scenarios": 1, "versions": 1, "audit_entries": 0}
    store.dispose()


def _no_server(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("the server started on storage it cannot write")


def _one_line_exit_6(result: Result, *named: str) -> str:
    assert result.exit_code == 6, (result.exit_code, result.output)
    assert "Traceback" not in result.output and result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for text in named:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def test_serve_on_a_read_only_data_dir_exits_6_with_one_line(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated (tests run as root, whom file modes do not stop): every write probe fails with EROFS."""
    import errno
    import tempfile

    import uvicorn

    data = tmp_path / "data"
    monkeypatch.setenv("BACKBONE_DATA_DIR", str(data))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", f"sqlite:///{tmp_path / 'api.db'}")
    monkeypatch.setattr(uvicorn, "run", _no_server)

    def read_only(*_args: object, **_kwargs: object) -> object:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", read_only)
    result = CliRunner().invoke(app, ["serve", "--port", "0"], env={"COLUMNS": "300"})
    _one_line_exit_6(result, str(data), "not writable", "Read-only file system", "BACKBONE_DATA_DIR")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes to a 0555 folder")
def test_serve_on_a_chmod_0555_data_dir_exits_6(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o555)
    monkeypatch.setenv("BACKBONE_DATA_DIR", str(data))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", f"sqlite:///{tmp_path / 'api.db'}")
    monkeypatch.setattr(uvicorn, "run", _no_server)
    try:
        result = CliRunner().invoke(app, ["serve"], env={"COLUMNS": "300"})
    finally:
        data.chmod(0o755)
    _one_line_exit_6(result, str(data), "not writable")


def test_serve_on_a_database_it_cannot_open_exits_6_naming_it(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    monkeypatch.setenv("BACKBONE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", f"sqlite:///{tmp_path / 'missing' / 'folder' / 'api.db'}")
    monkeypatch.setattr(uvicorn, "run", _no_server)
    result = CliRunner().invoke(app, ["serve"], env={"COLUMNS": "300"})
    _one_line_exit_6(result, str(tmp_path / "missing" / "folder" / "api.db"), "cannot be opened for writing")
    token = CliRunner().invoke(app, ["token", "create", "--scope", "viewer"], env={"COLUMNS": "300"})
    _one_line_exit_6(token, "cannot be opened for writing")
