"""Bearer-token authentication and scopes.

Tokens are random (``bbk_`` + 43 url-safe characters, 256 bits); the store keeps only their
sha256. Scopes nest: ``viewer`` reads, ``planner`` also creates/changes scenarios and runs jobs,
``admin`` also manages tokens and reads the audit log.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from backbone.api.limits import FailedAuthLimiter
from backbone.api.oidc import OidcError, OidcUnavailableError, looks_like_jwt
from backbone.api.store import Principal, Store, hash_token

OIDC_RETRY_AFTER_S = 30
"""``Retry-After`` of the 503 answered while the identity provider's keys are unavailable."""

bearer = HTTPBearer(auto_error=False, description="An API token: `backbone token create --scope planner`.")


async def get_store(request: Request) -> Store:
    """The app's store (one per app)."""
    return request.app.state.store  # type: ignore[no-any-return]


StoreDep = Annotated[Store, Depends(get_store)]


async def current_principal(request: Request, store: StoreDep,
                            credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> Principal:
    """The caller, from the ``Authorization: Bearer <token>`` header (401 when missing or invalid).

    A token seen valid moments ago is answered from memory; otherwise the store is asked in a
    worker thread (the database call must not block the event loop). When the server accepts OIDC
    (:mod:`backbone.api.oidc`), a JWT is verified against the issuer's keys instead.
    Every invalid credential (an unknown, revoked or expired API token; a malformed, badly signed,
    expired or otherwise refused JWT) is audited and counted per client address; past the limit the
    address gets 429 (see :mod:`backbone.api.limits`). When the issuer's keys cannot be had, the
    answer is 503 and nothing is counted against the client.
    """
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise HTTPException(401, "missing bearer token", headers={"WWW-Authenticate": "Bearer"})
    token = credentials.credentials
    oidc = getattr(request.app.state, "oidc", None)
    is_jwt = oidc is not None and looks_like_jwt(token)
    if not is_jwt:
        principal = store.cached_principal(token)
        if principal is not None:
            return principal
    limiter: FailedAuthLimiter = request.app.state.auth_limiter
    address = request.client.host if request.client else "unknown"
    digest = hash_token(token)
    retry_after = limiter.retry_after_s(address)
    if retry_after and not limiter.known(digest):
        raise HTTPException(429, f"too many failed authentications from {address}; retry in {retry_after} s",
                            headers={"Retry-After": str(retry_after)})
    reason = "invalid, expired or revoked token"
    try:
        if oidc is not None and is_jwt:
            principal = await run_in_threadpool(oidc.principal, token, store)
        else:
            principal = await run_in_threadpool(store.authenticate, token)
    except OidcUnavailableError as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": str(OIDC_RETRY_AFTER_S)}) from None
    except OidcError as exc:
        principal, reason = None, str(exc)
    if principal is None:
        failures = limiter.record_failure(address)
        await run_in_threadpool(store.audit_auth_failure, address, request.url.path, failures,
                                failures >= limiter.per_minute)
        raise HTTPException(401, reason, headers={"WWW-Authenticate": "Bearer"})
    limiter.remember(digest)
    return principal


def require(scope: str) -> object:
    """A dependency that admits callers whose scope includes ``scope`` (403 otherwise)."""

    async def check(principal: Annotated[Principal, Depends(current_principal)]) -> Principal:
        if not principal.allows(scope):
            raise HTTPException(403, f"this needs the {scope!r} scope; the token has {principal.scope!r}")
        return principal

    return Depends(check)


Viewer = Annotated[Principal, require("viewer")]
Planner = Annotated[Principal, require("planner")]
Admin = Annotated[Principal, require("admin")]
