"""What every repository of the store shares: the principal, the errors, the engine and its migrations,
the session factory, and the small helpers (ids, token hashes, document encoding, text cleaning).
"""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from backbone.api.models import ScenarioVersion

logger = logging.getLogger(__name__)

API_DIR = Path(__file__).resolve().parent.parent
"""The ``backbone.api`` package folder: it holds ``alembic.ini`` and ``migrations/``."""

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

    http_status = 409
    title = "Conflict"


class GoneError(LookupError):
    """The thing does not exist (or was deleted, or belongs to another team); the API answers 404."""

    http_status = 404
    title = "Not Found"


class ReadOnlyError(ConflictError):
    """A change to a read-only scenario (the shipped one); the API answers 409."""


DEFAULT_TOKEN_DAYS = 90
"""Lifetime of a new token unless another is asked for (``expires_in_days``; at most 3650)."""
DEFAULT_TOKEN_MAX_DAYS = 365.0
"""Hard maximum lifetime of a token family (a token and every rotation of it), counted from the first
token's issue, unless the store is given another (``BACKBONE_TOKEN_MAX_LIFETIME_DAYS``)."""


class QueueFullError(Exception):
    """Too many queued jobs: of one token (the API answers 429) or on the server (503), with Retry-After."""

    http_status = 503
    """The class's status; each error carries its own (429 or 503) as ``http_status``."""

    def __init__(self, message: str, status: int, retry_after_s: int) -> None:
        super().__init__(message)
        self.status, self.retry_after_s = status, retry_after_s
        self.http_status = status
        self.title = "Too Many Requests" if status == 429 else "Service Unavailable"

    @property
    def headers(self) -> dict[str, str]:
        """``Retry-After`` for the API's answer."""
        return {"Retry-After": str(self.retry_after_s)}


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


class SchemaBehindError(Exception):
    """The database's schema is not this release's (migrations are switched off and nobody ran them yet)."""

    http_status = 503
    title = "Service Unavailable"


def _script_config() -> Any:
    from alembic.config import Config

    cfg = Config(str(API_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(API_DIR / "migrations"))
    return cfg


def migration_revisions() -> list[str]:
    """Every migration revision of this release, oldest first (the last one is the schema this code reads)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_script_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def schema_revision(engine: Engine) -> str | None:
    """The revision the database is at (None: never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()  # type: ignore[no-any-return]


def check_schema_current(engine: Engine) -> None:
    """Refuse a database whose schema is older than this release's (docs/deploy.md "Rolling upgrades": code of
    release N needs schema N; schema N still serves release N-1, so migrate first).

    Raises
    ------
    SchemaBehindError
        Naming the database's revision, the one this release needs and how to get there.
    """
    current, revisions = schema_revision(engine), migration_revisions()
    if current != revisions[-1]:
        at = "no schema" if current is None else f"schema revision {current}"
        raise SchemaBehindError(f"the database has {at}; this release needs {revisions[-1]}: run `backbone db "
                                "upgrade` (or start with BACKBONE_RUN_MIGRATIONS=true) first")


def downgrade_database(engine: Engine, revision: str = "base") -> None:
    """Undo migrations down to ``revision`` (tests use it to reset a PostgreSQL database)."""
    _migrate(engine, "downgrade", revision)


def _migrate(engine: Engine, direction: str, revision: str) -> None:
    from alembic import command

    cfg = _script_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        getattr(command, direction)(cfg, revision)


def encode_document(doc: dict[str, Any]) -> tuple[bytes, str, int]:
    """Canonical JSON bytes of a scenario document: (zlib-compressed, sha256, raw size)."""
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return zlib.compress(raw, 6), hashlib.sha256(raw).hexdigest(), len(raw)


@dataclass(frozen=True)
class EncodedDocument:
    """A scenario document already encoded (:func:`encode_document`), as a bounded worker hands it over:
    the API process stores it without building the document's objects."""

    name: str
    content: bytes
    sha256: str
    size_bytes: int

    @classmethod
    def of(cls, doc: dict[str, Any] | EncodedDocument) -> EncodedDocument:
        """``doc`` encoded (unchanged when it already is)."""
        if isinstance(doc, EncodedDocument):
            return doc
        content, sha, size = encode_document(doc)
        return cls(str(doc.get("name") or ""), content, sha, size)


def decode_document(content: bytes) -> dict[str, Any]:
    """Inverse of :func:`encode_document`."""
    return json.loads(zlib.decompress(content))  # type: ignore[no-any-return]


def clean_text(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters and made encodable (lone surrogates replaced)."""
    return text[:limit].encode("utf-8", "replace").decode("utf-8")


INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories escaped by :func:`safe_text`: controls (newlines, escape sequences), format characters
(bidi overrides such as U+202E, zero-width characters), surrogates, line and paragraph separators."""


def safe_text(text: str, limit: int = 200) -> str:
    r"""``text`` as one visible line: the one cleaning of every user name and audit text the server writes.

    NFKC-normalised, then every character of :data:`INVISIBLE_CATEGORIES` replaced by its escape
    (``\u000a``, ``\u202e``), so a name can neither break a log line nor reorder what a reader sees;
    cut to ``limit`` characters.

    Parameters
    ----------
    text
        Untrusted text (a token or team name, an OIDC ``preferred_username``, an audit detail).
    limit
        Most characters kept (after escaping).

    Returns
    -------
    str
        Printable, valid UTF-8 text of at most ``limit`` characters.

    Examples
    --------
    >>> safe_text("alice\u202eexe.txt\nroot")
    'alice\\u202eexe.txt\\u000aroot'
    """
    normal = unicodedata.normalize("NFKC", text[: limit * 2])
    return "".join(
        (f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        if unicodedata.category(char) in INVISIBLE_CATEGORIES else char
        for char in normal
    )[:limit]


def etag_of(version: ScenarioVersion) -> str:
    """The strong ETag of one scenario version (quoted, as sent in the header)."""
    return f'"v{version.version}-{version.sha256[:16]}"'



def as_utc(dt: datetime) -> datetime:
    """SQLite returns naive datetimes; they are UTC."""
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def same_team(column: Any, team_id: str | None) -> Any:
    """SQL: ``column`` is ``team_id`` (NULL-safe: the team-less tenant is NULL)."""
    return column.is_(None) if team_id is None else column == team_id


class Database:
    """One database: its URL, engine and transactional sessions (shared by every repository).

    Parameters
    ----------
    url
        SQLAlchemy database URL.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in a transaction, committed on success."""
        with self._sessions.begin() as s:
            yield s
