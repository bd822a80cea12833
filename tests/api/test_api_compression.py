"""The API's JSON answers are gzip-compressed for clients that accept it (backbone.api.compression): the same JSON
after decoding, a weak ETag that still answers 304, ``Vary: Accept-Encoding``; never an event stream, a file
download or a range, a HEAD, a small body, or a token's value (BREACH)."""

from __future__ import annotations

import gzip
import json
from typing import Any

import httpx
import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.api.compression import JsonCompression, accepts_gzip
from backbone.api.settings import Settings
from backbone.io import network_to_dict
from backbone.model import Network

GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}
EVERY_SIZE = pytest.mark.parametrize("settings", [1], indirect=True)
"""Compress every JSON body of one byte or more, so that a body left uncompressed is left so by its kind."""


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The API tests' settings; a test parametrised with :data:`EVERY_SIZE` sets ``gzip_min_bytes``."""
    return settings.model_copy(update={"gzip_min_bytes": getattr(request, "param", settings.gzip_min_bytes)})


def _raw(client: TestClient, method: str, path: str, token: str, **headers: str) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent (not decoded)."""
    with client.stream(method, path, headers=auth(token, **headers)) as response:
        return response, b"".join(response.iter_raw())


def _scenario(client: TestClient, token: str, net: Network) -> dict[str, Any]:
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(token))
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _vary(response: httpx.Response) -> set[str]:
    return {v.strip().lower() for v in response.headers.get("vary", "").split(",") if v.strip()}


@pytest.mark.parametrize("value, accepted", [
    ("gzip", True), ("gzip, deflate, br, zstd", True), ("GZIP;q=0.5", True), ("x-gzip", True), ("*", True),
    ("", False), ("identity", False), ("br", False), ("gzip;q=0", False), ("br, gzip;q=0, *", False),
    ("*;q=0", False), ("gzip;q=0.0", False), ("gzip;q=zero", False), ("gzipped", False)])
def test_accept_encoding_is_read_with_its_qualities(value: str, accepted: bool) -> None:
    assert accepts_gzip(value) is accepted


def test_content_and_map_decode_to_the_same_json(client: TestClient, tokens: dict[str, str],
                                                 submarine_cut: Network) -> None:
    """The scenario's content (streamed), its GeoJSON map and the basemap: gzip'd, they decode to the very bytes sent without
    gzip; the compressed answer varies by Accept-Encoding and carries no length of the identity bytes."""
    tok = tokens["viewer"]
    sid = _scenario(client, tokens["planner"], submarine_cut)["id"]
    for path, media in ((f"/v1/scenarios/{sid}", "application/json"),
                        (f"/v1/scenarios/{sid}/map?format=geojson", "application/geo+json"),
                        ("/v1/basemap", "application/geo+json")):  # a file, sent inline: compressed too
        plain, plain_bytes = _raw(client, "GET", path, tok, **IDENTITY)
        zipped, zipped_bytes = _raw(client, "GET", path, tok, **GZIP)
        assert plain.status_code == zipped.status_code == 200, plain_bytes[:300]
        assert len(plain_bytes) >= 1024 and zipped.headers["content-type"].startswith(media)
        assert "content-encoding" not in plain.headers
        assert zipped.headers["content-encoding"] == "gzip" and "accept-encoding" in _vary(zipped)
        assert gzip.decompress(zipped_bytes) == plain_bytes
        assert json.loads(gzip.decompress(zipped_bytes)) == json.loads(plain_bytes)
        assert len(zipped_bytes) < len(plain_bytes) / 2
        length = zipped.headers.get("content-length")
        assert length is None or int(length) == len(zipped_bytes)
        assert zipped.headers["x-content-type-options"] == "nosniff"  # the other guards still see the answer


def test_the_etag_of_a_compressed_answer_is_weak_and_still_revalidates(client: TestClient, tokens: dict[str, str],
                                                                       submarine_cut: Network) -> None:
    made = _scenario(client, tokens["planner"], submarine_cut)
    path, tok = f"/v1/scenarios/{made['id']}", tokens["viewer"]
    plain, _ = _raw(client, "GET", path, tok, **IDENTITY)
    zipped, _ = _raw(client, "GET", path, tok, **GZIP)
    assert plain.headers["etag"] == made["etag"]  # the identity bytes keep the strong validator
    assert zipped.headers["etag"] == f"W/{made['etag']}"
    # a browser revalidates with the weak form it holds: 304, naming that form again
    again = client.get(path, headers=auth(tok, **GZIP, **{"If-None-Match": zipped.headers["etag"]}))
    assert again.status_code == 304 and again.headers["etag"] == zipped.headers["etag"]
    strong = client.get(path, headers=auth(tok, **GZIP, **{"If-None-Match": made["etag"]}))
    assert strong.status_code == 304 and strong.headers["etag"] == made["etag"]
    # the body's etag (what the workspace sends as If-Match) is the strong one: a new version is accepted
    body = client.get(path, headers=auth(tok, **GZIP)).json()
    assert body["etag"] == made["etag"]
    put = client.put(path, json=body["content"], headers=auth(tokens["planner"], **{"If-Match": body["etag"]}))
    assert put.status_code == 200 and put.json()["version"] == 2, put.text


def test_small_answers_and_head_are_not_compressed(client: TestClient, tokens: dict[str, str],
                                                   submarine_cut: Network) -> None:
    tok = tokens["viewer"]
    for path in ("/v1/whoami", "/healthz"):
        r, body = _raw(client, "GET", path, tok, **GZIP)
        assert r.status_code == 200 and len(body) < 1024
        assert "content-encoding" not in r.headers and json.loads(body)
    sid = _scenario(client, tokens["planner"], submarine_cut)["id"]
    head, body = _raw(client, "HEAD", f"/v1/scenarios/{sid}", tok, **GZIP)  # no JSON route answers HEAD: 405
    assert head.status_code == 405 and "content-encoding" not in head.headers and body == b""


@EVERY_SIZE
def test_token_values_are_never_compressed(client: TestClient, tokens: dict[str, str]) -> None:
    """BREACH: the new token's value beside the name the request chose. A team (no secret) is compressed, so the
    token endpoints are left alone by their route, not their size."""
    admin = tokens["admin"]
    made, body = _raw(client, "POST", "/v1/tokens", admin, **GZIP)  # no body: a 422 problem, still the route's
    assert "content-encoding" not in made.headers
    with client.stream("POST", "/v1/tokens", json={"scope": "viewer", "name": "guess-me"},
                       headers=auth(admin, **GZIP)) as created:
        raw = b"".join(created.iter_raw())
    assert created.status_code == 201 and "content-encoding" not in created.headers
    token = json.loads(raw)
    assert token["token"] and token["name"] == "guess-me"
    with client.stream("POST", f"/v1/tokens/{token['id']}/rotate", headers=auth(admin, **GZIP)) as rotated:
        raw = b"".join(rotated.iter_raw())
    assert rotated.status_code == 201 and "content-encoding" not in rotated.headers and json.loads(raw)["token"]
    team = client.post("/v1/teams", json={"name": "Compression"}, headers=auth(admin, **GZIP))
    assert team.status_code == 201 and team.headers["content-encoding"] == "gzip"


@EVERY_SIZE
def test_event_stream_is_not_compressed_and_still_streams(client: TestClient, tokens: dict[str, str],
                                                          triangle: Network) -> None:
    """The first event arrives while the job still runs, as plain text (nothing held back to compress)."""
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)["id"]
    job = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {"steps": 50, "step_s": 0.1}},
                      headers=auth(tok)).json()
    with client.stream("GET", f"/v1/jobs/{job['id']}/events", headers=auth(tok, **GZIP)) as events:
        assert events.status_code == 200 and events.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in events.headers
        chunks = events.iter_raw()
        assert next(chunks) == b"retry: 2000\n\n"  # each event as its own chunk, as the route yields it
        first = next(chunks).decode("utf-8")
    assert first.startswith("event: job\n")
    document = json.loads(next(line for line in first.splitlines() if line.startswith("data: "))[6:])
    assert document["id"] == job["id"] and document["status"] in ("queued", "running")
    client.delete(f"/v1/jobs/{job['id']}", headers=auth(tok))


@EVERY_SIZE
def test_downloads_and_ranges_are_not_compressed(client: TestClient, tokens: dict[str, str],
                                                 triangle: Network) -> None:
    """A result file is an attachment: sent as stored, its ranges 206 on those bytes. The result JSON (not an
    attachment) is compressed, unless a range is asked for."""
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)["id"]
    job = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {"steps": 1, "step_s": 0}},
                      headers=auth(tok)).json()
    done = wait_for(lambda: client.get(f"/v1/jobs/{job['id']}", headers=auth(tok)).json(),
                    lambda j: j["status"] in FINAL, timeout_s=60)
    assert done["status"] == "succeeded", done
    files = f"/v1/jobs/{job['id']}/files"
    for name in ("sites.csv", "sleepy.json"):
        whole, body = _raw(client, "GET", f"{files}/{name}", tok, **GZIP)
        assert whole.status_code == 200 and whole.headers["content-disposition"].startswith("attachment")
        assert "content-encoding" not in whole.headers
        part, piece = _raw(client, "GET", f"{files}/{name}", tok, **GZIP, Range="bytes=0-4")
        assert part.status_code == 206 and "content-encoding" not in part.headers
        assert part.headers["content-range"].startswith("bytes 0-4/") and piece == body[:5]
    result, zipped = _raw(client, "GET", f"/v1/jobs/{job['id']}/result", tok, **GZIP)
    assert result.status_code == 200 and result.headers["content-encoding"] == "gzip"
    assert "accept-ranges" not in result.headers and result.headers["etag"].startswith("W/")
    assert json.loads(gzip.decompress(zipped))["kind"] == "sleepy"
    ranged, piece = _raw(client, "GET", f"/v1/jobs/{job['id']}/result", tok, **GZIP, Range="bytes=0-0")
    assert ranged.status_code == 206 and "content-encoding" not in ranged.headers and piece == b"{"


def test_compression_can_be_refused(client: TestClient, tokens: dict[str, str], submarine_cut: Network) -> None:
    """``gzip;q=0`` is a refusal, not a mention: the answer is identity."""
    sid = _scenario(client, tokens["planner"], submarine_cut)["id"]
    r, body = _raw(client, "GET", f"/v1/scenarios/{sid}", tokens["viewer"], **{"Accept-Encoding": "br, gzip;q=0"})
    assert r.status_code == 200 and "content-encoding" not in r.headers and json.loads(body)["id"] == sid



def _bare_app() -> TestClient:
    """:class:`JsonCompression` (every size) around a few plain Starlette routes."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    document = {"rows": [{"id": f"site-{i}", "capacity_gbps": i * 100} for i in range(2000)]}

    async def chunks() -> Any:
        text = json.dumps(document).encode()
        for start in range(0, len(text), 10_000):
            yield text[start:start + 10_000]

    routes = [
        Route("/json", lambda _r: JSONResponse(document, headers={"ETag": '"v1"'})),
        Route("/stream", lambda _r: StreamingResponse(chunks(), media_type="application/json")),
        Route("/no-transform", lambda _r: JSONResponse(document, headers={"Cache-Control": "no-transform"})),
        Route("/encoded", lambda _r: Response(gzip.compress(json.dumps(document).encode()),
                                             media_type="application/json", headers={"Content-Encoding": "gzip"})),
        Route("/text", lambda _r: Response("x" * 5000, media_type="text/plain")),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(JsonCompression, minimum_bytes=1)
    return TestClient(app)


def test_the_middleware_alone() -> None:
    """HEAD, a streamed body, no-transform, an encoded body and a text body, on a bare app."""
    with _bare_app() as bare:
        get, zipped = _raw(bare, "GET", "/json", "t", **GZIP)
        assert get.headers["content-encoding"] == "gzip" and get.headers["etag"] == 'W/"v1"'
        assert int(get.headers["content-length"]) == len(zipped)
        head, nothing = _raw(bare, "HEAD", "/json", "t", **GZIP)
        assert head.status_code == 200 and nothing == b"" and "content-encoding" not in head.headers
        assert int(head.headers["content-length"]) == len(gzip.decompress(zipped)) and head.headers["etag"] == '"v1"'
        streamed, raw = _raw(bare, "GET", "/stream", "t", **GZIP)
        assert streamed.headers["content-encoding"] == "gzip" and "content-length" not in streamed.headers
        assert json.loads(gzip.decompress(raw)) == json.loads(gzip.decompress(zipped))
        for path in ("/no-transform", "/text"):
            plain, body = _raw(bare, "GET", path, "t", **GZIP)
            assert "content-encoding" not in plain.headers and len(body) >= 5000, path
        encoded, body = _raw(bare, "GET", "/encoded", "t", **GZIP)
        assert encoded.headers["content-encoding"] == "gzip" and json.loads(gzip.decompress(body))["rows"]
