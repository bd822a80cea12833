"""The API's persistent store: tokens, versioned scenarios, jobs and the audit log (SQLAlchemy 2).

SQLite (the embedded default) and PostgreSQL are both supported; the schema is created and
upgraded by the Alembic migrations in ``api/migrations`` (:func:`upgrade_database`). Every
mutation writes its audit entry in the same transaction.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from backbone.api.models import AuditEntry, Job, Scenario, ScenarioVersion, Team, Token, utcnow
from sqlalchemy import Engine, create_engine, event, func, select, update
from sqlalchemy.orm import Session, defer, sessionmaker

logger = logging.getLogger(__name__)

SCOPES = ("viewer", "planner", "admin")
"""Token scopes, weakest first; each scope includes the ones before it."""
JOB_STATES = ("queued", "running", "succeeded", "failed", "cancelled")
FINAL_STATES = frozenset({"succeeded", "failed", "cancelled"})
TOKEN_PREFIX = "bbk_"
UNCONDITIONAL_RETRIES = 50
"""Attempts of a write without If-Match that keeps losing the compare-and-set to concurrent writers."""


@dataclass(frozen=True)
class Principal:
    """Who is calling: the token's id, name, scope (its role in its team) and team (None: the
    team-less default tenant). ``admin`` reaches every team."""

    token_id: str
    name: str
    scope: str
    team_id: str | None = None

    def allows(self, scope: str) -> bool:
        """Whether this principal's scope includes ``scope``."""
        return SCOPES.index(self.scope) >= SCOPES.index(scope)

    @property
    def is_admin(self) -> bool:
        """Admins manage teams and tokens and reach every team's scenarios and jobs."""
        return self.scope == "admin"

    def sees(self, team_id: str | None, read_only: bool = False) -> bool:
        """Whether a scenario/job of ``team_id`` is visible (read-only scenarios are shared by all)."""
        return self.is_admin or read_only or team_id == self.team_id

    def owns(self, team_id: str | None) -> bool:
        """Whether this principal may change things of ``team_id`` (its own team, or any as admin)."""
        return self.is_admin or team_id == self.team_id


SYSTEM = Principal("system", "system", "admin")
"""The principal of changes the server makes itself (start-up recovery) and of the CLI."""


class ConflictError(Exception):
    """A stale ``If-Match`` (or a state that forbids the change); the API answers 409."""


class GoneError(LookupError):
    """The thing does not exist (or was deleted, or belongs to another team); the API answers 404."""


class ReadOnlyError(ConflictError):
    """A change to a read-only scenario (the shipped one); the API answers 409."""


DEFAULT_TOKEN_DAYS = 90
"""Lifetime of a new token unless another is asked for (``expires_in_days``; at most 3650)."""


class QueueFullError(Exception):
    """Too many queued jobs: of one token (the API answers 429) or on the server (503), with Retry-After."""

    def __init__(self, message: str, status: int, retry_after_s: int) -> None:
        super().__init__(message)
        self.status, self.retry_after_s = status, retry_after_s


AUDIT_OPTIONS_BYTES = 4096
"""Job options up to this size are copied into the audit entry; larger ones are recorded by digest."""


def hash_token(token: str) -> str:
    """sha256 hex digest of a token (only this is stored)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_id() -> str:
    """A fresh random UUID (string form)."""
    return str(uuid.uuid4())


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL mode, a busy timeout and foreign keys."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    # as many connections as the threadpool has threads (40), so no request waits for a connection
    return create_engine(url, pool_pre_ping=True, pool_size=20, max_overflow=30)


def upgrade_database(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` on ``engine``."""
    _migrate(engine, "upgrade", revision)
    logger.info("database at revision %s", revision)


def downgrade_database(engine: Engine, revision: str = "base") -> None:
    """Undo migrations down to ``revision`` (tests use it to reset a PostgreSQL database)."""
    _migrate(engine, "downgrade", revision)


def _migrate(engine: Engine, direction: str, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config(str(Path(__file__).with_name("alembic.ini")))
    cfg.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        getattr(command, direction)(cfg, revision)


def encode_document(doc: dict[str, Any]) -> tuple[bytes, str, int]:
    """Canonical JSON bytes of a scenario document: (zlib-compressed, sha256, raw size)."""
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return zlib.compress(raw, 6), hashlib.sha256(raw).hexdigest(), len(raw)


def decode_document(content: bytes) -> dict[str, Any]:
    """Inverse of :func:`encode_document`."""
    return json.loads(zlib.decompress(content))  # type: ignore[no-any-return]


def clean_text(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters and made encodable (lone surrogates replaced)."""
    return text[:limit].encode("utf-8", "replace").decode("utf-8")


def etag_of(version: ScenarioVersion) -> str:
    """The strong ETag of one scenario version (quoted, as sent in the header)."""
    return f'"v{version.version}-{version.sha256[:16]}"'


class Store:
    """Typed access to the API's tables.

    Parameters
    ----------
    url
        SQLAlchemy database URL.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._auth_cache: dict[str, tuple[Principal, float]] = {}

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in a transaction, committed on success."""
        with self._sessions.begin() as s:
            yield s

    def upgrade(self) -> None:
        """Bring the schema to the newest migration."""
        upgrade_database(self.engine)

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    # ------------------------------------------------------------------ audit
    @staticmethod
    def _audit(s: Session, who: Principal, action: str, target_type: str, target_id: str,
               detail: dict[str, Any] | None = None) -> None:
        s.add(AuditEntry(at=utcnow(), token_id=who.token_id, token_name=who.name, action=action,
                         target_type=target_type, target_id=target_id, detail=detail))

    def audit_auth_failure(self, address: str, path: str, failures: int, now_limited: bool) -> None:
        """Audit a failed authentication (``auth.failed``; ``auth.rate_limited`` when the address just
        reached its limit). Only the client address and path are recorded, never the token tried."""
        anonymous = Principal("", "anonymous", "viewer")
        with self.session() as s:
            self._audit(s, anonymous, "auth.rate_limited" if now_limited else "auth.failed", "client",
                        clean_text(address, 64), {"path": clean_text(path, 200), "failures_last_minute": failures})

    def list_audit(self, limit: int = 100, offset: int = 0, action: str | None = None) -> list[AuditEntry]:
        """Audit entries, newest first."""
        with self.session() as s:
            q = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit).offset(offset)
            if action:
                q = q.where(AuditEntry.action == action)
            return list(s.scalars(q))

    # ------------------------------------------------------------------ tokens
    def create_token(self, scope: str, name: str, who: Principal = SYSTEM, team: str | None = None,
                     expires_in_days: float | None = DEFAULT_TOKEN_DAYS) -> tuple[Token, str]:
        """Create a token; returns the row and the plaintext token (shown once, never stored).

        ``team`` (id or name) is the team it acts for; ``expires_in_days=None`` never expires.
        Raises GoneError for an unknown team.
        """
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}")
        plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
        name = clean_text(name)
        now = utcnow()
        expires = None if expires_in_days is None else now + timedelta(days=float(expires_in_days))
        with self.session() as s:
            team_id = self._team_id(s, team) if team else None
            tok = Token(id=new_id(), name=name, scope=scope, token_hash=hash_token(plain), created_at=now,
                        team_id=team_id, expires_at=expires)
            s.add(tok)
            self._audit(s, who, "token.create", "token", tok.id,
                        {"scope": scope, "name": name, "team": team_id,
                         "expires_at": expires.isoformat() if expires else None})
        return tok, plain

    def rotate_token(self, token_id: str, who: Principal = SYSTEM) -> tuple[Token, str]:
        """Replace a token by a new one (same name, scope, team and lifetime) and revoke it.

        Raises GoneError when unknown; ConflictError when already revoked.
        """
        with self.session() as s:
            old = s.get(Token, token_id)
            if old is None:
                raise GoneError(f"no token {token_id}")
            if old.revoked_at is not None:
                raise ConflictError(f"token {token_id} is revoked; create a new one")
            now = utcnow()
            life = None if old.expires_at is None else _aware(old.expires_at) - _aware(old.created_at)
            plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
            tok = Token(id=new_id(), name=old.name, scope=old.scope, token_hash=hash_token(plain), created_at=now,
                        team_id=old.team_id, expires_at=None if life is None else now + life, rotated_from=old.id)
            old.revoked_at = now
            s.add(tok)
            self._auth_cache.clear()
            self._audit(s, who, "token.rotate", "token", old.id, {"new_token": tok.id, "name": old.name})
        return tok, plain

    # ------------------------------------------------------------------ teams
    @staticmethod
    def _team_id(s: Session, team: str) -> str:
        row = s.get(Team, team) or s.scalars(select(Team).where(Team.name == team)).one_or_none()
        if row is None:
            raise GoneError(f"no team {team!r}")
        return row.id

    def create_team(self, name: str, who: Principal = SYSTEM) -> Team:
        """Create a team. Raises ConflictError when the name is taken."""
        name = clean_text(name.strip())
        with self.session() as s:
            if s.scalars(select(Team).where(Team.name == name)).one_or_none() is not None:
                raise ConflictError(f"team {name!r} exists")
            team = Team(id=new_id(), name=name, created_at=utcnow())
            s.add(team)
            self._audit(s, who, "team.create", "team", team.id, {"name": name})
        return team

    def list_teams(self) -> list[Team]:
        """Every team, by name."""
        with self.session() as s:
            return list(s.scalars(select(Team).order_by(Team.name)))

    def get_team(self, team: str) -> Team:
        """A team by id or name. Raises GoneError."""
        with self.session() as s:
            row = s.get(Team, self._team_id(s, team))
            assert row is not None
            return row

    AUTH_CACHE_S = 2.0
    """Seconds a successful token lookup is reused in this process (revocation through this store
    clears it at once; a revocation from another process takes effect within this time)."""

    def cached_principal(self, plain: str) -> Principal | None:
        """The principal of a token seen valid less than :attr:`AUTH_CACHE_S` ago (no database access)."""
        hit = self._auth_cache.get(hash_token(plain))
        return hit[0] if hit is not None and hit[1] > time.monotonic() else None

    def token_expires_at(self, token_id: str) -> datetime | None:
        """When a token expires (None: never). Raises GoneError."""
        with self.session() as s:
            tok = s.get(Token, token_id)
            if tok is None:
                raise GoneError(f"no token {token_id}")
            return None if tok.expires_at is None else _aware(tok.expires_at)

    def authenticate(self, plain: str) -> Principal | None:
        """The principal of a valid, unrevoked token, else None."""
        cached = self.cached_principal(plain)
        if cached is not None:
            return cached
        digest = hash_token(plain)
        with self.session() as s:
            tok = s.scalars(select(Token).where(Token.token_hash == digest)).one_or_none()
            now = utcnow()
            if tok is None or tok.revoked_at is not None or (tok.expires_at is not None
                                                             and _aware(tok.expires_at) <= now):
                return None
            last = tok.last_used_at
            if last is None or (now - _aware(last)).total_seconds() > 60:
                tok.last_used_at = now
            principal = Principal(tok.id, tok.name, tok.scope, tok.team_id)
        if len(self._auth_cache) > 10_000:
            self._auth_cache.clear()
        self._auth_cache[digest] = (principal, time.monotonic() + self.AUTH_CACHE_S)
        return principal

    def list_tokens(self) -> list[Token]:
        """Every token (hashes included; the API never returns them)."""
        with self.session() as s:
            return list(s.scalars(select(Token).order_by(Token.created_at)))

    def revoke_token(self, token_id: str, who: Principal = SYSTEM) -> Token:
        """Revoke a token (idempotent). Raises GoneError when unknown."""
        with self.session() as s:
            tok = s.get(Token, token_id)
            if tok is None:
                raise GoneError(f"no token {token_id}")
            self._auth_cache.clear()
            if tok.revoked_at is None:
                tok.revoked_at = utcnow()
                self._audit(s, who, "token.revoke", "token", token_id, {"name": tok.name})
            return tok

    # ------------------------------------------------------------------ scenarios
    def create_scenario(self, doc: dict[str, Any], counts: dict[str, int], source_format: str,
                        who: Principal, read_only: bool = False) -> tuple[Scenario, ScenarioVersion]:
        """Store a new scenario at version 1, owned by the caller's team (``read_only``: nobody may
        change or delete it, every team may read it)."""
        sid = new_id()
        now = utcnow()
        name = clean_text(str(doc.get("name") or "scenario"))
        with self.session() as s:
            sc = Scenario(id=sid, name=name, head_version=1, created_at=now, updated_at=now, created_by=who.name,
                          team_id=who.team_id, read_only=read_only, created_by_token=who.token_id)
            s.add(sc)
            s.flush()
            ver = self._add_version(s, sid, 1, doc, counts, source_format, who, now)
            self._audit(s, who, "scenario.create", "scenario", sid,
                        {"version": 1, "name": name, "format": source_format, **counts})
        return sc, ver

    @staticmethod
    def _add_version(s: Session, sid: str, version: int, doc: dict[str, Any], counts: dict[str, int],
                     source_format: str, who: Principal, now: datetime) -> ScenarioVersion:
        content, sha, size = encode_document(doc)
        ver = ScenarioVersion(scenario_id=sid, version=version,
                              name=clean_text(str(doc.get("name") or "scenario")),
                              sha256=sha, content=content, size_bytes=size, sites=counts["sites"],
                              links=counts["links"], demands=counts["demands"], source_format=source_format,
                              created_at=now, created_by=who.name, created_by_token=who.token_id)
        s.add(ver)
        return ver

    def get_scenario(self, sid: str, who: Principal | None = None) -> tuple[Scenario, ScenarioVersion]:
        """A live scenario and its head version (visible to ``who``; None: no check). Raises GoneError."""
        with self.session() as s:
            sc = s.get(Scenario, sid)
            if sc is None or sc.deleted_at is not None or (who is not None and not who.sees(sc.team_id, sc.read_only)):
                raise GoneError(f"no scenario {sid}")
            ver = s.get(ScenarioVersion, (sid, sc.head_version))
            assert ver is not None
            return sc, ver

    def get_version(self, sid: str, version: int, include_deleted: bool = False,
                    who: Principal | None = None) -> ScenarioVersion:
        """One version of a scenario (visible to ``who``; None: no check). Raises GoneError."""
        with self.session() as s:
            sc = s.get(Scenario, sid)
            if sc is None or (sc.deleted_at is not None and not include_deleted) or \
                    (who is not None and not who.sees(sc.team_id, sc.read_only)):
                raise GoneError(f"no scenario {sid}")
            ver = s.get(ScenarioVersion, (sid, version))
            if ver is None:
                raise GoneError(f"scenario {sid} has no version {version}")
            return ver

    def list_scenarios(self, limit: int = 100, offset: int = 0,
                       who: Principal | None = None) -> list[tuple[Scenario, ScenarioVersion]]:
        """Live scenarios (those ``who`` sees) with their head versions, newest first."""
        with self.session() as s:
            q = (select(Scenario, ScenarioVersion)
                 .join(ScenarioVersion, (ScenarioVersion.scenario_id == Scenario.id)
                       & (ScenarioVersion.version == Scenario.head_version))
                 .where(Scenario.deleted_at.is_(None))
                 .order_by(Scenario.created_at.desc(), Scenario.id).limit(limit).offset(offset))
            if who is not None and not who.is_admin:
                q = q.where(_same_team(Scenario.team_id, who.team_id) | Scenario.read_only.is_(True))
            return [(sc, ver) for sc, ver in s.execute(q).all()]

    def list_versions(self, sid: str, who: Principal | None = None) -> list[ScenarioVersion]:
        """Every version of a live scenario, oldest first. Raises GoneError."""
        with self.session() as s:
            sc = s.get(Scenario, sid)
            if sc is None or sc.deleted_at is not None or (who is not None and not who.sees(sc.team_id, sc.read_only)):
                raise GoneError(f"no scenario {sid}")
            return list(s.scalars(select(ScenarioVersion).where(ScenarioVersion.scenario_id == sid)
                                  .order_by(ScenarioVersion.version)))

    def update_scenario(self, sid: str, doc: dict[str, Any], counts: dict[str, int], source_format: str,
                        who: Principal, expected_version: int | None) -> tuple[Scenario, ScenarioVersion]:
        """Add a new head version; ``expected_version`` (from If-Match) guards against lost updates.

        Raises
        ------
        GoneError
            Unknown or deleted scenario.
        ConflictError
            When the head is no longer ``expected_version``. Without ``expected_version`` the
            write is unconditional: a concurrent writer that wins the race makes this one retry on
            the new head, never fail.
        """
        for attempt in range(UNCONDITIONAL_RETRIES):
            try:
                return self._update_scenario_once(sid, doc, counts, source_format, who, expected_version)
            except ConflictError as exc:
                if expected_version is not None or isinstance(exc, ReadOnlyError) or \
                        attempt == UNCONDITIONAL_RETRIES - 1:
                    raise
                time.sleep(0.005 * (attempt + 1))
        raise AssertionError("unreachable")

    def _update_scenario_once(self, sid: str, doc: dict[str, Any], counts: dict[str, int], source_format: str,
                              who: Principal, expected_version: int | None) -> tuple[Scenario, ScenarioVersion]:
        now = utcnow()
        with self.session() as s:
            sc = s.get(Scenario, sid)
            self._check_writable(sc, sid, who)
            assert sc is not None
            head = sc.head_version
            if expected_version is not None and expected_version != head:
                raise ConflictError(f"scenario {sid} is at version {head}, not {expected_version}")
            # compare-and-set in the database too, so two concurrent writers cannot both win
            res = s.execute(update(Scenario).where(Scenario.id == sid, Scenario.head_version == head,
                                                   Scenario.deleted_at.is_(None))
                            .values(head_version=head + 1, updated_at=now,
                                    name=clean_text(str(doc.get("name") or sc.name))))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                raise ConflictError(f"scenario {sid} was changed concurrently")
            ver = self._add_version(s, sid, head + 1, doc, counts, source_format, who, now)
            self._audit(s, who, "scenario.update", "scenario", sid, {"version": head + 1, **counts})
        sc2, _ = self.get_scenario(sid)
        return sc2, ver

    def check_writable(self, sid: str, who: Principal) -> None:
        """Raise GoneError / ReadOnlyError unless ``who`` may replace or delete the scenario (checked
        before a large body is read; the write itself checks again)."""
        with self.session() as s:
            self._check_writable(s.get(Scenario, sid), sid, who)

    @staticmethod
    def _check_writable(sc: Scenario | None, sid: str, who: Principal) -> None:
        """GoneError unless ``who`` sees the scenario; ReadOnlyError when it is read-only; ConflictError-free
        otherwise. A planner of another team gets 404 (the scenario's existence is not revealed)."""
        if sc is None or sc.deleted_at is not None or not who.sees(sc.team_id, sc.read_only):
            raise GoneError(f"no scenario {sid}")
        if sc.read_only:
            raise ReadOnlyError(f"scenario {sid} ({sc.name}) is read-only; copy it to change it")
        if not who.owns(sc.team_id):
            raise GoneError(f"no scenario {sid}")

    def delete_scenario(self, sid: str, who: Principal, expected_version: int | None) -> None:
        """Mark a scenario deleted (its versions stay, so jobs keep their inputs); unconditional
        (retried past concurrent updates) without ``expected_version``."""
        for attempt in range(UNCONDITIONAL_RETRIES):
            try:
                self._delete_scenario_once(sid, who, expected_version)
                return
            except ConflictError as exc:
                if expected_version is not None or isinstance(exc, ReadOnlyError) or \
                        attempt == UNCONDITIONAL_RETRIES - 1:
                    raise
                time.sleep(0.005 * (attempt + 1))

    def _delete_scenario_once(self, sid: str, who: Principal, expected_version: int | None) -> None:
        now = utcnow()
        with self.session() as s:
            sc = s.get(Scenario, sid)
            self._check_writable(sc, sid, who)
            assert sc is not None
            if expected_version is not None and expected_version != sc.head_version:
                raise ConflictError(f"scenario {sid} is at version {sc.head_version}, not {expected_version}")
            res = s.execute(update(Scenario).where(Scenario.id == sid, Scenario.head_version == sc.head_version,
                                                   Scenario.deleted_at.is_(None)).values(deleted_at=now))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                raise ConflictError(f"scenario {sid} was changed concurrently")
            self._audit(s, who, "scenario.delete", "scenario", sid, {"version": sc.head_version})

    def scenario_document(self, sid: str, version: int, include_deleted: bool = False) -> dict[str, Any]:
        """The canonical JSON document of one version."""
        return decode_document(self.get_version(sid, version, include_deleted).content)

    # ------------------------------------------------------------------ jobs
    def create_job(self, sid: str, version: int, kind: str, options: dict[str, Any], who: Principal,
                   max_queued: int | None = None, max_queued_per_owner: int | None = None,
                   retry_after_s: int = 30) -> Job:
        """Queue a job on one scenario version, owned by ``who``'s token.

        Raises
        ------
        QueueFullError
            When ``who`` already has ``max_queued_per_owner`` queued jobs (429), or the server has
            ``max_queued`` (503).
        """
        job = Job(id=new_id(), scenario_id=sid, scenario_version=version, kind=kind, options=options,
                  status="queued", progress=0.0, message="queued", created_at=utcnow(), created_by=who.name,
                  team_id=who.team_id, created_by_token=who.token_id, owner_id=who.token_id or who.name)
        raw = json.dumps(options, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        logged: dict[str, Any] = ({"options": options} if len(raw) <= AUDIT_OPTIONS_BYTES else
                                  {"options_bytes": len(raw), "options_sha256": hashlib.sha256(raw).hexdigest()})
        with self.session() as s:
            if max_queued_per_owner is not None:
                mine = s.scalar(select(func.count()).select_from(Job).where(Job.status == "queued",
                                                                            Job.owner_id == (who.token_id or who.name))) or 0
                if mine >= max_queued_per_owner:
                    raise QueueFullError(f"this token already has {mine} queued jobs (the limit is "
                                         f"{max_queued_per_owner}); wait for some to start", 429, retry_after_s)
            if max_queued is not None:
                queued = s.scalar(select(func.count()).select_from(Job).where(Job.status == "queued")) or 0
                if queued >= max_queued:
                    raise QueueFullError(f"the server has {queued} queued jobs (the limit is {max_queued})",
                                         503, retry_after_s)
            s.add(job)
            self._audit(s, who, "job.create", "job", job.id,
                        {"scenario": sid, "version": version, "kind": kind, **logged})
        return job

    def get_job(self, job_id: str, who: Principal | None = None) -> Job:
        """One job (of ``who``'s team; None: no check). Raises GoneError."""
        with self.session() as s:
            job = s.get(Job, job_id)
            if job is None or (who is not None and not who.sees(job.team_id)):
                raise GoneError(f"no job {job_id}")
            return job

    def list_jobs(self, scenario_id: str | None = None, status: str | None = None, limit: int = 100,
                  offset: int = 0, who: Principal | None = None, with_options: bool = True) -> list[Job]:
        """Jobs (of ``who``'s team), newest first, optionally of one scenario and/or in one state
        (``with_options=False`` leaves the options unread: listings return summaries)."""
        with self.session() as s:
            q = select(Job).order_by(Job.created_at.desc(), Job.id).limit(limit).offset(offset)
            if who is not None and not who.is_admin:
                q = q.where(_same_team(Job.team_id, who.team_id))
            if not with_options:
                q = q.options(defer(Job.options, raiseload=True))
            if scenario_id:
                q = q.where(Job.scenario_id == scenario_id)
            if status:
                q = q.where(Job.status == status)
            return list(s.scalars(q))

    def count_jobs_by_status(self) -> dict[str, int]:
        """Number of jobs in each state (every state present, zero included)."""
        with self.session() as s:
            rows = s.execute(select(Job.status, func.count()).group_by(Job.status)).all()
        counts = dict.fromkeys(JOB_STATES, 0)
        counts.update({str(k): int(v) for k, v in rows})
        return counts

    def claim_next_job(self, max_running_per_owner: int = 0) -> Job | None:
        """Atomically move the next queued job to ``running`` and return it (fair share).

        Shares are per team, then per token: the next job is the oldest queued job of the token whose
        team runs the fewest jobs and was served least recently, then which itself runs the fewest and was
        served least recently; last, the one waiting longest. So teams take turns, the tokens of a team take turns,
        and neither one team's nor one token's many jobs hold back another's. ``max_running_per_owner``
        (0 = none) caps the jobs one token runs at once.
        """
        with self.session() as s:
            running_by_team: dict[str, int] = {}
            running: dict[str, int] = {}
            for team, owner, n in s.execute(select(Job.team_id, Job.owner_id, func.count())
                                            .where(Job.status == "running").group_by(Job.team_id, Job.owner_id)):
                running_by_team[str(team or "")] = running_by_team.get(str(team or ""), 0) + int(n)
                running[str(owner)] = running.get(str(owner), 0) + int(n)
            heads = s.execute(select(Job.owner_id, func.min(Job.team_id), func.min(Job.created_at))
                              .where(Job.status == "queued").group_by(Job.owner_id)).all()
            served = {str(o): _aware(t) for o, t in s.execute(
                select(Job.owner_id, func.max(Job.started_at))
                .where(Job.owner_id.in_([h[0] for h in heads]), Job.started_at.is_not(None))
                .group_by(Job.owner_id)).all() if t is not None} if heads else {}
            never = datetime.min.replace(tzinfo=UTC)
            team_served = {str(t or ""): _aware(ts) for t, ts in s.execute(
                select(Job.team_id, func.max(Job.started_at)).where(Job.started_at.is_not(None))
                .group_by(Job.team_id)).all() if ts is not None} if heads else {}

            def turn(head: Any) -> tuple[int, datetime, int, datetime, datetime]:
                """The team with the fewest running jobs, then the team served least recently; within it the
                token with the fewest running, then the one served least recently, then the oldest waiting."""
                owner, team = str(head[0]), str(head[1] or "")
                return (running_by_team.get(team, 0), team_served.get(team, never), running.get(owner, 0),
                        served.get(owner, never), _aware(head[2]))

            for owner, _team, _first in sorted(heads, key=turn):
                if max_running_per_owner and running.get(str(owner), 0) >= max_running_per_owner:
                    continue
                for job in s.scalars(select(Job).where(Job.status == "queued", Job.owner_id == owner)
                                     .order_by(Job.created_at, Job.id).limit(5)):
                    res = s.execute(update(Job).where(Job.id == job.id, Job.status == "queued")
                                    .values(status="running", started_at=utcnow(), message="starting"))
                    if res.rowcount == 1:  # type: ignore[attr-defined]
                        s.flush()
                        s.refresh(job)
                        return job
        return None

    def set_progress(self, job_id: str, fraction: float, message: str) -> None:
        """Record a running job's progress (ignored once the job is final)."""
        with self.session() as s:
            s.execute(update(Job).where(Job.id == job_id, Job.status == "running")
                      .values(progress=max(0.0, min(1.0, float(fraction))), message=clean_text(message, 2000)))

    def finish_job(self, job_id: str, status: str, message: str, error: dict[str, Any] | None = None,
                   files: list[str] | None = None) -> bool:
        """Move a running job to a final state; False when it was already final (e.g. cancelled)."""
        assert status in FINAL_STATES
        with self.session() as s:
            values: dict[str, Any] = {"status": status, "message": clean_text(message, 2000), "error": error,
                                      "files": files, "finished_at": utcnow()}
            if status == "succeeded":
                values["progress"] = 1.0
            res = s.execute(update(Job).where(Job.id == job_id, Job.status.in_(("queued", "running")))
                            .values(**values))
            changed = res.rowcount == 1  # type: ignore[attr-defined]
            if changed:
                self._audit(s, SYSTEM, f"job.{status}", "job", job_id, {"message": message[:500]})
            return changed

    def cancel_job(self, job_id: str, who: Principal) -> Job:
        """Mark a queued or running job cancelled. Raises GoneError, ConflictError (already final)."""
        with self.session() as s:
            job = s.get(Job, job_id)
            if job is None or not who.owns(job.team_id):
                raise GoneError(f"no job {job_id}")
            if job.status in FINAL_STATES:
                raise ConflictError(f"job {job_id} already {job.status}")
            res = s.execute(update(Job).where(Job.id == job_id, Job.status.in_(("queued", "running")))
                            .values(status="cancelled", message=f"cancelled by {who.name}", finished_at=utcnow()))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                raise ConflictError(f"job {job_id} finished meanwhile")
            self._audit(s, who, "job.cancel", "job", job_id, {"was": job.status})
        return self.get_job(job_id)

    def purge(self, deleted_retention_s: float = 0, job_retention_s: float = 0, audit_retention_s: float = 0,
              max_versions_per_scenario: int = 0) -> PurgeReport:
        """Free what the retention settings no longer keep (0 = keep forever / no cap).

        * jobs finished more than ``job_retention_s`` ago;
        * scenarios deleted more than ``deleted_retention_s`` ago: their finished jobs, then their
          versions and the scenario itself (kept while a job of theirs is still queued or running);
        * versions older than the newest ``max_versions_per_scenario`` that no job refers to;
        * audit entries older than ``audit_retention_s``.

        The caller deletes the result folders of :attr:`PurgeReport.job_ids`. One ``store.purge``
        audit entry records the counts.
        """
        from datetime import timedelta

        from sqlalchemy import delete, exists

        now = utcnow()
        report = PurgeReport()
        with self.session() as s:
            final = Job.status.in_(tuple(FINAL_STATES))
            doomed_jobs: set[str] = set()
            if job_retention_s:
                cutoff = now - timedelta(seconds=job_retention_s)
                doomed_jobs |= set(s.scalars(select(Job.id).where(final, Job.finished_at < cutoff)))
            gone: list[str] = []
            if deleted_retention_s:
                cutoff = now - timedelta(seconds=deleted_retention_s)
                gone = list(s.scalars(select(Scenario.id).where(Scenario.deleted_at.is_not(None),
                                                                Scenario.deleted_at < cutoff)))
                if gone:
                    doomed_jobs |= set(s.scalars(select(Job.id).where(final, Job.scenario_id.in_(gone))))
            if doomed_jobs:
                ids = sorted(doomed_jobs)
                for i in range(0, len(ids), 500):
                    s.execute(delete(Job).where(Job.id.in_(ids[i:i + 500])))
                report.job_ids = ids
            for sid in gone:
                if s.scalar(select(func.count()).select_from(Job).where(Job.scenario_id == sid)):
                    continue  # a job of it is still queued or running
                report.versions += s.execute(delete(ScenarioVersion).where(
                    ScenarioVersion.scenario_id == sid)).rowcount  # type: ignore[attr-defined]
                s.execute(delete(Scenario).where(Scenario.id == sid))
                report.scenarios += 1
            if max_versions_per_scenario:
                used = exists().where(Job.scenario_id == ScenarioVersion.scenario_id,
                                      Job.scenario_version == ScenarioVersion.version)
                heads = select(Scenario.id, Scenario.head_version).where(
                    Scenario.head_version > max_versions_per_scenario)
                for sid, head in s.execute(heads).all():
                    report.versions += s.execute(delete(ScenarioVersion).where(
                        ScenarioVersion.scenario_id == sid,
                        ScenarioVersion.version <= head - max_versions_per_scenario,
                        ~used)).rowcount  # type: ignore[attr-defined]
            if audit_retention_s:
                cutoff = now - timedelta(seconds=audit_retention_s)
                report.audit_entries = s.execute(delete(AuditEntry).where(
                    AuditEntry.at < cutoff)).rowcount  # type: ignore[attr-defined]
            if report.any():
                self._audit(s, SYSTEM, "store.purge", "store", "retention", report.counts())
        return report

    def fail_interrupted_jobs(self, reason: str = "server restarted") -> list[str]:
        """Mark every ``running`` job failed (called at start-up: their workers died with the server)."""
        with self.session() as s:
            ids = list(s.scalars(select(Job.id).where(Job.status == "running")))
            if ids:
                s.execute(update(Job).where(Job.id.in_(ids), Job.status == "running").values(
                    status="failed", message=reason, finished_at=utcnow(),
                    error={"type": "about:blank", "title": "Job interrupted", "status": 500, "detail": reason,
                           "errors": []}))
                for jid in ids:
                    self._audit(s, SYSTEM, "job.failed", "job", jid, {"message": reason})
        return ids


@dataclass
class PurgeReport:
    """What one :meth:`Store.purge` freed."""

    job_ids: list[str] = field(default_factory=list)
    scenarios: int = 0
    versions: int = 0
    audit_entries: int = 0

    def any(self) -> bool:
        """Whether anything was freed."""
        return bool(self.job_ids or self.scenarios or self.versions or self.audit_entries)

    def counts(self) -> dict[str, int]:
        """Counts per kind, for the audit log and the CLI."""
        return {"jobs": len(self.job_ids), "scenarios": self.scenarios, "versions": self.versions,
                "audit_entries": self.audit_entries}


def _aware(dt: datetime) -> datetime:
    """SQLite returns naive datetimes; they are UTC."""
    from datetime import UTC

    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def _same_team(column: Any, team_id: str | None) -> Any:
    """SQL: ``column`` is ``team_id`` (NULL-safe: the team-less tenant is NULL)."""
    return column.is_(None) if team_id is None else column == team_id
