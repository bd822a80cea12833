"""RFC 9457 problem responses, shared by the app's error handlers and its ASGI middleware."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse

from backbone.api.contract import SafeJSONResponse

PROBLEM_JSON = "application/problem+json"


def problem_response(status: int, title: str, detail: str = "", errors: list[dict[str, Any]] | None = None,
                     headers: Mapping[str, str] | None = None, instance: str | None = None) -> JSONResponse:
    """An RFC 9457 problem response.

    Parameters
    ----------
    status
        The HTTP status.
    title
        A short summary of the kind of problem.
    detail
        What went wrong this time.
    errors
        Structured problems (file, table, record, field, message), empty by default.
    headers
        Extra response headers (``Retry-After``, ``Allow``, ``Connection``).
    instance
        The request path, when known.

    Returns
    -------
    JSONResponse
        The response, media type ``application/problem+json`` (a :class:`~backbone.api.contract.SafeJSONResponse`:
        non-finite numbers are ``null``).
    """
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status, "detail": detail,
                            "errors": errors or []}
    if instance:
        body["instance"] = instance
    return SafeJSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=dict(headers or {}))
