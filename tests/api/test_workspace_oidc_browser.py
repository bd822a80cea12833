"""Single sign-on in the browser workspace (headless Chromium, as tests/api/test_workspace_browser.py), against a
tiny OpenID provider on loopback written here: its discovery document, an authorization endpoint that signs the
user in at once and sends the browser back with a code, and a token endpoint (CORS) that checks the PKCE verifier
against the challenge and answers an ID token and an RS256 access token signed by the key whose JWKS the server
reads from BACKBONE_OIDC_JWKS_FILE. Signed in by SSO, the page shows the team and role of the JWT's claims, keeps
no code or state in its URL and no token in any request URL; a viewer's JWT shows no edit controls; an expired
JWT says so and offers sign-in again; it works behind a path prefix; the issuer's refusal is shown; a forged return is refused. ``BACKBONE_SCREENSHOTS=1`` saves the sign-in
form with both options to docs/img/."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from apitest_helpers import LiveServer, auth
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from tests.api import test_workspace_browser as workspace

# the browser and the offline tab of the workspace's browser tests (a request off this machine is refused)
browser = workspace.browser
page = workspace.page
screenshot = workspace.screenshot

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]

AUDIENCE, CLIENT = "backbone-api", "backbone-workspace"


def _b64url_sha256(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


class Provider:
    """The identity provider's state: its key, who signs in next (their claims), the codes it issued and what
    it saw (authorization requests, token requests and whether each PKCE verifier matched its challenge)."""

    def __init__(self) -> None:
        self.keys = KeySet([RSAKey.generate_key(2048, parameters={"kid": "idp-1"}, private=True)])
        self.url = ""
        self.workspace_origin = ""
        self.claims: dict[str, Any] = {}
        self.lifetime_s = 300
        self.codes: dict[str, dict[str, Any]] = {}
        self.authorize_requests: list[dict[str, str]] = []
        self.token_requests: list[dict[str, Any]] = []
        self.issued: list[str] = []
        self.deny = False

    def sign_in_as(self, scope: str, name: str, lifetime_s: int = 300) -> None:
        self.claims = {"sub": f"{name}-id", "preferred_username": name, "backbone_scope": scope,
                       "backbone_team": "Network Planning"}
        self.lifetime_s = lifetime_s

    def jwt(self, claims: dict[str, Any]) -> str:
        return jwt.encode({"alg": "RS256", "kid": "idp-1"}, claims, self.keys)

    def tokens(self, grant: dict[str, Any]) -> dict[str, Any]:
        now = int(time.time())
        common = {"iss": self.url, "sub": grant["claims"]["sub"], "iat": now, "exp": now + grant["lifetime_s"]}
        access = self.jwt({**common, **grant["claims"], "aud": AUDIENCE})
        self.issued.append(access)
        return {"token_type": "Bearer", "expires_in": grant["lifetime_s"], "access_token": access,
                "id_token": self.jwt({**common, "aud": CLIENT, "nonce": grant["nonce"],
                                      "preferred_username": grant["claims"]["preferred_username"]})}


def _handler(provider: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)),
                                "Cache-Control": "no-store", **(headers or {})}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _cors(self) -> dict[str, str]:
            origin = self.headers.get("Origin", "")
            return {"Access-Control-Allow-Origin": origin} if origin == provider.workspace_origin else {}

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/.well-known/openid-configuration":
                self._send(200, {"issuer": provider.url, "authorization_endpoint": f"{provider.url}/authorize",
                                 "token_endpoint": f"{provider.url}/token", "jwks_uri": f"{provider.url}/jwks",
                                 "code_challenge_methods_supported": ["S256"]})
            elif parts.path == "/authorize":  # the user is signed in at once: back to the client with a code
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                provider.authorize_requests.append(query)
                if provider.deny:  # the user cancelled, or may not use this client (RFC 6749 section 4.1.2.1)
                    answer = {"error": "access_denied", "error_description": "not for you", "state": query["state"]}
                    self._send(302, None, {"Location": f"{query['redirect_uri']}?{urlencode(answer)}"})
                    return
                code = secrets.token_urlsafe(24)
                provider.codes[code] = {"challenge": query.get("code_challenge"), "nonce": query.get("nonce"),
                                        "redirect_uri": query.get("redirect_uri"), "client_id": query.get("client_id"),
                                        "claims": dict(provider.claims), "lifetime_s": provider.lifetime_s}
                back = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query.get('state', '')})}"
                self._send(302, None, {"Location": back})
            else:
                self._send(404, {"error": "not_found"})

        def do_OPTIONS(self) -> None:
            self._send(204, None, {**self._cors(), "Access-Control-Allow-Methods": "POST",
                                   "Access-Control-Allow-Headers": "Content-Type"})

        def do_POST(self) -> None:
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()}
            grant = provider.codes.pop(form.get("code", ""), None)  # a code is good once
            pkce_ok = grant is not None and _b64url_sha256(form.get("code_verifier", "")) == grant["challenge"]
            provider.token_requests.append({"form": form, "pkce_ok": pkce_ok, "origin": self.headers.get("Origin")})
            if (self.path != "/token" or grant is None or not pkce_ok or form.get("grant_type") != "authorization_code"
                    or form.get("client_id") != grant["client_id"] or form.get("redirect_uri") != grant["redirect_uri"]):
                self._send(400, {"error": "invalid_grant"}, self._cors())
                return
            self._send(200, provider.tokens(grant), self._cors())

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The provider on loopback, and a live server that accepts its JWTs and offers single sign-on (its endpoints
    from the provider's discovery document), with the team the JWTs name and one scenario of that team."""
    provider = Provider()
    idp = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    provider.url = f"http://127.0.0.1:{idp.server_address[1]}"
    threading.Thread(target=idp.serve_forever, daemon=True).start()
    tmp = tmp_path_factory.mktemp("workspace-sso")
    jwks = Path(tmp / "jwks.json")
    jwks.write_text(json.dumps(provider.keys.as_dict(private=False)))
    server = LiveServer(tmp / "live", f"sqlite:///{tmp / 'live.db'}", workers=1, extra_env={
        "BACKBONE_OIDC_ISSUER": provider.url, "BACKBONE_OIDC_AUDIENCE": AUDIENCE,
        "BACKBONE_OIDC_JWKS_FILE": str(jwks), "BACKBONE_OIDC_CLIENT_ID": CLIENT})
    (tmp / "live").mkdir(parents=True, exist_ok=True)
    for args in (("db", "upgrade"), ("team", "create", "Network Planning")):
        out = server.cli(*args)
        assert out.returncode == 0, out.stderr
    server.start()
    provider.workspace_origin = server.url
    try:
        planner = provider.jwt({"iss": provider.url, "aud": AUDIENCE, "sub": "setup", "exp": int(time.time()) + 300,
                                "backbone_scope": "planner", "backbone_team": "Network Planning"})
        r = httpx.post(f"{server.url}/v1/scenarios", json=workspace.three_site_doc("sso scenario"),
                       headers=auth(planner), timeout=60)
        assert r.status_code == 201, r.text
        yield {"server": server, "provider": provider, "scenario": r.json()["id"]}
    finally:
        server.stop()
        idp.shutdown()
        idp.server_close()


def _record_requests(page: Any) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    page.on("request", lambda r: seen.append({"url": r.url, "authorization": r.headers.get("authorization")}))
    return seen


def _sso_sign_in(page: Any, live: dict[str, Any], hash_: str = "") -> None:
    page.goto(f"{live['server'].url}/{hash_}")
    page.click("#sso-sign-in")
    page.wait_for_selector("#identity")


def test_sign_in_with_sso(page: Any, live: dict[str, Any]) -> None:
    server, provider, sid = live["server"], live["provider"], live["scenario"]
    requests = _record_requests(page)
    provider.sign_in_as("planner", "alice")
    page.goto(f"{server.url}/#/scenario/{sid}")  # a deep link: the view survives the trip to the issuer
    page.wait_for_selector("#sso-sign-in")
    assert page.locator("#token").count() == 1  # both options
    screenshot(page, "workspace-signin-sso.png")
    page.click("#sso-sign-in")
    page.wait_for_selector("#identity")
    identity = page.inner_text("#identity")
    assert "Network Planning" in identity and "planner" in identity.lower() and "oidc:alice" in identity
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
    assert page.url == f"{server.url}/#/scenario/{sid}"  # no code or state left in the URL
    assert page.evaluate("location.search") == "" and page.locator("#edit-mode").count() == 1
    # the issuer saw a PKCE challenge (S256), a state and a nonce, and the verifier matched the challenge
    ask = provider.authorize_requests[-1]
    assert ask["code_challenge_method"] == "S256" and len(ask["code_challenge"]) == 43
    assert ask["redirect_uri"] == f"{server.url}/" and ask["client_id"] == CLIENT and ask["response_type"] == "code"
    assert len(ask["state"]) >= 22 and len(ask["nonce"]) >= 22 and ask["state"] != ask["nonce"]
    assert "openid" in ask["scope"].split()
    assert provider.token_requests[-1]["pkce_ok"] and provider.token_requests[-1]["origin"] == server.url
    # the access token (audience: the API) is kept like an API token and sent only to the server, as a header
    token = provider.issued[-1]
    assert page.evaluate("sessionStorage.getItem('backbone.token')") == token
    assert page.evaluate("sessionStorage.getItem('backbone.token-kind')") == "sso"
    assert page.evaluate("sessionStorage.getItem('backbone.oidc.pending')") is None  # one use
    assert all(token not in r["url"] for r in requests), "a request URL carries the token"
    sent = [r for r in requests if r["authorization"]]
    assert sent and all(r["authorization"] == f"Bearer {token}" and r["url"].startswith(server.url) for r in sent)
    assert not any(r["authorization"] for r in requests if r["url"].startswith(provider.url))
    page.click("#sign-out")
    page.wait_for_selector("#sso-sign-in")
    assert page.evaluate("[sessionStorage.getItem('backbone.token'), sessionStorage.getItem('backbone.token-kind')]") \
        == [None, None]
    assert page.problems == []


def test_a_viewer_signed_in_by_sso_sees_no_edit_controls(page: Any, live: dict[str, Any]) -> None:
    live["provider"].sign_in_as("viewer", "bob")
    _sso_sign_in(page, live, f"#/scenario/{live['scenario']}")
    assert "viewer" in page.inner_text("#identity").lower() and "oidc:bob" in page.inner_text("#identity")
    page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
    page.wait_for_selector("#tab-run")
    for selector in ("#edit-mode", "#tab-changes", "#edit-panel", "input.cell-edit", "#edit-save", "#edit-fork"):
        assert page.locator(selector).count() == 0, selector
    assert page.problems == []


def test_an_expired_sso_token_says_so_and_offers_sign_in_again(page: Any, live: dict[str, Any]) -> None:
    provider, sid = live["provider"], live["scenario"]
    provider.sign_in_as("planner", "carol", lifetime_s=4)
    _sso_sign_in(page, live)
    page.wait_for_selector(f".scenario-link[data-id='{sid}']")
    expiry = json.loads(base64.urlsafe_b64decode(provider.issued[-1].split(".")[1] + "==="))["exp"]
    time.sleep(max(0.0, expiry + 1 - time.time()))
    page.click(f".scenario-link[data-id='{sid}']")  # the next API call is refused: the JWT has expired
    page.wait_for_selector("#signin-error:not([hidden])")
    assert "single sign-on has expired" in page.inner_text("#signin-error").lower()
    page.wait_for_selector("#sso-sign-in")
    assert page.evaluate("sessionStorage.getItem('backbone.token')") is None
    provider.sign_in_as("planner", "carol")
    page.click("#sso-sign-in")
    page.wait_for_selector("#identity")
    assert "oidc:carol" in page.inner_text("#identity")
    assert [p for p in page.problems if "401" not in p] == []  # the refused call's console line only


def test_sso_behind_a_path_prefix(page: Any, live: dict[str, Any]) -> None:
    """Behind a reverse proxy at /backbone/ the issuer sends the browser back to /backbone/ (the page's own URL),
    and the deep link's view is opened there."""
    provider, sid = live["provider"], live["scenario"]
    proxy = workspace.prefix_proxy(live["server"].url, "/backbone")
    origin = f"http://127.0.0.1:{proxy.server_address[1]}"
    provider.workspace_origin = origin  # the token endpoint answers the page's origin (CORS)
    try:
        provider.sign_in_as("planner", "dora")
        page.goto(f"{origin}/backbone/#/scenario/{sid}")
        page.click("#sso-sign-in")
        page.wait_for_selector("table.data[data-kind=links] tbody tr[data-id='nyc-bos']")
        assert provider.authorize_requests[-1]["redirect_uri"] == f"{origin}/backbone/"
        assert page.url == f"{origin}/backbone/#/scenario/{sid}" and "oidc:dora" in page.inner_text("#identity")
        assert page.problems == []
    finally:
        provider.workspace_origin = live["server"].url
        proxy.shutdown()
        proxy.server_close()


def test_a_refused_sign_in_shows_the_issuers_reason(page: Any, live: dict[str, Any]) -> None:
    provider = live["provider"]
    provider.deny = True
    try:
        page.goto(f"{live['server'].url}/")
        page.click("#sso-sign-in")
        page.wait_for_selector("#signin-error:not([hidden])")
        assert "access_denied: not for you" in page.inner_text("#signin-error")
        assert page.evaluate("location.search") == "" and page.locator("#sso-sign-in").count() == 1
        assert page.problems == []
    finally:
        provider.deny = False


def test_a_forged_return_is_refused(page: Any, live: dict[str, Any]) -> None:
    """A link carrying a code and a state this tab never made signs nobody in and calls no token endpoint."""
    server, provider = live["server"], live["provider"]
    before = len(provider.token_requests)
    page.goto(f"{server.url}/?code=stolen-code&state=forged#/")
    page.wait_for_selector("#signin-error:not([hidden])")
    assert "does not belong to a sign-in this tab started" in page.inner_text("#signin-error")
    assert page.evaluate("location.search") == "" and "stolen-code" not in page.url
    assert len(provider.token_requests) == before and page.evaluate("sessionStorage.getItem('backbone.token')") is None
    assert page.problems == []
