"""Optional OIDC/JWT bearer tokens from a configured issuer, tested offline with keys the test makes."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import auth
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from backbone.api.app import create_app
from backbone.api.settings import Settings
from backbone.io import network_to_dict
from backbone.model import Network

ISSUER, AUDIENCE = "https://sso.example.com/realms/backbone", "backbone-api"


@pytest.fixture
def keys() -> KeySet:
    return KeySet([RSAKey.generate_key(2048, parameters={"kid": "idp-1"}, private=True)])


@pytest.fixture
def oidc_client(settings: Settings, keys: KeySet, tmp_path: Path) -> Iterator[TestClient]:
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(keys.as_dict(private=False)))
    configured = settings.model_copy(update={"oidc_issuer": ISSUER, "oidc_audience": AUDIENCE,
                                             "oidc_jwks_file": str(jwks)})
    with TestClient(create_app(configured, task_registry=REGISTRY), raise_server_exceptions=False) as c:
        c.app.state.store.create_team("red")  # type: ignore[attr-defined]
        yield c


def _jwt(keys: Any, alg: str = "RS256", **claims: Any) -> str:
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice-123", "exp": int(time.time()) + 300,
            "preferred_username": "alice", "backbone_scope": "planner", "backbone_team": "red", **claims}
    return jwt.encode({"alg": alg, "kid": "idp-1"}, {k: v for k, v in body.items() if v is not None}, keys)


def test_sso_tokens_act_for_their_team(oidc_client: TestClient, keys: KeySet, triangle: Network) -> None:
    c = oidc_client
    token = _jwt(keys)
    r = c.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(token))
    assert r.status_code == 201, r.text
    ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{ISSUER}#alice-123"))
    red = c.app.state.store.get_team("red").id  # type: ignore[attr-defined]
    assert r.json()["team_id"] == red and r.json()["created_by_token"] == ident
    assert r.json()["created_by"] == "oidc:alice"
    viewer = _jwt(keys, backbone_scope="viewer", sub="bob")
    assert c.get(f"/v1/scenarios/{r.json()['id']}", headers=auth(viewer)).status_code == 200
    assert c.delete(f"/v1/scenarios/{r.json()['id']}", headers=auth(viewer)).status_code == 403
    other_team = _jwt(keys, backbone_team=None, sub="carol")
    assert c.get(f"/v1/scenarios/{r.json()['id']}", headers=auth(other_team)).status_code == 404


def test_bad_sso_tokens_are_refused(oidc_client: TestClient, keys: KeySet) -> None:
    c = oidc_client
    stranger = KeySet([RSAKey.generate_key(2048, parameters={"kid": "idp-1"}, private=True)])
    bad = {
        "expired": _jwt(keys, exp=int(time.time()) - 10),
        "issuer": _jwt(keys, iss="https://evil.example.com"),
        "audience": _jwt(keys, aud="someone-else"),
        "signature": _jwt(stranger),
        "no subject": _jwt(keys, sub=None),
        "role": _jwt(keys, backbone_scope="root"),
        "team": _jwt(keys, backbone_team="blue"),
        "hmac": jwt.encode({"alg": "HS256", "kid": "idp-1"}, {"iss": ISSUER, "aud": AUDIENCE, "sub": "x",
                                                               "exp": int(time.time()) + 60,
                                                               "backbone_scope": "admin"},
                           OctKey.import_key(json.dumps(keys.as_dict(private=False)).encode())),
        "garbage": "aaa.bbb.ccc",
    }
    for why, token in bad.items():
        r = c.get("/v1/scenarios", headers=auth(token))
        assert r.status_code == 401, (why, r.text)
        assert r.headers["content-type"].startswith("application/problem+json") and token not in r.text
    api_token = c.app.state.store.create_token("viewer", "classic")[1]  # type: ignore[attr-defined]
    assert c.get("/v1/scenarios", headers=auth(api_token)).status_code == 200  # API tokens still work


def test_failed_sso_tokens_are_rate_limited_and_audited(oidc_client: TestClient, keys: KeySet) -> None:
    """Issue #26 item 5: malformed, expired and badly signed JWTs count as failed authentications like bad API
    tokens: audited (``auth.failed``, then one ``auth.rate_limited``) and, past the limit, 429."""
    c = oidc_client
    limit = c.app.state.settings.auth_failures_per_minute  # type: ignore[attr-defined]
    admin = c.app.state.store.create_token("admin", "ops")[1]  # type: ignore[attr-defined]
    assert c.get("/v1/scenarios", headers=auth(admin)).status_code == 200
    stranger = KeySet([RSAKey.generate_key(2048, parameters={"kid": "idp-1"}, private=True)])
    bad = ["x.y.z", _jwt(keys, exp=int(time.time()) - 10), _jwt(stranger)]
    codes = [c.get("/v1/scenarios", headers=auth(bad[i % len(bad)])).status_code for i in range(limit + 10)]
    assert codes[:limit] == [401] * limit and set(codes[limit:]) == {429}, codes
    r = c.get("/v1/scenarios", headers=auth("x.y.z"))
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    assert r.headers["content-type"].startswith("application/problem+json")
    assert c.get("/v1/scenarios", headers=auth(admin)).status_code == 200  # a known token still works
    audit = c.get("/v1/audit", params={"limit": 1000}, headers=auth(admin)).json()
    failed = [a for a in audit if a["action"] == "auth.failed"]
    limited = [a for a in audit if a["action"] == "auth.rate_limited"]
    assert len(failed) == limit - 1 and len(limited) == 1, [a["action"] for a in audit]
    assert failed[0]["target_type"] == "client" and failed[0]["detail"]["path"] == "/v1/scenarios"
    assert all(t not in str(audit) for t in bad)  # the tokens tried are never stored


def test_unavailable_issuer_keys_are_a_503_not_a_client_failure(oidc_client: TestClient, keys: KeySet) -> None:
    c = oidc_client
    c.app.state.oidc.settings = c.app.state.oidc.settings.model_copy(  # type: ignore[attr-defined]
        update={"oidc_jwks_file": "/nonexistent/jwks.json"})
    limit = c.app.state.settings.auth_failures_per_minute  # type: ignore[attr-defined]
    for _ in range(limit + 2):
        r = c.get("/v1/scenarios", headers=auth(_jwt(keys)))
        assert r.status_code == 503 and int(r.headers["retry-after"]) > 0, r.text
    admin = c.app.state.store.create_token("admin", "ops")[1]  # type: ignore[attr-defined]
    audit = c.get("/v1/audit", params={"limit": 1000}, headers=auth(admin)).json()
    assert not [a for a in audit if a["action"].startswith("auth.")]


@pytest.mark.parametrize("username", ["mallory\u202egnp.exe", "eve\nadmin logged in", "bob\u2028\u200d\x1b[31m"])
def test_sso_user_names_are_cleaned(oidc_client: TestClient, keys: KeySet, triangle: Network, username: str) -> None:
    """Issue #26 item 8: a ``preferred_username`` with bidi overrides, newlines or escape sequences reaches
    neither the scenario's creator nor the audit log as-is (NFKC, then control/format characters escaped)."""
    c = oidc_client
    r = c.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(_jwt(keys, preferred_username=username)))
    assert r.status_code == 201, r.text
    created_by = r.json()["created_by"]
    admin = c.app.state.store.create_token("admin", "ops\u202e\n")[1]  # type: ignore[attr-defined]
    audit = c.get("/v1/audit", params={"limit": 1000}, headers=auth(admin)).json()
    names = [created_by] + [a["token_name"] for a in audit] + [str(a["detail"]) for a in audit]
    assert any(n.startswith("oidc:") for n in names) and any("ops" in n for n in names)
    import unicodedata

    for name in names:
        assert not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in name), repr(name)
    assert created_by == "oidc:" + username.replace("\u202e", "\\u202e").replace("\n", "\\u000a").replace(
        "\u2028", "\\u2028").replace("\u200d", "\\u200d").replace("\x1b", "\\u001b")
