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
