"""HTTP guards around the app, as plain ASGI middleware (no server internals):

* :class:`BodyDeadline` -- a request's body must arrive within ``BACKBONE_BODY_TIMEOUT_S`` of its headers,
  plus one second per ``BACKBONE_BODY_MIN_BYTES_PER_S`` bytes received (a slow but steady upload keeps
  going; a trickle does not). Past it the request is answered 408 (a problem document) and the connection
  closed; when the response has already started, the connection is closed. A body the app does not read
  (a 401 before the upload) is read and dropped under the same deadline before the answer goes out, so a
  client cannot hold the connection by trickling a body nobody reads.
* :class:`HeaderSizeLimit` -- a request whose request line and headers exceed ``BACKBONE_MAX_HEADER_BYTES``
  is answered 431.
* :class:`SecurityHeaders` -- ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and
  ``X-Frame-Options: DENY`` on every response, and a Content-Security-Policy on every document a browser
  could run script in (HTML, SVG, XML): :data:`DOCUMENT_CSP`, or :data:`DOCS_CSP` for the interactive
  API documentation pages.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backbone.api.problems import problem_response

logger = logging.getLogger(__name__)

DOCUMENT_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
                "connect-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""The policy of HTML (maps, reports), SVG and XML responses: the self-contained map page runs (its script
and style are inline, its icon a ``data:`` URL), but it loads, sends and embeds nothing, and nobody frames it."""

DOCS_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            "font-src 'self' data:; img-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; "
            "form-action 'self'; frame-ancestors 'none'")
"""The policy of ``/docs`` and ``/redoc`` (Swagger UI and ReDoc): their scripts, style sheet and icon come from
this origin (:mod:`backbone.api.docs_pages` serves them from the package), their small start-up script is inline;
they fetch ``/openapi.json`` and call the API on this origin only, and load nothing from anywhere else."""

DOCS_PATHS = frozenset({"/docs", "/redoc", "/docs/oauth2-redirect"})
"""Paths served the :data:`DOCS_CSP` policy."""

SECURITY_HEADERS = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": "DENY"}
"""Headers every response carries."""


def runs_script(content_type: str) -> bool:
    """Whether a browser may run script in a response of ``content_type`` (HTML, SVG, XML)."""
    media = content_type.split(";")[0].strip().lower()
    return media in ("text/html", "text/xml", "application/xml") or media.endswith("+xml")


class SecurityHeaders:
    """Add :data:`SECURITY_HEADERS` to every HTTP response, and a Content-Security-Policy to documents
    (see :func:`runs_script`). Headers the app set itself are kept."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        docs = scope.get("path", "") in DOCS_PATHS

        async def with_headers(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                headers = MutableHeaders(scope=msg)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                if docs:
                    headers.setdefault("content-security-policy", DOCS_CSP)
                elif runs_script(headers.get("content-type", "")):
                    headers.setdefault("content-security-policy", DOCUMENT_CSP)
            await send(msg)

        await self.app(scope, receive, with_headers)


def request_head_bytes(scope: Scope) -> int:
    """Bytes of a request's line and header block as sent (``name: value\\r\\n`` per header)."""
    line = len(scope.get("method", "")) + len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    return line + 12 + sum(len(name) + len(value) + 4 for name, value in scope.get("headers") or []) + 2


class HeaderSizeLimit:
    """Answer 431 to requests whose line and headers exceed ``limit`` bytes (see :func:`request_head_bytes`).

    The server also refuses header blocks that arrive in pieces past its own buffer limit; this catches the
    blocks that arrive whole."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (size := request_head_bytes(scope)) > self.limit:
            await problem_response(431, "Request Header Fields Too Large",
                                   f"request line and headers of {size} bytes exceed the limit of {self.limit}",
                                   headers={"Connection": "close"}, instance=scope.get("path"))(scope, receive, send)
            return
        await self.app(scope, receive, send)


class BodyTimeoutError(HTTPException):
    """The request body did not arrive in time (answered 408, and the connection closed)."""

    def __init__(self, detail: str) -> None:
        super().__init__(408, detail, headers={"Connection": "close"})


def declared_length(scope: Scope) -> int | None:
    """The request's ``Content-Length`` (0 without one and without ``Transfer-Encoding``; None: unknown)."""
    headers = dict(scope.get("headers") or [])
    length = headers.get(b"content-length", b"").strip()
    if length.isdigit():
        return int(length)
    return None if b"transfer-encoding" in headers or length else 0


class BodyDeadline:
    """A deadline for each request's body: ``timeout_s`` from the request's start, plus one second per
    ``min_bytes_per_s`` bytes received. Past it, 408 (or a closed connection once the response started).

    A body the app leaves unread (it answered first) is read and dropped before the answer is sent, under
    the same deadline and up to ``drain_limit`` bytes; past either, the answer carries
    ``Connection: close``.

    Parameters
    ----------
    app
        The wrapped ASGI app.
    timeout_s
        Seconds a body may take, before the allowance for bytes received.
    min_bytes_per_s
        Each this many bytes received extend the deadline by a second.
    drain_limit
        Most bytes of a request read in all (larger bodies are not drained).
    """

    def __init__(self, app: ASGIApp, timeout_s: float, min_bytes_per_s: int, drain_limit: int) -> None:
        self.app, self.timeout_s, self.min_bytes_per_s = app, timeout_s, min_bytes_per_s
        self.drain_limit = drain_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = declared_length(scope) if scope["type"] == "http" else 0
        if length == 0:
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        start = loop.time()
        received, done, started = 0, False, False
        continue_pending = any(n == b"expect" and v.lower() == b"100-continue" for n, v in scope.get("headers", []))

        async def timed_receive() -> Message:
            nonlocal received, done, continue_pending
            if done:
                return await receive()
            remaining = start + self.timeout_s + received / self.min_bytes_per_s - loop.time()
            try:
                if remaining <= 0:
                    raise TimeoutError
                continue_pending = False
                msg = await asyncio.wait_for(receive(), remaining)
            except TimeoutError:
                logger.info("request body of %s %s too slow: %d bytes in %.1f s", scope.get("method"),
                            scope.get("path"), received, loop.time() - start)
                raise BodyTimeoutError(f"the request body did not arrive within {self.timeout_s:g} s "
                                       f"(plus 1 s per {self.min_bytes_per_s} bytes received)") from None
            if msg["type"] == "http.request":
                received += len(msg.get("body", b""))
                done = not msg.get("more_body", False)
            else:
                done = True  # the client went away
            return msg

        async def drained() -> bool:
            """Read the rest of the body; False when the deadline or the drain limit cut it short."""
            if continue_pending or (length is not None and length > self.drain_limit):
                return False  # the client waits for our answer before it sends the body, or it is too large
            try:
                while not done:
                    if received > self.drain_limit:
                        return False
                    await timed_receive()
            except BodyTimeoutError:
                return False
            return True

        async def send_after_body(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                if not done and not await drained():
                    MutableHeaders(scope=msg)["connection"] = "close"
                started = True
            await send(msg)

        try:
            await self.app(scope, timed_receive, send_after_body)
        except BodyTimeoutError as exc:
            if started:
                raise  # the server closes a connection whose response broke off
            await problem_response(408, "Request Timeout", str(exc.detail), headers=exc.headers,
                                   instance=scope.get("path"))(scope, timed_receive, send_after_body)
