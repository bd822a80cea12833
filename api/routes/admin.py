"""Admin endpoints: teams and their quotas, tokens and the audit log (admin scope; a token may rotate itself)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request

from backbone.api.auth import Admin, StoreDep, Viewer
from backbone.api.contract import require_json_body
from backbone.api.job_limits import server_quotas
from backbone.api.schemas import (
    AuditPublic,
    ProblemDetails,
    TeamCreate,
    TeamPublic,
    TeamQuotasPublic,
    TeamQuotasUpdate,
    TokenCreate,
    TokenCreated,
    TokenPublic,
)
from backbone.api.store import GoneError, TeamQuotaSettings
from backbone.errors import Problem, ValidationError

router = APIRouter(prefix="/v1", tags=["admin"])
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"model": ProblemDetails}}
QUOTA_ERRORS: dict[int | str, dict[str, Any]] = {404: {"model": ProblemDetails, "description": "No such team"},
                                                 422: {"model": ProblemDetails}}
TeamRef = Annotated[str, Path(min_length=1, max_length=200, description="The team's id or name.")]


@router.post("/tokens", status_code=201, response_model=TokenCreated, dependencies=[Depends(require_json_body)],
             summary="Create a token (for a team, with an expiry)")
def create_token(body: TokenCreate, store: StoreDep, who: Admin) -> TokenCreated:
    """Create a token; the response is the only time the token itself is shown."""
    try:
        tok, plain = store.create_token(body.scope, body.name or f"{body.scope}-token", who, team=body.team,
                                        expires_in_days=body.expires_in_days)
    except GoneError as exc:
        raise ValidationError(Problem(str(exc), table="token", field="team")) from None
    return TokenCreated(**TokenPublic.model_validate(tok, from_attributes=True).model_dump(), token=plain)


@router.get("/tokens", response_model=list[TokenPublic], summary="List tokens (never their values)")
def list_tokens(store: StoreDep, _who: Admin) -> list[TokenPublic]:
    return [TokenPublic.model_validate(t, from_attributes=True) for t in store.list_tokens()]


@router.delete("/tokens/{token_id}", response_model=TokenPublic, summary="Revoke a token")
def revoke_token(token_id: uuid.UUID, store: StoreDep, who: Admin) -> TokenPublic:
    return TokenPublic.model_validate(store.revoke_token(str(token_id), who), from_attributes=True)


@router.post("/tokens/{token_id}/rotate", status_code=201, response_model=TokenCreated, responses=CONFLICT,
             summary="Replace a token by a new one (same name, scope, team, lifetime) and revoke it")
def rotate_token(token_id: uuid.UUID, store: StoreDep, who: Viewer) -> TokenCreated:
    """Admins rotate any token; any token may rotate itself. The new token is shown once."""
    if not who.is_admin and who.token_id != str(token_id):
        raise HTTPException(403, "only an admin or the token itself may rotate it")
    tok, plain = store.rotate_token(str(token_id), who)
    return TokenCreated(**TokenPublic.model_validate(tok, from_attributes=True).model_dump(), token=plain)


@router.post("/teams", status_code=201, response_model=TeamPublic, dependencies=[Depends(require_json_body)],
             responses=CONFLICT,
             summary="Create a team")
def create_team(body: TeamCreate, store: StoreDep, who: Admin) -> TeamPublic:
    """Teams own scenarios and jobs; give a team tokens with ``POST /v1/tokens {"team": ...}``."""
    return TeamPublic.model_validate(store.create_team(body.name, who), from_attributes=True)


@router.get("/teams", response_model=list[TeamPublic], summary="List teams")
def list_teams(store: StoreDep, _who: Admin) -> list[TeamPublic]:
    return [TeamPublic.model_validate(t, from_attributes=True) for t in store.list_teams()]


@router.get("/teams/{team}/quotas", response_model=TeamQuotasPublic, responses=QUOTA_ERRORS,
            summary="A team's quotas: its own settings and what holds for it (the server's where unset)")
def get_team_quotas(team: TeamRef, request: Request, store: StoreDep, _who: Admin) -> TeamQuotasPublic:
    effective = store.team_quotas(team, server_quotas(request.app.state.settings))
    return TeamQuotasPublic.of(effective, store.get_team(str(effective.team_id)).name)


@router.put("/teams/{team}/quotas", response_model=TeamQuotasPublic, responses=QUOTA_ERRORS,
            dependencies=[Depends(require_json_body)],
            summary="Set a team's own quotas (CPU seconds in a window, stored result bytes); audited")
def set_team_quotas(team: TeamRef, body: TeamQuotasUpdate, request: Request, store: StoreDep,
                    who: Admin) -> TeamQuotasPublic:
    """The body replaces the team's settings: a field left out or null falls back to the server's setting
    (``BACKBONE_MAX_CPU_S_PER_TEAM``, ``BACKBONE_CPU_QUOTA_WINDOW_H``, ``BACKBONE_MAX_STORED_BYTES_PER_TEAM``);
    0 lifts that quota for this team. Submissions are checked against the new quotas at once, on every server."""
    effective = store.set_team_quotas(team, TeamQuotaSettings(**body.model_dump()),
                                      server_quotas(request.app.state.settings), who)
    return TeamQuotasPublic.of(effective, store.get_team(str(effective.team_id)).name)


@router.delete("/teams/{team}/quotas", response_model=TeamQuotasPublic, responses=QUOTA_ERRORS,
               summary="Clear a team's own quotas: the server's settings hold for it again; audited")
def clear_team_quotas(team: TeamRef, request: Request, store: StoreDep, who: Admin) -> TeamQuotasPublic:
    effective = store.clear_team_quotas(team, server_quotas(request.app.state.settings), who)
    return TeamQuotasPublic.of(effective, store.get_team(str(effective.team_id)).name)


@router.get("/audit", response_model=list[AuditPublic], summary="The audit log, newest first")
def list_audit(store: StoreDep, _who: Admin, limit: Annotated[int, Query(ge=1, le=1000)] = 100,
               offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
               action: Annotated[str | None, Query(max_length=64)] = None) -> list[AuditPublic]:
    """Who changed what and when: every scenario change, every job, every token and team change
    (``token_id`` is the acting token's unique id)."""
    return [AuditPublic.model_validate(a, from_attributes=True) for a in store.list_audit(limit, offset, action)]
