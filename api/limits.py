"""Server-side bounds that are not about jobs: failed-authentication rate limiting and a header
timeout for slow clients.

* :class:`FailedAuthLimiter` counts failed authentications per client address in a sliding minute;
  past ``BACKBONE_AUTH_FAILURES_PER_MINUTE`` the address gets 429 with ``Retry-After`` (tokens that
  authenticated in the last hour are still checked, so a guesser behind the same address does not
  lock out a working client). Memory is bounded (at most ``max_addresses`` addresses are tracked).
* :func:`header_deadline` closes connections that do not finish a request's headers within
  ``BACKBONE_HEADER_TIMEOUT_S`` of opening, or of that request's first byte (Slowloris). uvicorn (0.55) has
  no setting for this (it times out only idle keep-alive connections) and an ASGI middleware alone runs only
  once the headers are parsed, so two supported interfaces work together: an asyncio protocol, given to
  uvicorn's ``http=`` setting, that wraps uvicorn's own protocol (it sees the bytes arrive and holds the
  deadline) and an ASGI middleware that tells it when the app has a request of that connection (the headers
  are complete). Neither reads uvicorn's or h11's internals; docs/api.md has the details.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections import OrderedDict, deque
from typing import Any, ClassVar

from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

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


CONNECTION: contextvars.ContextVar[HeaderDeadlineProtocol | None] = contextvars.ContextVar(
    "backbone_http_connection", default=None)
"""The connection whose bytes are being parsed; a request task started meanwhile inherits it (``create_task``
copies the current context), so :class:`RequestsInFlight` finds the connection of the request it runs."""


class HeaderDeadlineProtocol(asyncio.Protocol):
    """An asyncio protocol around uvicorn's own HTTP protocol (built with uvicorn's arguments, unseen): every
    event goes to it unchanged, and a connection with no request in the app that has not completed a request's
    headers :attr:`header_timeout_s` after it opened, or after the first byte of a new request, is closed.

    The headers are complete when uvicorn starts the app on the request; :class:`RequestsInFlight`, the
    outermost ASGI middleware, says so (:meth:`request_started`) and when the app is done
    (:meth:`request_finished`). Build the pair with :func:`header_deadline`. Idle keep-alive connections are
    uvicorn's own ``timeout_keep_alive``.
    """

    inner_class: ClassVar[type[asyncio.Protocol]]
    header_timeout_s: ClassVar[float]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.inner = self.inner_class(*args, **kwargs)
        self.transport: asyncio.BaseTransport | None = None
        self.in_flight = 0
        self._timer: asyncio.TimerHandle | None = None

    # --------------------------------------------------------------- the deadline
    def _arm(self) -> None:
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _headers_too_slow(self) -> None:
        self._timer = None
        if self.in_flight == 0 and self.transport is not None and not self.transport.is_closing():
            logger.info("closing a connection that did not send its headers within %g s", self.header_timeout_s)
            self.transport.close()

    def request_started(self) -> None:
        """The app got a request of this connection: its headers are complete."""
        self.in_flight += 1
        self._disarm()

    def request_finished(self) -> None:
        """The app is done with a request of this connection (the next one's first byte starts a deadline)."""
        self.in_flight -= 1

    # --------------------------------------------------------------- asyncio.Protocol, passed on
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.in_flight == 0:
            self._arm()  # a new request started (no-op while its deadline runs)
        token = CONNECTION.set(self)
        try:
            self.inner.data_received(data)
        finally:
            CONNECTION.reset(token)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class RequestsInFlight:
    """ASGI middleware telling the :class:`HeaderDeadlineProtocol` of a request's connection when the app starts
    and finishes it. Without that protocol (a test client, another server) it only passes requests on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection = CONNECTION.get()
        if connection is None or scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        connection.request_started()
        try:
            await self.app(scope, receive, send)
        finally:
            connection.request_finished()


def header_deadline(app: ASGIApp, header_timeout_s: float,
                    http: str = "h11") -> tuple[ASGIApp, type[asyncio.Protocol]]:
    """The app and the protocol class to give uvicorn (``uvicorn.run(app, http=protocol)``) so that a connection
    must complete a request's headers within ``header_timeout_s`` of opening, or of that request's first byte.

    ``http`` names uvicorn's protocol as its ``--http`` setting does (``h11``, ``httptools``); the class is
    found in uvicorn's table of those names and used through the asyncio protocol interface only. The server
    must not set uvicorn's ``reset_contextvars`` (request tasks would not inherit their connection).
    """
    from uvicorn.config import HTTP_PROTOCOLS
    from uvicorn.importer import import_from_string

    inner = import_from_string(HTTP_PROTOCOLS[http])
    attrs: dict[str, Any] = {"inner_class": inner, "header_timeout_s": header_timeout_s}
    if hasattr(inner, "alpn_protocols"):
        attrs["alpn_protocols"] = inner.alpn_protocols
    protocol = type(f"HeaderDeadline{inner.__name__}", (HeaderDeadlineProtocol,), attrs)
    return RequestsInFlight(app), protocol
