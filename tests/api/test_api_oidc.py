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
