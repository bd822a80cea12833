"""Single sign-on in the workspace, the server's side: ``GET v1/auth/config`` (off by default; on with the
settings, from explicit endpoints or the issuer's discovery document, cached), the page's policy naming the token
endpoint, the settings refused with their variables' names, and the 401 of an expired JWT."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from apitest_helpers import auth
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from pydantic import ValidationError

from backbone.api.app import create_app
from backbone.api.oidc import JWT_EXPIRED
from backbone.api.settings import Settings
from backbone.api.web import WORKSPACE_CSP, workspace_csp

ISSUER, AUDIENCE, CLIENT = "https://sso.example.com/realms/backbone", "backbone-api", "backbone-workspace"
AUTHORIZE = "https://sso.example.com/realms/backbone/protocol/openid-connect/auth"
TOKEN = "https://sso.example.com/realms/backbone/protocol/openid-connect/token"


def _policy(header: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


@pytest.fixture(scope="module")
def jwks_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[KeySet, Path]:
    """The issuer's key (made once: a 2048-bit RSA key takes a while) and its public JWKS file."""
    keys = KeySet([RSAKey.generate_key(2048, parameters={"kid": "idp-1"}, private=True)])
    path = tmp_path_factory.mktemp("issuer") / "jwks.json"
    path.write_text(json.dumps(keys.as_dict(private=False)))
    return keys, path


def _configured(settings: Settings, jwks: Path, **extra: Any) -> Settings:
    """The test settings with single sign-on, built through validation (as the environment would be read)."""
    values = {**settings.model_dump(), "oidc_issuer": ISSUER, "oidc_audience": AUDIENCE, "oidc_jwks_file": str(jwks),
              "oidc_client_id": CLIENT, **extra}
    return Settings(**values)


def _client(settings: Settings, request: pytest.FixtureRequest) -> TestClient:
    url = settings.resolved_database_url()
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), url.removeprefix("sqlite:///"))
    return TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False)


def test_off_by_default(client: TestClient) -> None:
    """No client id: the page offers API tokens only, and its policy connects to this origin only."""
    r = client.get("/v1/auth/config")  # no token: the sign-in page asks before anyone is signed in
    assert r.status_code == 200 and r.json() == {"oidc": None, "oidc_problem": None}
    page = client.get("/")
    assert page.headers["content-security-policy"] == WORKSPACE_CSP == workspace_csp(None)
    assert _policy(WORKSPACE_CSP)["connect-src"] == ["'self'"]
    spec = client.get("/openapi.json").json()["paths"]["/v1/auth/config"]["get"]
    assert not spec.get("security") and "AuthConfigPublic" in json.dumps(spec)


def test_on_with_explicit_endpoints(settings: Settings, jwks_file: tuple[KeySet, Path],
                                    request: pytest.FixtureRequest) -> None:
    """Configured for offline use: the config names issuer, client, both endpoints, scopes and the token to send,
    nothing secret and no server path; the page may post to the token endpoint, and to nothing else."""
    _keys, jwks = jwks_file
    configured = _configured(settings, jwks, oidc_authorization_endpoint=AUTHORIZE, oidc_token_endpoint=TOKEN)
    with _client(configured, request) as c:
        r = c.get("/v1/auth/config")
        assert r.status_code == 200 and r.headers["cache-control"] == "no-cache"
        assert r.json() == {"oidc": {"issuer": ISSUER, "client_id": CLIENT, "authorization_endpoint": AUTHORIZE,
                                     "token_endpoint": TOKEN, "scopes": ["openid", "profile", "email"],
                                     "token_use": "access_token"}, "oidc_problem": None}
        assert str(jwks) not in r.text and "jwks" not in r.text and str(configured.data_dir) not in r.text
        policy = _policy(c.get("/").headers["content-security-policy"])
        assert policy["connect-src"] == ["'self'", TOKEN]
        assert policy["form-action"] == ["'none'"] and policy["script-src"] == ["'self'"]
        assert policy["default-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]


class _Discovery(BaseHTTPRequestHandler):
    """An issuer's discovery document on loopback; counts the fetches."""

    doc: ClassVar[dict[str, Any]] = {}
    fetches: ClassVar[int] = 0

    def do_GET(self) -> None:
        type(self).fetches += 1
        body = json.dumps(self.doc).encode() if self.path == "/.well-known/openid-configuration" else b"{}"
        self.send_response(200 if self.path == "/.well-known/openid-configuration" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def discovery() -> Iterator[tuple[str, type[_Discovery]]]:
    handler = type("Handler", (_Discovery,), {"doc": {}, "fetches": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_endpoints_from_the_discovery_document(settings: Settings, jwks_file: tuple[KeySet, Path],
                                              discovery: tuple[str, type[_Discovery]],
                                              request: pytest.FixtureRequest) -> None:
    """The server reads the issuer's discovery document once and reuses it; a document naming another issuer
    is refused (single sign-on unavailable, named in the config; the page keeps its same-origin policy)."""
    issuer, handler = discovery
    handler.doc = {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize",
                   "token_endpoint": f"{issuer}/token", "jwks_uri": f"{issuer}/jwks"}
    with _client(_configured(settings, jwks_file[1], oidc_issuer=issuer, oidc_scopes="openid backbone"),
                 request) as c:
        for _ in range(3):
            oidc = c.get("/v1/auth/config").json()["oidc"]
            assert oidc["authorization_endpoint"] == f"{issuer}/authorize" and oidc["scopes"] == ["openid", "backbone"]
        assert _policy(c.get("/").headers["content-security-policy"])["connect-src"] == ["'self'", f"{issuer}/token"]
        assert handler.fetches == 1
    handler.doc = {**handler.doc, "issuer": "https://evil.example.com"}
    with _client(_configured(settings, jwks_file[1], oidc_issuer=issuer), request) as c:
        r = c.get("/v1/auth/config").json()
        assert r["oidc"] is None and "another issuer" in r["oidc_problem"]
        assert c.get("/").headers["content-security-policy"] == WORKSPACE_CSP


@pytest.mark.parametrize(("extra", "named"), [
    ({"oidc_issuer": ""}, "BACKBONE_OIDC_ISSUER"),
    ({"oidc_authorization_endpoint": AUTHORIZE}, "BACKBONE_OIDC_TOKEN_ENDPOINT"),
    ({"oidc_authorization_endpoint": AUTHORIZE, "oidc_token_endpoint": "http://sso.example.com/token"}, "https"),
    ({"oidc_authorization_endpoint": AUTHORIZE, "oidc_token_endpoint": f"{TOKEN} https://evil.example.com"}, "spaces"),
    ({"oidc_authorization_endpoint": AUTHORIZE, "oidc_token_endpoint": f"{TOKEN};script-src *"}, "';'"),
    ({"oidc_scopes": "profile email"}, "openid"),
    ({"oidc_token_use": "id_token"}, "BACKBONE_OIDC_AUDIENCE equal to BACKBONE_OIDC_CLIENT_ID"),
])
def test_settings_that_cannot_work_are_refused(settings: Settings, jwks_file: tuple[KeySet, Path],
                                               extra: dict[str, str], named: str) -> None:
    with pytest.raises(ValidationError, match=named):
        _configured(settings, jwks_file[1], **extra)


def test_an_id_token_for_the_client_is_accepted(settings: Settings, jwks_file: tuple[KeySet, Path]) -> None:
    configured = _configured(settings, jwks_file[1], oidc_audience=CLIENT, oidc_token_use="id_token")
    assert configured.oidc_token_use == "id_token"


def test_an_expired_jwt_is_named_expired(settings: Settings, jwks_file: tuple[KeySet, Path],
                                         request: pytest.FixtureRequest) -> None:
    """The workspace tells an expired sign-in from a refused one by the 401's detail."""
    keys, jwks = jwks_file
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "backbone_scope": "viewer"}
    with _client(_configured(settings, jwks), request) as c:
        fresh = jwt.encode({"alg": "RS256", "kid": "idp-1"}, {**claims, "exp": int(time.time()) + 60}, keys)
        assert c.get("/v1/whoami", headers=auth(fresh)).json()["scope"] == "viewer"
        old = jwt.encode({"alg": "RS256", "kid": "idp-1"}, {**claims, "exp": int(time.time()) - 5}, keys)
        r = c.get("/v1/whoami", headers=auth(old))
        assert r.status_code == 401 and r.json()["detail"] == JWT_EXPIRED and old not in r.text
