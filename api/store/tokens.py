"""The token and team repositories: API tokens (only their sha256 stored), authentication with a short
in-process cache, rotation and revocation; teams, the tenants tokens act for."""

from __future__ import annotations

import secrets
import time
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from backbone.api.models import Team, Token, utcnow
from backbone.api.store.audit import record_audit
from backbone.api.store.base import (
    DEFAULT_TOKEN_DAYS,
    DEFAULT_TOKEN_MAX_DAYS,
    SCOPES,
    SYSTEM,
    TOKEN_PREFIX,
    ConflictError,
    Database,
    GoneError,
    Principal,
    as_utc,
    hash_token,
    new_id,
    safe_text,
)


def team_id_of(s: Session, team: str) -> str:
    """The id of a team given by id or name. Raises GoneError."""
    row = s.get(Team, team) or s.scalars(select(Team).where(Team.name == team)).one_or_none()
    if row is None:
        raise GoneError(f"no team {team!r}")
    return row.id


class TokenRepository:
    """API tokens: creation, rotation, revocation and authentication."""

    AUTH_CACHE_S = 2.0
    """Seconds a successful token lookup is reused in this process (revocation through this store
    clears it at once; a revocation from another process takes effect within this time)."""

    def __init__(self, db: Database, max_lifetime_days: float = DEFAULT_TOKEN_MAX_DAYS) -> None:
        self.db = db
        self.max_lifetime = timedelta(days=float(max_lifetime_days))
        """No token lives past its family's first issue plus this (rotation included)."""
        self._auth_cache: dict[str, tuple[Principal, float]] = {}

    def create_token(self, scope: str, name: str, who: Principal = SYSTEM, team: str | None = None,
                     expires_in_days: float | None = DEFAULT_TOKEN_DAYS) -> tuple[Token, str]:
        """Create a token; returns the row and the plaintext token (shown once, never stored).

        ``team`` (id or name) is the team it acts for. It expires after ``expires_in_days``, or at the
        maximum lifetime (:attr:`max_lifetime`) when that comes first or ``expires_in_days`` is None.
        Raises GoneError for an unknown team.
        """
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}")
        plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
        name = safe_text(name)
        now = utcnow()
        life = None if expires_in_days is None else timedelta(days=float(expires_in_days))
        expires = self._expiry(now, now, life)
        with self.db.session() as s:
            team_id = team_id_of(s, team) if team else None
            tok = Token(id=new_id(), name=name, scope=scope, token_hash=hash_token(plain), created_at=now,
                        team_id=team_id, expires_at=expires, family_issued_at=now)
            s.add(tok)
            record_audit(s, who, "token.create", "token", tok.id,
                         {"scope": scope, "name": name, "team": team_id,
                          "expires_at": expires.isoformat() if expires else None})
        return tok, plain

    def _expiry(self, family_issued: datetime, now: datetime, life: timedelta | None) -> datetime:
        """``now + life``, but never past ``family_issued`` plus the maximum lifetime."""
        cap = family_issued + self.max_lifetime
        return cap if life is None else min(now + life, cap)

    def rotate_token(self, token_id: str, who: Principal = SYSTEM) -> tuple[Token, str]:
        """Replace a token by a new one (same name, scope, team and lifetime) and revoke it.

        The new token belongs to the old one's family: it keeps the family's first issue time
        (``family_issued_at``; rows without one count from their own ``created_at``) and expires at
        ``now + lifetime`` or at that issue time plus :attr:`max_lifetime`, whichever comes first, so
        rotation never extends a token past the maximum. A token from before expiry existed (no
        ``expires_at``) starts a family now, with the default lifetime.

        Raises GoneError when unknown; ConflictError when already revoked, or when its family has
        reached the maximum lifetime (an admin must create a new token).
        """
        with self.db.session() as s:
            old = s.get(Token, token_id)
            if old is None:
                raise GoneError(f"no token {token_id}")
            if old.revoked_at is not None:
                raise ConflictError(f"token {token_id} is revoked; create a new one")
            now = utcnow()
            if old.expires_at is None:  # made before expiry existed (revision 0001)
                issued, life = now, timedelta(days=DEFAULT_TOKEN_DAYS)
            else:
                issued = as_utc(old.family_issued_at or old.created_at)
                life = as_utc(old.expires_at) - as_utc(old.created_at)
            expires = self._expiry(issued, now, life)
            if expires <= now:
                raise ConflictError(f"token {token_id} was first issued on {issued:%Y-%m-%d} and has reached the "
                                    f"maximum lifetime of {self.max_lifetime.days} days (rotation included); "
                                    "an admin must create a new token")
            plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
            tok = Token(id=new_id(), name=old.name, scope=old.scope, token_hash=hash_token(plain), created_at=now,
                        team_id=old.team_id, expires_at=expires, rotated_from=old.id, family_issued_at=issued)
            old.revoked_at = now
            s.add(tok)
            self._auth_cache.clear()
            record_audit(s, who, "token.rotate", "token", old.id,
                         {"new_token": tok.id, "name": old.name, "expires_at": expires.isoformat(),
                          "family_issued_at": issued.isoformat()})
        return tok, plain


    def cached_principal(self, plain: str) -> Principal | None:
        """The principal of a token seen valid less than :attr:`AUTH_CACHE_S` ago (no database access)."""
        hit = self._auth_cache.get(hash_token(plain))
        return hit[0] if hit is not None and hit[1] > time.monotonic() else None

    def token_expires_at(self, token_id: str) -> datetime | None:
        """When a token expires (None: never). Raises GoneError."""
        with self.db.session() as s:
            tok = s.get(Token, token_id)
            if tok is None:
                raise GoneError(f"no token {token_id}")
            return None if tok.expires_at is None else as_utc(tok.expires_at)

    def authenticate(self, plain: str) -> Principal | None:
        """The principal of a valid, unrevoked token, else None."""
        cached = self.cached_principal(plain)
        if cached is not None:
            return cached
        digest = hash_token(plain)
        with self.db.session() as s:
            tok = s.scalars(select(Token).where(Token.token_hash == digest)).one_or_none()
            now = utcnow()
            if tok is None or tok.revoked_at is not None or (tok.expires_at is not None
                                                             and as_utc(tok.expires_at) <= now):
                return None
            last = tok.last_used_at
            if last is None or (now - as_utc(last)).total_seconds() > 60:
                tok.last_used_at = now
            principal = Principal(tok.id, tok.name, tok.scope, tok.team_id)
        if len(self._auth_cache) > 10_000:
            self._auth_cache.clear()
        self._auth_cache[digest] = (principal, time.monotonic() + self.AUTH_CACHE_S)
        return principal

    def list_tokens(self) -> list[Token]:
        """Every token (hashes included; the API never returns them)."""
        with self.db.session() as s:
            return list(s.scalars(select(Token).order_by(Token.created_at)))

    def revoke_token(self, token_id: str, who: Principal = SYSTEM) -> Token:
        """Revoke a token (idempotent). Raises GoneError when unknown."""
        with self.db.session() as s:
            tok = s.get(Token, token_id)
            if tok is None:
                raise GoneError(f"no token {token_id}")
            self._auth_cache.clear()
            if tok.revoked_at is None:
                tok.revoked_at = utcnow()
                record_audit(s, who, "token.revoke", "token", token_id, {"name": tok.name})
            return tok


class TeamRepository:
    """Teams: the tenants whose scenarios and jobs their tokens share."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create_team(self, name: str, who: Principal = SYSTEM) -> Team:
        """Create a team. Raises ConflictError when the name is taken."""
        name = safe_text(name.strip())
        with self.db.session() as s:
            if s.scalars(select(Team).where(Team.name == name)).one_or_none() is not None:
                raise ConflictError(f"team {name!r} exists")
            team = Team(id=new_id(), name=name, created_at=utcnow())
            s.add(team)
            record_audit(s, who, "team.create", "team", team.id, {"name": name})
        return team

    def list_teams(self) -> list[Team]:
        """Every team, by name."""
        with self.db.session() as s:
            return list(s.scalars(select(Team).order_by(Team.name)))

    def get_team(self, team: str) -> Team:
        """A team by id or name. Raises GoneError."""
        with self.db.session() as s:
            row = s.get(Team, team_id_of(s, team))
            assert row is not None
            return row

