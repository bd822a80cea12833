"""``GET /v1/auth/config``: how to sign in (no auth), ``GET /v1/whoami``: who the bearer token is (its role and
team), ``GET /v1/usage``: what its team used against its quotas, and ``GET /v1/basemap``: the land polygons a
client draws under a scenario (the shipped Natural Earth 1:110m countries, public domain)."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, Response

from backbone.api.auth import StoreDep, Viewer
from backbone.api.job_limits import server_quotas
from backbone.api.oidc import OidcUnavailableError
from backbone.api.oidc_login import OidcLogin
from backbone.api.schemas import (
    AuthConfigPublic,
    OidcClientPublic,
    ProblemDetails,
    QuotaSourcesPublic,
    TeamUsagePublic,
    WhoAmI,
)
from backbone.api.store import GoneError

router = APIRouter(prefix="/v1", tags=["identity"])


@router.get("/auth/config", response_model=AuthConfigPublic,
            summary="How to sign in: API tokens, and single sign-on when the server is configured for it (no auth)")
def get_auth_config(request: Request, response: Response) -> AuthConfigPublic:
    """Whether the server offers single sign-on (OIDC Authorization Code with PKCE, for a public client) and, if
    so, the issuer, client id, authorization and token endpoints, scopes and which token to send to this API. It
    carries nothing secret and names no server path. Configured by ``BACKBONE_OIDC_CLIENT_ID`` and the issuer's
    endpoints (its discovery document, fetched and cached, or ``BACKBONE_OIDC_AUTHORIZATION_ENDPOINT`` and
    ``BACKBONE_OIDC_TOKEN_ENDPOINT``)."""
    response.headers["Cache-Control"] = "no-cache"
    login: OidcLogin = request.app.state.oidc_login
    s = login.settings
    if not login.enabled(s):
        return AuthConfigPublic()
    try:
        endpoints = login.endpoints()
    except OidcUnavailableError as exc:
        return AuthConfigPublic(oidc_problem=str(exc))
    return AuthConfigPublic(oidc=OidcClientPublic(
        issuer=s.oidc_issuer, client_id=s.oidc_client_id, authorization_endpoint=endpoints.authorization_endpoint,
        token_endpoint=endpoints.token_endpoint, scopes=s.oidc_scopes.split(), token_use=s.oidc_token_use))


@router.get("/whoami", response_model=WhoAmI, summary="Who the bearer token is: its role and team")
async def get_whoami(store: StoreDep, who: Viewer) -> WhoAmI:
    """The caller's token id and name, role (scope) and team, and what that role allows."""
    team_name: str | None = None
    if who.team_id is not None:
        try:
            team_name = (await run_in_threadpool(store.get_team, who.team_id)).name
        except GoneError:  # a JWT may name a team the server does not know (yet)
            team_name = None
    return WhoAmI(token_id=who.token_id, name=who.name, scope=who.scope,  # type: ignore[arg-type]
                  team_id=who.team_id, team_name=team_name, can_write=who.allows("planner"),
                  can_admin=who.allows("admin"))


@router.get("/usage", response_model=TeamUsagePublic, responses={403: {"model": ProblemDetails},
                                                                    404: {"model": ProblemDetails, "description": "No such team"}},
            summary="What a team used against its quotas: CPU seconds in the window and stored result bytes")
async def get_usage(request: Request, store: StoreDep, who: Viewer,
                    team: str | None = Query(None, description="Another team's id (admins only); default: the "
                                                               "caller's team.")) -> TeamUsagePublic:
    """The caller's team's CPU seconds in the quota window and its stored result bytes, beside the quotas that
    hold for it: the team's own (set by an admin) where set, else the server's; ``quota_sources`` says which."""
    settings = request.app.state.settings
    team_id = who.team_id
    if team is not None and team != who.team_id:
        if not who.is_admin:
            raise HTTPException(403, "only an admin may read another team's usage")
        team_id = (await run_in_threadpool(store.get_team, team)).id
    effective = await run_in_threadpool(store.effective_quotas, team_id, server_quotas(settings))
    quotas = effective.quotas
    used = await run_in_threadpool(store.team_usage, team_id, quotas.window_s)
    return TeamUsagePublic(team_id=team_id, cpu_s=round(used.cpu_s, 3), cpu_window_h=quotas.window_s / 3600.0,
                           max_cpu_s=quotas.cpu_s or None, stored_bytes=used.stored_bytes,
                           stored_results=used.stored_results, max_stored_bytes=quotas.stored_bytes or None,
                           quota_sources=QuotaSourcesPublic(**asdict(effective.sources)))


@router.get("/basemap", tags=["maps"], summary="Land polygons to draw under a scenario (GeoJSON)",
            response_class=FileResponse,
            responses={200: {"content": {"application/geo+json": {}}}, 404: {"model": ProblemDetails}})
def get_basemap(_who: Viewer) -> FileResponse:
    """The shipped Natural Earth 1:110m admin-0 countries (public domain) as one GeoJSON FeatureCollection in
    EPSG:4326, the same land the server's static maps draw. It never changes while the server runs, so clients
    may cache it."""
    from backbone.errors import NotFoundError
    from backbone.paths import basemap_path

    path = basemap_path()
    if not path.is_file():
        raise NotFoundError(f"basemap not found at {path.name} (the package data is incomplete)")
    return FileResponse(path, media_type="application/geo+json", headers={"Cache-Control": "private, max-age=3600"})
