"""SQLAlchemy tables of the API's store (the Alembic migrations in ``api/migrations`` create them).

Scenario content lives in the database (zlib-compressed canonical JSON, one row per immutable
version); job result files live under ``<data dir>/results/<job id>/`` with the database holding
their names. Timestamps are timezone-aware UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """Now, timezone-aware UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base of every table."""


class Team(Base):
    """A team: it owns scenarios and jobs; each token acts for at most one team."""

    __tablename__ = "teams"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # the team's own quotas (migration 0007; NULL: the server's setting, 0: no quota for this team)
    max_cpu_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    cpu_window_h: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_stored_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class Token(Base):
    """An API token; only its sha256 is stored. Its scope is its role in its team (no team: the
    default, team-less tenant); ``admin`` tokens manage every team."""

    __tablename__ = "tokens"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    scope: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    team_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    rotated_from: Mapped[str | None] = mapped_column(String(36), nullable=True)
    family_issued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    """When the first token of its rotation chain was issued (None: rows from before revision 0004 without a
    chain count from their own ``created_at``)."""


class Scenario(Base):
    """A scenario's identity and head version; ``deleted_at`` marks a deleted one (versions stay)."""

    __tablename__ = "scenarios"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    head_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(200))
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    team_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    read_only: Mapped[bool] = mapped_column(Boolean, default=False)
    created_by_token: Mapped[str | None] = mapped_column(String(36), nullable=True)


class ScenarioVersion(Base):
    """One immutable version of a scenario: its canonical JSON (compressed) and counts."""

    __tablename__ = "scenario_versions"
    scenario_id: Mapped[str] = mapped_column(String(36), ForeignKey("scenarios.id"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    sha256: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sites: Mapped[int] = mapped_column(Integer)
    links: Mapped[int] = mapped_column(Integer)
    demands: Mapped[int] = mapped_column(Integer)
    source_format: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(200))
    created_by_token: Mapped[str | None] = mapped_column(String(36), nullable=True)


class Job(Base):
    """A planning task run on one scenario version."""

    __tablename__ = "jobs"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    scenario_id: Mapped[str] = mapped_column(String(36), ForeignKey("scenarios.id"))
    scenario_version: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), index=True)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    files: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_by: Mapped[str] = mapped_column(String(200))
    team_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_by_token: Mapped[str | None] = mapped_column(String(36), nullable=True)
    owner_id: Mapped[str] = mapped_column(String(36), default="", server_default="")  # the submitting token's id
    # the lease of a job claimed by a `backbone worker` (migration 0005; NULL for jobs a server runs inline)
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # what the job used (migration 0006; NULL for jobs of earlier releases or killed before they reported)
    cpu_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    result_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    __table_args__ = (Index("ix_jobs_scenario", "scenario_id", "created_at"),
                      Index("ix_jobs_team", "team_id", "created_at"),
                      Index("ix_jobs_status_owner", "status", "owner_id"),
                      Index("ix_jobs_status_lease", "status", "lease_expires_at"))


class JobInput(Base):
    """The uploaded bytes of an ``import`` job, kept until a worker parses them (migration 0008; deleted when
    the job ends). ``filename`` None: a canonical JSON request body."""

    __tablename__ = "job_inputs"
    job_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    filename: Mapped[str | None] = mapped_column(String(200), nullable=True)
    content: Mapped[bytes] = mapped_column(LargeBinary)
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AuditEntry(Base):
    """Who changed what and when (every mutation, every job)."""

    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    token_id: Mapped[str] = mapped_column(String(36))
    token_name: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(64))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str] = mapped_column(String(64))
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
