"""Optional OIDC/JWT bearer tokens from one configured issuer (a company's SSO), besides API tokens.

Configured by the server only (``BACKBONE_OIDC_ISSUER``, ``BACKBONE_OIDC_AUDIENCE`` and the issuer's
keys: ``BACKBONE_OIDC_JWKS_URL``, fetched and cached, or ``BACKBONE_OIDC_JWKS_FILE``). A JWT is accepted
when its signature verifies with a key of that set (RS256/ES256/EdDSA; never ``none`` or HMAC), ``iss``
and ``aud`` match, and ``exp`` lies ahead. The caller's role is the claim ``BACKBONE_OIDC_SCOPE_CLAIM``
(default ``backbone_scope``: viewer, planner or admin) and its team the claim
``BACKBONE_OIDC_TEAM_CLAIM`` (default ``backbone_team``: a team name; absent = no team). Its id in the
audit log is a UUID derived from ``iss`` and ``sub`` (the same person always has the same id).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from backbone.api.settings import Settings
from backbone.api.store import SCOPES, GoneError, Principal, Store, safe_text

logger = logging.getLogger(__name__)

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
"""Signature algorithms accepted (asymmetric only)."""
JWKS_CACHE_S = 600.0
"""Seconds a fetched key set is reused."""
JWT_EXPIRED = "JWT expired: sign in again"
"""The 401's detail for a JWT whose ``exp`` has passed (the workspace offers single sign-on again)."""


class OidcError(Exception):
    """The JWT is not acceptable (the API answers 401, naming the reason without echoing the token)."""


class OidcUnavailableError(OidcError):
    """The issuer's keys cannot be had, so no JWT can be checked (the API answers 503; the client is not
    blamed)."""


class OidcVerifier:
    """Verifies JWTs of the configured issuer and maps them to a :class:`Principal`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._keys: Any = None
        self._fetched = 0.0
        self._lock = threading.Lock()

    @staticmethod
    def configured(settings: Settings) -> bool:
        """Whether the server accepts OIDC tokens."""
        return bool(settings.oidc_issuer and settings.oidc_audience
                    and (settings.oidc_jwks_url or settings.oidc_jwks_file))

    def _key_set(self) -> Any:
        from joserfc.jwk import KeySet

        with self._lock:
            if self._keys is not None and time.monotonic() - self._fetched < JWKS_CACHE_S:
                return self._keys
            if self.settings.oidc_jwks_file:
                text = Path(self.settings.oidc_jwks_file).read_text(encoding="utf-8")
            else:
                import httpx

                resp = httpx.get(self.settings.oidc_jwks_url, timeout=10, follow_redirects=False)
                resp.raise_for_status()
                text = resp.text
            self._keys = KeySet.import_key_set(json.loads(text))
            self._fetched = time.monotonic()
            return self._keys

    def principal(self, token: str, store: Store) -> Principal:
        """The caller a JWT names.

        Raises
        ------
        OidcError
            Bad signature, wrong issuer or audience, expired, no ``sub``, an unknown role or team.
        OidcUnavailableError
            The issuer's key set cannot be read or fetched.
        """
        from joserfc import jwt
        from joserfc.errors import ExpiredTokenError, JoseError

        try:
            keys = self._key_set()
        except (OSError, ValueError, JoseError) as exc:
            logger.error("OIDC key set unavailable: %s", exc)
            raise OidcUnavailableError("the identity provider's keys are unavailable; try again later") from None
        s = self.settings
        try:
            decoded = jwt.decode(token, keys, algorithms=list(ALGORITHMS))
            jwt.JWTClaimsRegistry(iss={"essential": True, "value": s.oidc_issuer},
                                  aud={"essential": True, "value": s.oidc_audience},
                                  exp={"essential": True}, sub={"essential": True}).validate(decoded.claims)
        except ExpiredTokenError:
            raise OidcError(JWT_EXPIRED) from None
        except (JoseError, ValueError) as exc:
            raise OidcError(f"JWT rejected ({type(exc).__name__})") from None
        claims = decoded.claims
        scope = claims.get(s.oidc_scope_claim)
        if scope not in SCOPES:
            raise OidcError(f"JWT claim {s.oidc_scope_claim!r} must be one of {', '.join(SCOPES)}")
        team_id = None
        team = claims.get(s.oidc_team_claim)
        if team is not None:
            try:
                team_id = store.get_team(str(team)).id
            except GoneError:
                raise OidcError(f"JWT claim {s.oidc_team_claim!r} names no team of this server") from None
        ident = uuid.uuid5(uuid.NAMESPACE_URL, f"{claims['iss']}#{claims['sub']}")
        name = safe_text(str(claims.get("preferred_username") or claims.get("email") or claims["sub"]), 190)
        return Principal(str(ident), f"oidc:{name}", str(scope), team_id)


def looks_like_jwt(token: str) -> bool:
    """Three base64url parts separated by dots (API tokens start with ``bbk_``)."""
    return token.count(".") == 2 and not token.startswith("bbk_")
