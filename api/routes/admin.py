"""Admin endpoints: tokens and the audit log (admin scope)."""

from __future__ import annotations

import uuid
from typing import Annotated

from backbone.api.auth import Admin, StoreDep
from backbone.api.contract import require_json_body
from backbone.api.schemas import AuditPublic, TokenCreate, TokenCreated, TokenPublic
from fastapi import APIRouter, Depends, Query

router = APIRouter(prefix="/v1", tags=["admin"])


@router.post("/tokens", status_code=201, response_model=TokenCreated, dependencies=[Depends(require_json_body)],
             summary="Create a token")
def create_token(body: TokenCreate, store: StoreDep, who: Admin) -> TokenCreated:
    """Create a token; the response is the only time the token itself is shown."""
    tok, plain = store.create_token(body.scope, body.name or f"{body.scope}-token", who)
    return TokenCreated(**TokenPublic.model_validate(tok, from_attributes=True).model_dump(), token=plain)


@router.get("/tokens", response_model=list[TokenPublic], summary="List tokens (never their values)")
def list_tokens(store: StoreDep, _who: Admin) -> list[TokenPublic]:
    return [TokenPublic.model_validate(t, from_attributes=True) for t in store.list_tokens()]


@router.delete("/tokens/{token_id}", response_model=TokenPublic, summary="Revoke a token")
def revoke_token(token_id: uuid.UUID, store: StoreDep, who: Admin) -> TokenPublic:
    return TokenPublic.model_validate(store.revoke_token(str(token_id), who), from_attributes=True)


@router.get("/audit", response_model=list[AuditPublic], summary="The audit log, newest first")
def list_audit(store: StoreDep, _who: Admin, limit: Annotated[int, Query(ge=1, le=1000)] = 100,
               offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
               action: Annotated[str | None, Query(max_length=64)] = None) -> list[AuditPublic]:
    """Who changed what and when: every scenario change, every job, every token change."""
    return [AuditPublic.model_validate(a, from_attributes=True) for a in store.list_audit(limit, offset, action)]
