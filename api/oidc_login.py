"""Single sign-on in the workspace: what a browser needs for the OIDC Authorization Code flow with PKCE.

The server is configured (never a request): ``BACKBONE_OIDC_CLIENT_ID`` names the workspace's public client at
the issuer (no secret: a single-page app cannot keep one; PKCE binds the code to the page that asked for it), and
the issuer's authorization and token endpoints come from its discovery document
(``<BACKBONE_OIDC_ISSUER>/.well-known/openid-configuration``, fetched by the server and cached for
:data:`DISCOVERY_CACHE_S`) or, for a server that cannot reach the issuer, from ``BACKBONE_OIDC_AUTHORIZATION_ENDPOINT``
and ``BACKBONE_OIDC_TOKEN_ENDPOINT``. ``GET /v1/auth/config`` hands them to the page (:class:`OidcLogin`); the page's
content security policy lets it post to the token endpoint (:func:`backbone.api.web.pages.workspace_csp`).

The browser sends the API the token named by ``BACKBONE_OIDC_TOKEN_USE``: by default the access token, the token an
issuer makes for calling an API (its ``aud`` is the API, ``BACKBONE_OIDC_AUDIENCE``, when the issuer is set up so);
or the ID token, whose ``aud`` is the client id, so the API's audience must then be the client id. The API checks
either the same way (:mod:`backbone.api.oidc`).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from backbone.api.oidc import OidcUnavailableError, OidcVerifier

if TYPE_CHECKING:
    from backbone.api.settings import Settings

logger = logging.getLogger(__name__)

DISCOVERY_CACHE_S = 600.0
"""Seconds a fetched discovery document is reused."""
DISCOVERY_RETRY_S = 30.0
"""Seconds after a failed discovery fetch before the server tries again (page loads do not wait on a dead
issuer each time)."""
DISCOVERY_TIMEOUT_S = 10.0
"""Seconds one discovery fetch may take."""

_FORBIDDEN_IN_URL = frozenset(" \t\r\n;,'\"\\")


def endpoint_url(url: str) -> str:
    """``url`` when it may be an issuer endpoint the page is sent to and its policy names.

    An absolute ``https`` URL, or ``http`` on a loopback host only (a provider on the same machine, as in tests);
    no user info, no fragment, and none of the characters that would end a content security policy source
    (spaces, ``;``, ``,``, quotes, backslashes).

    Raises
    ------
    ValueError
        One sentence naming what is wrong (the settings report it with the variable's name).
    """
    if any(ch in _FORBIDDEN_IN_URL for ch in url):
        raise ValueError("an OIDC endpoint URL may not hold spaces, ';', ',', quotes or backslashes")
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"an OIDC endpoint must be an absolute https URL, not {url[:100]!r}")
    if parts.username is not None or parts.password is not None or parts.fragment:
        raise ValueError("an OIDC endpoint URL may carry neither user info nor a fragment")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise ValueError(f"an OIDC endpoint must use https (plain http only on a loopback host): {url[:100]!r}")
    return url


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_client_settings(settings: Settings) -> None:
    """Refuse a single sign-on set-up the API could not honour.

    Raises
    ------
    ValueError
        A client id without the issuer, audience and keys the API checks tokens with; only one of the two
        explicit endpoints; scopes without ``openid``; an ID token sent to an API whose audience is not the client.
    """
    s = settings
    if not s.oidc_client_id:
        return
    if not OidcVerifier.configured(s):
        raise ValueError("BACKBONE_OIDC_CLIENT_ID needs BACKBONE_OIDC_ISSUER, BACKBONE_OIDC_AUDIENCE and "
                         "BACKBONE_OIDC_JWKS_URL or BACKBONE_OIDC_JWKS_FILE (the API must accept the tokens)")
    if bool(s.oidc_authorization_endpoint) != bool(s.oidc_token_endpoint):
        raise ValueError("give both BACKBONE_OIDC_AUTHORIZATION_ENDPOINT and BACKBONE_OIDC_TOKEN_ENDPOINT, or "
                         "neither (then both come from the issuer's discovery document)")
    if "openid" not in s.oidc_scopes.split():
        raise ValueError(f"BACKBONE_OIDC_SCOPES must include 'openid' (got {s.oidc_scopes!r})")
    if s.oidc_token_use == "id_token" and s.oidc_audience != s.oidc_client_id:
        raise ValueError("BACKBONE_OIDC_TOKEN_USE=id_token needs BACKBONE_OIDC_AUDIENCE equal to "
                         "BACKBONE_OIDC_CLIENT_ID: an ID token's audience is the client")


@dataclass(frozen=True)
class OidcEndpoints:
    """Where the browser signs in (``authorization_endpoint``) and trades the code for tokens
    (``token_endpoint``)."""

    authorization_endpoint: str
    token_endpoint: str


class OidcLogin:
    """The issuer's endpoints for the workspace's sign-in, from the settings or the discovery document."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._endpoints: OidcEndpoints | None = None
        self._fetched = 0.0
        self._failed = -DISCOVERY_RETRY_S
        self._problem = ""
        self._lock = threading.Lock()

    @staticmethod
    def enabled(settings: Settings) -> bool:
        """Whether the workspace offers single sign-on (a client id, and the API accepts the issuer's JWTs)."""
        return bool(settings.oidc_client_id) and OidcVerifier.configured(settings)

    def discovery_url(self) -> str:
        """The issuer's discovery document (OpenID Connect Discovery 1.0, section 4)."""
        return self.settings.oidc_issuer.rstrip("/") + "/.well-known/openid-configuration"

    def endpoints(self) -> OidcEndpoints:
        """The authorization and token endpoints (blocking: call from a worker thread).

        Raises
        ------
        OidcUnavailableError
            The discovery document cannot be fetched, is not JSON, names another issuer or lacks an endpoint.
        """
        s = self.settings
        if s.oidc_authorization_endpoint and s.oidc_token_endpoint:
            return OidcEndpoints(s.oidc_authorization_endpoint, s.oidc_token_endpoint)
        with self._lock:
            now = time.monotonic()
            if self._endpoints is not None and now - self._fetched < DISCOVERY_CACHE_S:
                return self._endpoints
            if now - self._failed < DISCOVERY_RETRY_S:
                raise OidcUnavailableError(self._problem)
            try:
                self._endpoints = self._discover()
            except OidcUnavailableError as exc:
                self._failed, self._problem = now, str(exc)
                raise
            self._fetched = now
            return self._endpoints

    def _discover(self) -> OidcEndpoints:
        import httpx

        try:
            resp = httpx.get(self.discovery_url(), timeout=DISCOVERY_TIMEOUT_S, follow_redirects=False)
            resp.raise_for_status()
            doc = json.loads(resp.text)
        except (httpx.HTTPError, ValueError) as exc:
            logger.error("OIDC discovery document unavailable: %s", exc)
            raise OidcUnavailableError("the identity provider's discovery document cannot be fetched") from None
        if not isinstance(doc, dict) or doc.get("issuer") != self.settings.oidc_issuer:
            logger.error("OIDC discovery document names issuer %r, not %r",
                         doc.get("issuer") if isinstance(doc, dict) else None, self.settings.oidc_issuer)
            raise OidcUnavailableError("the identity provider's discovery document names another issuer")
        try:
            return OidcEndpoints(endpoint_url(str(doc.get("authorization_endpoint") or "")),
                                 endpoint_url(str(doc.get("token_endpoint") or "")))
        except ValueError as exc:
            logger.error("OIDC discovery document refused: %s", exc)
            raise OidcUnavailableError("the identity provider's discovery document has no usable authorization "
                                       "and token endpoints") from None

    def token_endpoint_or_none(self) -> str | None:
        """The token endpoint when single sign-on is on and the endpoints can be had, else None (blocking)."""
        if not self.enabled(self.settings):
            return None
        try:
            return self.endpoints().token_endpoint
        except OidcUnavailableError:
            return None
