"""Bounds outside the job queue: failed-authentication rate limit with audit entries, `/metrics`
that unauthenticated made-up methods cannot grow, and header / idle timeouts for slow clients."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import httpx
import pytest
from apitest_helpers import LiveServer, auth
from fastapi.testclient import TestClient


@pytest.mark.slow
def test_failed_authentication_is_rate_limited_and_audited(client: TestClient, tokens: dict[str, str]) -> None:
    limit = client.app.state.settings.auth_failures_per_minute  # type: ignore[attr-defined]
    assert client.get("/v1/scenarios", headers=auth(tokens["admin"])).status_code == 200
    time.sleep(2.5)  # past the in-memory cache of valid tokens
    codes = [client.get("/v1/scenarios", headers=auth(f"bbk_guess{i}")).status_code for i in range(limit + 30)]
    assert codes[:limit] == [401] * limit
    assert set(codes[limit:]) == {429}, codes
    r = client.get("/v1/scenarios", headers=auth("bbk_guess-again"))
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    assert r.headers["content-type"].startswith("application/problem+json")
    # a token that works is still served from this address (it authenticated before the guessing)
    assert client.get("/v1/scenarios", headers=auth(tokens["admin"])).status_code == 200
    audit = client.get("/v1/audit", params={"limit": 1000}, headers=auth(tokens["admin"])).json()
    failed = [a for a in audit if a["action"] == "auth.failed"]
    limited = [a for a in audit if a["action"] == "auth.rate_limited"]
    assert len(failed) == limit - 1 and len(limited) == 1
    assert failed[0]["target_type"] == "client" and failed[0]["detail"]["path"] == "/v1/scenarios"
    assert all("guess" not in str(a) for a in audit)  # the tokens tried are never stored


@pytest.mark.slow
def test_metrics_labels_are_bounded(client: TestClient, tokens: dict[str, str]) -> None:
    for i in range(200):
        client.request(f"FAKE{i}", f"/nowhere/{i}")
        client.request(f"BREW{i}", "/v1/scenarios")
    client.get("/v1/scenarios", headers=auth(tokens["viewer"]))
    text = client.get("/metrics", headers=auth(tokens["viewer"])).text
    assert "FAKE" not in text and "BREW" not in text and "/nowhere" not in text
    assert 'backbone_http_requests_total{method="other",route="unmatched"' in text
    assert 'backbone_http_requests_total{method="GET",route="/v1/scenarios",status="200"} 1.0' in text
    series = [line for line in text.splitlines() if line.startswith("backbone_http_requests_total")]
    assert len(series) < 10, series
    assert 'backbone_jobs{status="queued"} 0.0' in text


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")
def test_slow_and_idle_clients_are_cut_off(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "live", f"sqlite:///{tmp_path / 'live.db'}", workers=1,
                        extra_env={"BACKBONE_HEADER_TIMEOUT_S": "2"})
    server.start()
    try:
        def closed_after(sock: socket.socket, trickle: bytes, limit_s: float) -> float:
            """Seconds until the server closes ``sock`` while we send ``trickle`` a byte a second."""
            t0 = time.monotonic()
            sock.settimeout(1.0)
            sent = 0
            while time.monotonic() - t0 < limit_s:
                if sent < len(trickle):
                    try:
                        sock.sendall(trickle[sent:sent + 1])
                    except OSError:
                        return time.monotonic() - t0
                    sent += 1
                try:
                    if sock.recv(4096) == b"":
                        return time.monotonic() - t0
                except TimeoutError:
                    continue
                except OSError:
                    return time.monotonic() - t0
            return float("inf")

        port = server.port
        # headers that never finish, sent a byte a second (Slowloris)
        with socket.create_connection(("127.0.0.1", port)) as slow:
            took = closed_after(slow, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 60, 30)
        assert took < 6, f"a client trickling its headers was not cut off ({took:.1f} s)"
        # a connection that never sends anything
        with socket.create_connection(("127.0.0.1", port)) as silent:
            took = closed_after(silent, b"", 30)
        assert took < 6, f"a silent connection was not cut off ({took:.1f} s)"
        # ordinary requests still work, and a kept-alive connection closes when idle
        with httpx.Client(base_url=server.url, timeout=10) as c:
            assert c.get("/healthz").status_code == 200
        with socket.create_connection(("127.0.0.1", port)) as idle:
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.5)
            assert b"200 OK" in idle.recv(65536)
            took = closed_after(idle, b"", 60)
        assert took < 40, f"an idle keep-alive connection stayed open ({took:.1f} s)"
    finally:
        server.kill()


def _trickle(port: int, head: bytes, body_byte: bytes, limit_s: float, interval_s: float = 0.5) -> tuple[float, bytes]:
    """Send ``head``, then one body byte every ``interval_s``, reading all along; returns the seconds until the
    server closed the connection (inf if it did not within ``limit_s``) and everything it answered."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(interval_s)
        t0 = time.monotonic()
        sock.sendall(head)
        while time.monotonic() - t0 < limit_s:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                try:
                    sock.sendall(body_byte)
                except OSError:
                    return time.monotonic() - t0, answer
                continue
            except OSError:
                return time.monotonic() - t0, answer
            if chunk == b"":
                return time.monotonic() - t0, answer
            answer += chunk
    return float("inf"), answer


def _exchange(port: int, *parts: bytes) -> bytes:
    """Send ``parts`` (a pause between them) and read the answer until the server closes or 5 s pass."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(5)
        for i, part in enumerate(parts):
            if i:
                time.sleep(0.2)
            sock.sendall(part)
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and b'"status"' in answer:
                    break
        except (TimeoutError, OSError):
            pass
    return answer


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")
def test_slow_bodies_and_large_headers_are_refused(tmp_path: Path) -> None:
    """Issue #26 items 4 and 8: a body trickled a byte at a time is cut off at BACKBONE_BODY_TIMEOUT_S with a 408
    problem document (or, unread behind a 401, within the same deadline), and a header block over 64 KiB gets 431
    whether it arrives whole or in pieces; ordinary requests are unaffected."""
    server = LiveServer(tmp_path / "live", f"sqlite:///{tmp_path / 'live.db'}", workers=1,
                        extra_env={"BACKBONE_BODY_TIMEOUT_S": "2"})
    server.start()
    try:
        made = server.cli("token", "create", "--scope", "planner")
        assert made.returncode == 0, made.stderr
        token = made.stdout.split()[-1]
        port = server.port

        def post_head(authorization: str, length: int = 100_000) -> bytes:
            return (f"POST /v1/scenarios HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {length}\r\n{authorization}\r\n").encode()

        took, answer = _trickle(port, post_head(f"Authorization: Bearer {token}\r\n"), b" ", 12)
        assert took < 6, f"a trickled body was not cut off ({took:.1f} s)"
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:300]
        assert b"application/problem+json" in answer and b"connection: close" in answer.lower()
        took, answer = _trickle(port, post_head(""), b" ", 12)  # no token: answered 401, body never read
        assert took < 6, f"a trickled body behind a 401 was not cut off ({took:.1f} s)"
        assert answer.startswith(b"HTTP/1.1 401 "), answer[:300]
        took, answer = _trickle(port, post_head(f"Authorization: Bearer {token}\r\n", 10**9), b" ", 12)
        assert took < 2 and answer.startswith(b"HTTP/1.1 413 "), (took, answer[:300])  # too large: not drained

        get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
        answer = _exchange(port, get + b"X-Pad: " + b"a" * 70_000 + b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 431 ") and b"application/problem+json" in answer, answer[:300]
        answer = _exchange(port, get + b"X-Pad: " + b"a" * 40_000, b"a" * 30_000 + b"\r\n\r\n")  # in pieces
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:300]
        answer = _exchange(port, get + b"X-Pad: " + b"a" * 60_000 + b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]

        with httpx.Client(base_url=server.url, timeout=30) as c:  # an ordinary upload still works
            doc = {"name": "tiny", "sites": [{"id": "A", "lon": 0, "lat": 0, "region": "EMEA"},
                                             {"id": "B", "lon": 1, "lat": 1, "region": "EMEA"}],
                   "links": [{"id": "L", "site_a": "A", "site_b": "B", "capacity_gbps": 100}]}
            r = c.post("/v1/scenarios", json=doc, headers=auth(token))
            assert r.status_code == 201, r.text
    finally:
        server.kill()
