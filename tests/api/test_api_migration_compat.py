"""Rolling upgrades (docs/deploy.md "Rolling upgrades"): the database is migrated from the previous release's
schema (the revision before the newest) to head while rows the previous release wrote stay readable by the new
code, its queued jobs are claimed by the new workers, and the previous release's own writes and reads keep
working on the new schema (servers of two adjacent releases share the database during the roll).

Also the check behind that contract: every migration from the lease one (``0005_job_lease``) on only adds
tables, nullable or server-defaulted columns and indexes; never drops, renames or retypes what the previous
release reads. It runs the migrations one at a time on SQLite and compares the schemas, so it needs no
parsing of migration code and catches any op (``op.execute`` included).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.config import Config
from alembic.script import ScriptDirectory

from backbone.api.cli.server_cmds import StorageUnusableError
from backbone.api.cli.worker_cmds import check_worker_storage
from backbone.api.models import utcnow
from backbone.api.settings import Settings
from backbone.api.store import (
    JobQuotas,
    Principal,
    SchemaBehindError,
    Store,
    TeamQuotaSettings,
    check_schema_current,
    encode_document,
    hash_token,
    make_engine,
    migration_revisions,
    schema_revision,
    upgrade_database,
)
from backbone.api.store.base import API_DIR

LEASE_REVISION = "0005_job_lease"
"""The first migration written under the rolling-upgrade contract; it and every later one must be additive."""
PLAIN_TOKEN = "bbk_previous-release-token"
DOC = {"name": "old", "sites": [{"id": "A", "lon": 0.0, "lat": 0.0, "region": "NA"}]}


def revisions() -> list[str]:
    """Every migration revision, oldest first (one linear history)."""
    cfg = Config(str(API_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(API_DIR / "migrations"))
    script = ScriptDirectory.from_config(cfg)
    assert len(script.get_heads()) == 1, "the migrations must form one line (one head)"
    return migration_revisions()


def previous_head() -> str:
    """The revision before the newest: the schema of the previous release."""
    return revisions()[-2]


def write_as_previous_release(engine: sa.Engine) -> dict[str, str]:
    """Rows the previous release writes: a team, a team token, a scenario with one version and jobs queued,
    running inline and finished. Inserted through the tables as they are in the database now, with only the
    columns the previous release's schema has (``prev_columns``), as its code would."""
    prev = previous_columns()
    meta = sa.MetaData()
    meta.reflect(engine, only=["teams", "tokens", "scenarios", "scenario_versions", "jobs"])
    now = utcnow()
    content, sha, size = encode_document(DOC)
    ids = {"team": "team-1", "token": "tok-1", "scenario": "sc-1", "queued": "job-q", "running": "job-r",
           "done": "job-d"}
    job = {"scenario_id": ids["scenario"], "scenario_version": 1, "kind": "te", "options": {"k_paths": 3},
           "progress": 0.0, "message": "queued", "created_at": now, "created_by": "old-server",
           "team_id": ids["team"], "created_by_token": ids["token"], "owner_id": ids["token"]}
    rows: list[tuple[str, dict[str, Any]]] = [
        ("teams", {"id": ids["team"], "name": "blue", "created_at": now}),
        ("tokens", {"id": ids["token"], "name": "old", "scope": "planner", "token_hash": hash_token(PLAIN_TOKEN),
                    "created_at": now, "team_id": ids["team"], "expires_at": now + timedelta(days=30),
                    "family_issued_at": now}),
        ("scenarios", {"id": ids["scenario"], "name": "old", "head_version": 1, "created_at": now,
                       "updated_at": now, "created_by": "old", "team_id": ids["team"], "read_only": False,
                       "created_by_token": ids["token"]}),
        ("scenario_versions", {"scenario_id": ids["scenario"], "version": 1, "name": "old", "sha256": sha,
                               "content": content, "size_bytes": size, "sites": 1, "links": 0, "demands": 0,
                               "source_format": "canonical-json", "created_at": now, "created_by": "old",
                               "created_by_token": ids["token"]}),
        ("jobs", {**job, "id": ids["queued"], "status": "queued", "created_at": now - timedelta(seconds=5)}),
        ("jobs", {**job, "id": ids["running"], "status": "running", "started_at": now, "message": "running"}),
        ("jobs", {**job, "id": ids["done"], "status": "succeeded", "progress": 1.0, "message": "done",
                  "started_at": now, "finished_at": now, "files": ["result.json"]}),
    ]
    with engine.begin() as conn:
        for table, values in rows:
            missing = set(values) - prev[table]
            assert not missing, f"the test writes {table}.{sorted(missing)}, which the previous release lacks"
            conn.execute(meta.tables[table].insert().values(**values))
    return ids


_PREVIOUS: dict[str, set[str]] = {}


def previous_columns() -> dict[str, set[str]]:
    """Columns of each table at the previous release's schema (migrated once on a scratch SQLite file)."""
    if not _PREVIOUS:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            engine = make_engine(f"sqlite:///{Path(tmp) / 'prev.db'}")
            upgrade_database(engine, previous_head())
            inspector = sa.inspect(engine)
            _PREVIOUS.update({t: {c["name"] for c in inspector.get_columns(t)} for t in inspector.get_table_names()})
            engine.dispose()
    return _PREVIOUS


@pytest.fixture
def previous_schema(db_url: str) -> Iterator[sa.Engine]:
    """An empty database at the previous release's schema."""
    engine = make_engine(db_url)
    upgrade_database(engine, previous_head())
    yield engine
    engine.dispose()


def test_the_previous_release_is_the_revision_before_the_lease_or_later() -> None:
    revs = revisions()
    assert LEASE_REVISION in revs and previous_head() in revs[revs.index(LEASE_REVISION) - 1:]


def test_rows_of_the_previous_release_are_read_and_claimed_after_the_upgrade(
        previous_schema: sa.Engine, db_url: str) -> None:
    ids = write_as_previous_release(previous_schema)
    store = Store(db_url)
    try:
        store.upgrade()
        who = store.authenticate(PLAIN_TOKEN)
        assert who is not None and who.team_id == ids["team"] and who.scope == "planner"
        sc, version = store.get_scenario(ids["scenario"], who)
        assert (sc.name, version.version) == ("old", 1)
        assert store.scenario_document(ids["scenario"], 1) == DOC
        # a team the previous release wrote has no quotas of its own: the server's hold for it (0007_team_quotas)
        server = JobQuotas(cpu_s=100.0, window_s=3600.0, stored_bytes=10)
        effective = store.effective_quotas(ids["team"], server)
        assert effective.quotas == server and not effective.team_settings.any
        assert store.get_team("blue").max_cpu_s is None
        done = store.get_job(ids["done"], who)
        assert (done.status, done.files, done.attempts, done.worker_id, done.cancel_requested) == (
            "succeeded", ["result.json"], 0, None, False)
        assert {j.id for j in store.list_jobs(ids["scenario"], who=who)} == set(ids.values()) - {
            "team-1", "tok-1", "sc-1"}
        assert store.count_jobs_by_status()["queued"] == 1
        # a new worker claims the old server's queued job with a lease
        claimed = store.claim_next_job(worker_id="w-new", lease_s=30)
        assert claimed is not None and claimed.id == ids["queued"]
        assert (claimed.attempts, claimed.worker_id) == (1, "w-new") and claimed.lease_expires_at is not None
        assert store.claim_next_job(worker_id="w-new", lease_s=30) is None
        # the old server's inline job has no lease: reclaiming expired leases leaves it alone
        report = store.reclaim_expired_jobs({"te"})
        assert (report.requeued, report.failed) == ([], [])
        assert store.get_job(ids["running"]).status == "running"
        store.finish_job(claimed.id, "succeeded", "done")
        assert store.get_job(claimed.id).status == "succeeded"
    finally:
        store.dispose()


def test_the_previous_release_writes_and_reads_on_the_new_schema(db_url: str) -> None:
    """Mid-roll, a server of the previous release writes and reads the upgraded database; the new code reads
    its rows (so the new columns must have defaults the database fills in)."""
    store = Store(db_url)
    try:
        store.upgrade()
        ids = write_as_previous_release(store.engine)
        prev = previous_columns()
        meta = sa.MetaData()
        meta.reflect(store.engine, only=["jobs", "tokens", "teams"])
        jobs = meta.tables["jobs"]
        teams = meta.tables["teams"]
        store.set_team_quotas("blue", TeamQuotaSettings(max_cpu_s=7.0), JobQuotas())  # set by the new release
        with store.engine.begin() as conn:  # the previous release's own claim and read, by its columns only
            conn.execute(jobs.update().where(jobs.c.id == ids["queued"], jobs.c.status == "queued")
                         .values(status="running", started_at=utcnow(), message="starting"))
            row = conn.execute(sa.select(*[jobs.c[c] for c in sorted(prev["jobs"])])
                               .where(jobs.c.id == ids["queued"])).mappings().one()
            token = conn.execute(sa.select(*[meta.tables["tokens"].c[c] for c in sorted(prev["tokens"])])).one()
            # the previous release creates and lists teams by its columns only, beside a team with quotas
            conn.execute(teams.insert().values(id="team-2", name="green", created_at=utcnow()))
            names = conn.execute(sa.select(*[teams.c[c] for c in sorted(prev["teams"])])
                                 .order_by(teams.c.name)).mappings().all()
        assert row["status"] == "running" and row["options"] == {"k_paths": 3}
        assert token.token_hash == hash_token(PLAIN_TOKEN)
        assert [t["name"] for t in names] == ["blue", "green"]
        assert store.effective_quotas("team-2", JobQuotas(cpu_s=3.0)).sources.max_cpu_s == "server"
        assert store.effective_quotas(ids["team"], JobQuotas(cpu_s=3.0)).quotas.cpu_s == 7.0
        job = store.get_job(ids["queued"], Principal(ids["token"], "old", "planner", ids["team"]))
        assert (job.status, job.attempts, job.cancel_requested, job.lease_expires_at) == ("running", 0, False, None)
    finally:
        store.dispose()


def test_code_of_this_release_refuses_the_previous_schema_when_migrations_are_off(
        previous_schema: sa.Engine, db_url: str, tmp_path: Path) -> None:
    """Release N needs schema N: with BACKBONE_RUN_MIGRATIONS off, a worker on an unmigrated database says so in
    one line instead of failing on its first claim."""
    with pytest.raises(SchemaBehindError, match=f"schema revision {previous_head()}; this release needs "
                                                f"{revisions()[-1]}: run `backbone db upgrade`"):
        check_schema_current(previous_schema)
    settings = Settings(data_dir=tmp_path / "data", database_url=db_url, run_migrations=False)
    with pytest.raises(StorageUnusableError, match=f"cannot be used .*{previous_head()}.*backbone db upgrade"):
        check_worker_storage(settings, tmp_path / "results")
    assert schema_revision(previous_schema) == previous_head()  # nothing migrated behind the operator's back
    upgrade_database(previous_schema)
    check_schema_current(previous_schema)
    check_worker_storage(settings, tmp_path / "results")


def _schema(engine: sa.Engine) -> dict[str, dict[str, dict[str, Any]]]:
    inspector = sa.inspect(engine)
    return {t: {c["name"]: {"type": str(c["type"]), "nullable": c["nullable"], "default": c.get("default")}
                for c in inspector.get_columns(t)}
            for t in inspector.get_table_names() if t != "alembic_version"}


def additive_problems(before: dict[str, dict[str, dict[str, Any]]],
                      after: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """What a migration from ``before`` to ``after`` does that code of the previous release would trip on."""
    problems = [f"table {t} dropped" for t in before if t not in after]
    for table, columns in before.items():
        for name, col in columns.items():
            new = after.get(table, {}).get(name)
            if table in after and new is None:
                problems.append(f"column {table}.{name} dropped or renamed")
            elif new is not None and new["type"] != col["type"]:
                problems.append(f"column {table}.{name} retyped {col['type']} -> {new['type']}")
            elif new is not None and col["nullable"] and not new["nullable"]:
                problems.append(f"column {table}.{name} made NOT NULL")
        for name, new in after.get(table, {}).items():
            if name not in columns and not new["nullable"] and new["default"] is None:
                problems.append(f"column {table}.{name} added NOT NULL without a server default")
    return problems


def test_every_migration_from_the_lease_one_on_is_additive(tmp_path: Path) -> None:
    revs = revisions()
    engine = make_engine(f"sqlite:///{tmp_path / 'steps.db'}")
    try:
        upgrade_database(engine, revs[revs.index(LEASE_REVISION) - 1])
        for rev in revs[revs.index(LEASE_REVISION):]:
            before = _schema(engine)
            upgrade_database(engine, rev)
            assert additive_problems(before, _schema(engine)) == [], f"migration {rev} is not additive"
    finally:
        engine.dispose()


def test_the_additive_check_catches_drops_retypes_and_required_columns() -> None:
    before = {"jobs": {"id": {"type": "VARCHAR(36)", "nullable": False, "default": None},
                       "note": {"type": "TEXT", "nullable": True, "default": None}}}
    assert additive_problems(before, {}) == ["table jobs dropped"]
    assert additive_problems(before, {"jobs": {"id": before["jobs"]["id"]}}) == ["column jobs.note dropped or renamed"]
    retyped = {"jobs": {**before["jobs"], "id": {"type": "INTEGER", "nullable": False, "default": None}}}
    assert additive_problems(before, retyped) == ["column jobs.id retyped VARCHAR(36) -> INTEGER"]
    required = {"jobs": {**before["jobs"], "x": {"type": "INTEGER", "nullable": False, "default": None}}}
    assert additive_problems(before, required) == ["column jobs.x added NOT NULL without a server default"]
    defaulted = {"jobs": {**before["jobs"], "x": {"type": "INTEGER", "nullable": False, "default": "0"},
                          "y": {"type": "TEXT", "nullable": True, "default": None}}, "new": {}}
    assert additive_problems(before, defaulted) == []
