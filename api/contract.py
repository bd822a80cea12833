"""The HTTP contract the OpenAPI document states and the server keeps: problem documents as
``application/problem+json`` on every error status an operation can answer, 415 for bodies that
are not JSON, a complete ``Allow`` header on 405, and JSON bodies that are always valid JSON
(:class:`SafeJSONResponse`: a non-finite number is ``null``, never a 500).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

PROBLEM_JSON = "application/problem+json"

_DESCRIPTIONS = {
    400: "The body could not be parsed (malformed or too deeply nested JSON)",
    401: "Missing, invalid, expired or revoked token",
    403: "The token's scope (or team role) does not allow this",
    404: "Unknown id or route",
    408: "The request body did not arrive within BACKBONE_BODY_TIMEOUT_S (a trickled body)",
    409: "Conflict: stale If-Match, a job not finished, a read-only scenario",
    413: "Request body too large",
    415: "Unsupported content type",
    422: "Invalid input; each problem names file, table, record and field",
    429: "Too many failed authentications from this address (Retry-After)",
    431: "Request line and headers larger than BACKBONE_MAX_HEADER_BYTES",
    500: "Internal error (reported without details; the server log has them)",
    503: "Solver or map rendering not available, or the server's storage full or read-only (Retry-After)",
}


class SafeJSONResponse(JSONResponse):
    """A JSON response whose non-finite floats (NaN, +-inf) are ``null``: the one serialisation edge of the
    API's JSON bodies (the app's default response class and every problem document), so no value that could
    not be computed turns a response into a 500 (strict JSON has no NaN)."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:  # "Out of range float values are not JSON compliant"
            from backbone.serialize import json_safe

            return json.dumps(json_safe(content), ensure_ascii=False, allow_nan=False, indent=None,
                              separators=(",", ":")).encode("utf-8")


async def require_json_body(request: Request) -> None:
    """Dependency of routes with a JSON body: 415 unless ``Content-Type`` is JSON (or absent)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype and ctype != "application/json" and not ctype.endswith("+json"):
        raise HTTPException(415, f"unsupported content type {ctype!r}: send application/json")


def allowed_methods(request: Request) -> str:
    """The methods the app's routes serve at the request's path (the ``Allow`` header of a 405)."""
    from starlette.routing import Match

    allowed = [m for m in ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")
               if any(route.matches({**request.scope, "method": m})[0] == Match.FULL
                      for route in request.app.router.routes)]
    return ", ".join(allowed)


def finish_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` describe every error status each operation can answer, each as an
    RFC 9457 problem document with media type ``application/problem+json``."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        ref = {"$ref": "#/components/schemas/ProblemDetails"}
        for item in schema.get("paths", {}).values():
            for method, op in item.items():
                if method not in ("get", "put", "post", "delete", "patch"):
                    continue
                responses = op.setdefault("responses", {})
                codes = {431, 500}
                if op.get("security"):
                    codes |= {401, 403, 429, 503}  # 503: the identity provider's keys or the storage unavailable
                if "requestBody" in op:
                    codes |= {400, 408, 413, 415, 422}
                if op.get("parameters"):
                    codes.add(422)
                if any(par.get("in") == "path" for par in op.get("parameters", [])):
                    codes.add(404)
                for code in sorted(codes):
                    responses.setdefault(str(code), {"description": _DESCRIPTIONS[code]})
                for code, resp in responses.items():
                    if code.isdigit() and int(code) >= 400:
                        resp["content"] = {PROBLEM_JSON: {"schema": ref}}
                        if int(code) in _DESCRIPTIONS and resp.get("description") in (None, "", "Validation Error",
                                                                                       "Successful Response"):
                            resp["description"] = _DESCRIPTIONS[int(code)]
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
