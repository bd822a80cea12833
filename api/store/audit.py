"""The audit repository: every mutation's entry (written in the mutation's own transaction) and its listing."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from backbone.api.models import AuditEntry, utcnow
from backbone.api.store.base import Database, Principal, safe_text


def record_audit(s: Session, who: Principal, action: str, target_type: str, target_id: str,
                 detail: dict[str, Any] | None = None) -> None:
    """Add the audit entry of one mutation to session ``s`` (so it commits, or rolls back, with it).

    Every text field (the actor's name, the target, each string in ``detail``) goes through
    :func:`~backbone.api.store.base.safe_text`, so no entry holds control or bidi-format characters.
    """
    s.add(AuditEntry(at=utcnow(), token_id=safe_text(who.token_id, 36), token_name=safe_text(who.name),
                     action=action, target_type=target_type, target_id=safe_text(target_id, 64),
                     detail=None if detail is None else safe_detail(detail)))


def safe_detail(value: Any) -> Any:
    """``value`` (an audit detail: JSON-like) with every string key and value passed through
    :func:`~backbone.api.store.base.safe_text` (long strings keep up to 4096 characters)."""
    if isinstance(value, str):
        return safe_text(value, AUDIT_TEXT_CHARS)
    if isinstance(value, dict):
        return {safe_text(str(k), AUDIT_TEXT_CHARS): safe_detail(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_detail(v) for v in value]
    return value


AUDIT_TEXT_CHARS = 4096
"""Most characters of one string in an audit entry's detail."""


class AuditRepository:
    """The audit log: failed authentications and the listing; mutations add theirs via :func:`record_audit`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def audit_auth_failure(self, address: str, path: str, failures: int, now_limited: bool) -> None:
        """Audit a failed authentication (``auth.failed``; ``auth.rate_limited`` when the address just
        reached its limit). Only the client address and path are recorded, never the token tried."""
        anonymous = Principal("", "anonymous", "viewer")
        with self.db.session() as s:
            record_audit(s, anonymous, "auth.rate_limited" if now_limited else "auth.failed", "client",
                         address, {"path": safe_text(path, 200), "failures_last_minute": failures})

    def list_audit(self, limit: int = 100, offset: int = 0, action: str | None = None) -> list[AuditEntry]:
        """Audit entries, newest first."""
        with self.db.session() as s:
            q = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit).offset(offset)
            if action:
                q = q.where(AuditEntry.action == action)
            return list(s.scalars(q))

