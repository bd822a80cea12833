"""The header deadline (backbone.api.limits.header_deadline) on a real uvicorn server in this process: headers that
trickle or never come are cut off; a request the app takes longer than the deadline over, a streamed answer and
the next request on a kept-alive connection are not. (The full server: tests/api/test_api_bounds.py.)"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from backbone.api.limits import HeaderDeadlineProtocol, RequestsInFlight, header_deadline

DEADLINE_S = 0.5


async def slow_app(scope: Scope, receive: Receive, send: Send) -> None:
    """``/slow`` answers after three deadlines, ``/stream`` streams for three deadlines, anything else at once."""
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/slow":
        await asyncio.sleep(3 * DEADLINE_S)
    length = [] if path == "/stream" else [(b"content-length", b"5")]  # the stream goes chunked
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain"), *length]})
    if path == "/stream":
        for _ in range(6):
            await send({"type": "http.response.body", "body": b"tick\n", "more_body": True})
            await asyncio.sleep(DEADLINE_S / 2)
    await send({"type": "http.response.body", "body": b"done\n"})


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    app, protocol = header_deadline(slow_app, DEADLINE_S)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, http=protocol, lifespan="off", log_level="warning",
                            timeout_keep_alive=30)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the test server did not start"
        time.sleep(0.05)
    yield server.servers[0].sockets[0].getsockname()[1]
    server.should_exit = True
    thread.join(10)


def _closed_after(sock: socket.socket, trickle: bytes, limit_s: float) -> float:
    """Seconds until the server closes ``sock`` while ``trickle`` is sent a byte every 0.2 s (inf: not closed)."""
    t0 = time.monotonic()
    sock.settimeout(0.2)
    for i in range(10**6):
        if time.monotonic() - t0 > limit_s:
            return float("inf")
        try:
            if i < len(trickle):
                sock.sendall(trickle[i:i + 1])
            if sock.recv(4096) == b"":
                return time.monotonic() - t0
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - t0
    return float("inf")


def _answer(sock: socket.socket, request: bytes) -> bytes:
    """Send ``request`` and read its whole answer (its body ends with ``done``; a chunked one, with its last chunk)."""
    sock.settimeout(10)
    sock.sendall(request)
    answer = b""
    while not (answer.endswith(b"done\n") or answer.endswith(b"done\n\r\n0\r\n\r\n")):
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection mid-answer: {answer!r}"
        answer += chunk
    return answer


def test_trickled_and_missing_headers_are_cut_off(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as slow:
        took = _closed_after(slow, b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100, 20)
    assert took < 10 * DEADLINE_S, f"trickled headers were not cut off ({took:.1f} s)"
    with socket.create_connection(("127.0.0.1", port)) as silent:
        took = _closed_after(silent, b"", 20)
    assert DEADLINE_S * 0.8 < took < 10 * DEADLINE_S, f"a silent connection was closed after {took:.1f} s"


def test_long_requests_and_kept_alive_connections_are_not_cut_off(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        t0 = time.monotonic()
        assert _answer(sock, b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")
        assert time.monotonic() - t0 >= 3 * DEADLINE_S
        streamed = _answer(sock, b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        assert streamed.count(b"tick") == 6
        time.sleep(2 * DEADLINE_S)  # idle on a kept-alive connection: uvicorn's keep-alive (30 s), not the deadline
        assert _answer(sock, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")
        # the next request's headers trickle: the deadline counts from its first byte
        took = _closed_after(sock, b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100, 20)
    assert took < 10 * DEADLINE_S, f"a kept-alive connection's trickled headers were not cut off ({took:.1f} s)"


def test_the_middleware_passes_requests_on_without_the_protocol() -> None:
    """Under a test client or another server (no HeaderDeadlineProtocol) the middleware only passes on."""
    seen: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["type"])

    asyncio.run(RequestsInFlight(app)({"type": "http"}, None, None))  # type: ignore[arg-type]
    assert seen == ["http"]
    _, protocol = header_deadline(app, 3.0)
    assert issubclass(protocol, HeaderDeadlineProtocol) and protocol.header_timeout_s == 3.0
