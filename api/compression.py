"""Gzip for the API's own JSON answers, as plain ASGI middleware (:class:`JsonCompression`).

The workspace's static files (``/ui/*``) are compressed by :class:`backbone.api.web.pages.WorkspaceAssets`; this
compresses the JSON the API writes (a scenario's content, its GeoJSON map, results, lists, problem documents) when
the client accepts gzip and the body is at least :data:`MINIMUM_BYTES`. It is deliberately narrower than
Starlette's ``GZipMiddleware`` (which compresses every type it does not exclude, reads ``Accept-Encoding`` as a
substring, so ``gzip;q=0`` counts, and keeps a strong ``ETag`` on the compressed bytes):

* only JSON media types are compressed (``application/json`` and every ``+json``: GeoJSON, problem documents), so
  an event stream, an image, a CSV download or a slide deck passes through untouched, chunk by chunk, and no body
  of another type is ever held back;
* never a ``HEAD``, a request with ``Range``, a ``206``, a response with ``Content-Range``, an ``attachment`` (a
  file download), ``Cache-Control: no-transform``, or a response that already has a ``Content-Encoding``;
* never the routes in :data:`NEVER_COMPRESSED_ROUTES` (BREACH; see there);
* a compressed response says ``Content-Encoding: gzip`` and ``Vary: Accept-Encoding``, drops ``Accept-Ranges``
  (ranges are served on the identity bytes only), and its ``ETag`` becomes weak (``W/"..."``): the compressed bytes
  differ from the identity bytes, so a strong validator would be wrong, while ``If-None-Match`` compares weakly and
  still answers 304. A 304 to a client that holds the weak form names the weak form again.

A streamed JSON body is compressed as it streams: up to :data:`MINIMUM_BYTES` is held to decide, then each chunk
goes through one compressor (chunks of :data:`THREAD_MINIMUM_BYTES` or more in a worker thread, so the event loop
is not blocked) and what the compressor emits is sent on.
"""

from __future__ import annotations

import zlib
from typing import Literal

import anyio.to_thread
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MINIMUM_BYTES = 1024
"""Bodies smaller than this are sent as they are (the gzip header and the extra work would not pay)."""

THREAD_MINIMUM_BYTES = 64 * 1024
"""Chunks at least this large are compressed in a worker thread, not on the event loop."""

COMPRESS_LEVEL = 6
"""zlib's level: the scenario's 446 kB content shrinks about as much as at 9, in a fraction of the time."""

NEVER_COMPRESSED_ROUTES = frozenset({"/v1/tokens", "/v1/tokens/{token_id}/rotate"})
"""Route templates whose answers are never compressed, whatever their size.

BREACH: when a response body carries a secret together with input an attacker can choose (reflected from the
request), the compressed length leaks how much of the attacker's guess matches the secret, one request at a time,
even over TLS. Creating and rotating a token answer the new token's plaintext value beside the token's name, which
comes from the request; ``GET /v1/tokens`` shares the template and carries no value, but is small and rarely read.
The API answers no other secret: single sign-on trades its code for tokens at the issuer, from the browser, never
through this server (:mod:`backbone.api.oidc_login`), and bearer tokens travel in request headers only. A new route
that answers a secret belongs here."""


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` value admits gzip (RFC 9110 12.5.3: ``gzip``/``x-gzip`` or ``*`` with a
    non-zero quality; an explicit ``gzip;q=0`` refuses it even beside ``*``).

    Example
    -------
    >>> accepts_gzip("gzip, deflate, br"), accepts_gzip("br, gzip;q=0"), accepts_gzip("*;q=0.5")
    (True, False, True)
    """
    named: float | None = None
    wildcard: float | None = None
    for item in accept_encoding.lower().split(","):
        coding, _, params = item.partition(";")
        quality = _quality(params)
        coding = coding.strip()
        if coding in ("gzip", "x-gzip"):
            named = quality if named is None else max(named, quality)
        elif coding == "*":
            wildcard = quality
    if named is not None:
        return named > 0
    return wildcard is not None and wildcard > 0


def _quality(params: str) -> float:
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip() == "q":
            try:
                return float(value.strip())
            except ValueError:
                return 0.0
    return 1.0


def is_json_media(content_type: str) -> bool:
    """Whether a ``Content-Type`` is JSON (``application/json`` or any ``+json`` suffix)."""
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def weak_etag(etag: str) -> str:
    """The weak form of an entity tag (``"x"`` -> ``W/"x"``; a weak tag stays as it is)."""
    return etag if etag.startswith("W/") else f"W/{etag}"


def compressible(status: int, headers: Headers, route_template: str | None, minimum_bytes: int) -> bool:
    """Whether a response (its status and headers, and the route that answered) may be gzip-compressed."""
    if status < 200 or status in (204, 206, 304) or route_template in NEVER_COMPRESSED_ROUTES:
        return False
    if not is_json_media(headers.get("content-type", "")):
        return False
    if "content-encoding" in headers or "content-range" in headers:
        return False
    if headers.get("content-disposition", "").strip().lower().startswith("attachment"):
        return False
    if "no-transform" in headers.get("cache-control", "").lower():
        return False
    length = headers.get("content-length", "")
    return not (length.isdigit() and int(length) < minimum_bytes)


class JsonCompression:
    """Gzip the API's JSON answers for clients that accept it (see the module's docstring for what is never
    compressed and why).

    Parameters
    ----------
    app
        The wrapped ASGI app.
    minimum_bytes
        Bodies smaller than this stay as they are.
    level
        zlib's compression level.
    """

    def __init__(self, app: ASGIApp, minimum_bytes: int = MINIMUM_BYTES, level: int = COMPRESS_LEVEL) -> None:
        self.app, self.minimum_bytes, self.level = app, minimum_bytes, level

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") == "HEAD":
            await self.app(scope, receive, send)
            return
        request = Headers(scope=scope)
        if "range" in request or not accepts_gzip(request.get("accept-encoding", "")):
            await self.app(scope, receive, send)
            return
        responder = _GzipResponder(scope, send, request, self.minimum_bytes, self.level)
        await self.app(scope, receive, responder.send)


class _GzipResponder:
    """One response's compression: the start message is held until enough body has come to decide."""

    def __init__(self, scope: Scope, send: Send, request: Headers, minimum_bytes: int, level: int) -> None:
        self.scope, self.downstream, self.request = scope, send, request
        self.minimum_bytes, self.level = minimum_bytes, level
        self.state: Literal["start", "pending", "pass", "gzip"] = "start"
        self.start: Message = {}
        self.held: list[bytes] = []
        self.compressor: zlib._Compress | None = None  # made when a body is compressed

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            await self._on_start(message)
        elif kind == "http.response.body" and self.state == "pending":
            await self._on_held_body(message)
        elif kind == "http.response.body" and self.state == "gzip":
            await self._send_compressed(message.get("body", b""), more=message.get("more_body", False))
        else:  # pass-through, or another message (a file sent by path) before a decision: send as it is
            await self._release_identity(more=True)
            await self.downstream(message)

    async def _on_start(self, message: Message) -> None:
        message.setdefault("headers", [])
        headers = Headers(raw=message.get("headers", []))
        route = getattr(self.scope.get("route"), "path", None)
        if compressible(int(message["status"]), headers, route if isinstance(route, str) else None,
                        self.minimum_bytes):
            self.start, self.state = message, "pending"
            return
        if int(message["status"]) == 304:
            self._weak_not_modified(message)
        self.state = "pass"
        await self.downstream(message)

    def _weak_not_modified(self, message: Message) -> None:
        """A 304 to a client holding the weak (compressed) form of the ETag names that form again."""
        headers = MutableHeaders(scope=message)
        etag = headers.get("etag")
        held = [t.strip() for t in self.request.get("if-none-match", "").split(",")]
        if etag and not etag.startswith("W/") and weak_etag(etag) in held:
            headers["etag"] = weak_etag(etag)
            headers.add_vary_header("Accept-Encoding")

    async def _on_held_body(self, message: Message) -> None:
        self.held.append(message.get("body", b""))
        more = bool(message.get("more_body", False))
        size = sum(len(part) for part in self.held)
        if size < self.minimum_bytes and more:
            return  # not enough yet to decide
        if size < self.minimum_bytes:
            await self._release_identity(more=False)
            return
        headers = MutableHeaders(scope=self.start)
        headers["content-encoding"] = "gzip"
        headers.add_vary_header("Accept-Encoding")
        if "etag" in headers:
            headers["etag"] = weak_etag(headers["etag"])
        for name in ("accept-ranges", "content-length"):
            if name in headers:
                del headers[name]
        body, self.held = b"".join(self.held), []
        self.state = "gzip"
        if not more:  # the whole body is here: its compressed length is known
            compressed = await self._compress(body, final=True)
            headers["content-length"] = str(len(compressed))
            await self.downstream(self.start)
            await self.downstream({"type": "http.response.body", "body": compressed, "more_body": False})
            return
        await self.downstream(self.start)
        await self._send_compressed(body, more=True)

    async def _release_identity(self, more: bool) -> None:
        """Send the held start and body uncompressed; from now on everything passes through."""
        if self.state != "pending":
            return
        self.state = "pass"
        await self.downstream(self.start)
        body, self.held = b"".join(self.held), []
        if body or not more:
            await self.downstream({"type": "http.response.body", "body": body, "more_body": more})

    async def _send_compressed(self, body: bytes, more: bool) -> None:
        compressed = await self._compress(body, final=not more)
        if compressed or not more:
            await self.downstream({"type": "http.response.body", "body": compressed, "more_body": more})

    async def _compress(self, body: bytes, final: bool) -> bytes:
        if len(body) >= THREAD_MINIMUM_BYTES:
            return await anyio.to_thread.run_sync(self._compress_now, body, final)
        return self._compress_now(body, final)

    def _compress_now(self, body: bytes, final: bool) -> bytes:
        if self.compressor is None:
            self.compressor = zlib.compressobj(self.level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: gzip wrapper
        out = self.compressor.compress(body)
        return out + self.compressor.flush() if final else out
