"""Server-side bounds that are not about jobs: failed-authentication rate limiting and a header
timeout for slow clients.

* :class:`FailedAuthLimiter` counts failed authentications per client address in a sliding minute;
  past ``BACKBONE_AUTH_FAILURES_PER_MINUTE`` the address gets 429 with ``Retry-After`` (tokens that
  authenticated in the last hour are still checked, so a guesser behind the same address does not
  lock out a working client). Memory is bounded (at most ``max_addresses`` addresses are tracked).
* :func:`header_timeout_protocol` is uvicorn's h11 protocol with a deadline for a request's headers:
  a connection that does not finish its headers within ``BACKBONE_HEADER_TIMEOUT_S`` of its first
  byte (or of opening) is closed. uvicorn itself only times out idle keep-alive connections.
  uvicorn (0.55) has no setting for this and an ASGI middleware runs only after the headers are
  parsed, so this subclasses uvicorn's protocol and is passed as its ``http=`` setting; the trade-off
  (it relies on uvicorn's protocol internals, guarded by a real slow-client test) is in docs/api.md.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict, deque
from typing import Any

WINDOW_S = 60.0


class FailedAuthLimiter:
    """Failed authentications per client address in a sliding window.

    Parameters
    ----------
    per_minute
        Failures an address may make in :data:`WINDOW_S` seconds; the next attempt gets 429.
    max_addresses
        Addresses tracked at most (the least recently failing are forgotten first).
    """

    def __init__(self, per_minute: int, max_addresses: int = 10_000) -> None:
        self.per_minute, self.max_addresses = per_minute, max_addresses
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._known: OrderedDict[str, float] = OrderedDict()  # sha256 of tokens that worked -> until
        self._lock = threading.Lock()

    KNOWN_S = 3600.0
    """Seconds a token that authenticated stays exempt from its address's block."""

    def remember(self, token_digest: str) -> None:
        """Note a token that authenticated, so a block of its address does not lock it out."""
        with self._lock:
            self._known[token_digest] = time.monotonic() + self.KNOWN_S
            self._known.move_to_end(token_digest)
            while len(self._known) > self.max_addresses:
                self._known.popitem(last=False)

    def known(self, token_digest: str) -> bool:
        """Whether the token authenticated in the last :attr:`KNOWN_S` seconds."""
        with self._lock:
            until = self._known.get(token_digest)
            return until is not None and until > time.monotonic()

    def _recent(self, address: str, now: float) -> deque[float] | None:
        times = self._failures.get(address)
        if times is None:
            return None
        while times and times[0] <= now - WINDOW_S:
            times.popleft()
        if not times:
            del self._failures[address]
            return None
        return times

    def retry_after_s(self, address: str) -> int:
        """Seconds until ``address`` may try again (0: it may now)."""
        now = time.monotonic()
        with self._lock:
            times = self._recent(address, now)
            if times is None or len(times) < self.per_minute:
                return 0
            return max(1, int(times[0] + WINDOW_S - now + 0.999))

    def record_failure(self, address: str) -> int:
        """Count one failure of ``address``; returns its failures in the window, this one included."""
        now = time.monotonic()
        with self._lock:
            times = self._recent(address, now)
            if times is None:
                times = self._failures[address] = deque(maxlen=self.per_minute)
                while len(self._failures) > self.max_addresses:
                    self._failures.popitem(last=False)
            self._failures.move_to_end(address)
            times.append(now)
            return len(times)


def header_timeout_protocol(header_timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class, closing connections whose request headers take longer than
    ``header_timeout_s`` (counted from the connection's opening, then from each request's first byte)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout_s, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.logger.info("closing a connection that did not send its headers within %g s", header_timeout_s)
                self.transport.close()

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE:
                self._arm()  # a new request started (no-op when its deadline already runs)
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # headers complete

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutH11Protocol
