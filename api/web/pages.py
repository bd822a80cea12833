"""Serve the workspace: ``/`` is its page, ``/ui/*`` its bundled script, style sheet, map worker and licences.

Every URL the page uses is relative (``ui/app.js``, ``v1/scenarios``), so the workspace works unchanged behind a
reverse proxy that mounts the app under a path prefix (``/backbone/``). The page's content security policy
(:func:`workspace_csp`) admits scripts, styles, the map's worker and requests from this origin only, and the
issuer's token endpoint when the server offers single sign-on.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.types import Scope

ASSETS_URL = "/ui"
"""Where the bundle (``static/``) is served."""

def workspace_csp(token_endpoint: str | None = None) -> str:
    """The workspace page's content security policy.

    Script, style sheet, map worker and API calls from this origin only; no inline script or style, nothing from
    any other origin. MapLibre's worker is a module script served beside the bundle (``worker-src 'self'``, no
    ``blob:``); ``img-src data: blob:`` lets the map read its own canvas images.

    With single sign-on on (``token_endpoint``, a URL :func:`backbone.api.oidc_login.endpoint_url` accepted),
    ``connect-src`` also names the issuer's token endpoint, exactly, so the page may trade its code for tokens
    there and send nothing anywhere else. The sign-in itself is a top-level navigation to the authorization
    endpoint (``location.assign``), which no policy directive governs; ``form-action`` stays ``'none'``: the page
    posts no form, and a form allowance would be checked against every redirect of the issuer's login chain.
    """
    # a policy source has no query part (matching ignores it): the endpoint's scheme, host, port and path
    connect = "'self'" + (f" {token_endpoint.split('?', 1)[0]}" if token_endpoint else "")
    return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
            f"connect-src {connect}; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


WORKSPACE_CSP = workspace_csp()
"""The policy of the page when single sign-on is off (API tokens only)."""


COMPRESSED_SUFFIXES = frozenset({".js", ".mjs", ".css", ".svg", ".txt", ".html"})
"""The bundle's text files, sent gzip-compressed to a client that accepts it (``app.js``: 1.2 MB, 0.3 MB gzipped)."""


class WorkspaceAssets(StaticFiles):
    """The bundle's files: revalidated by their ETag on every use (``Cache-Control: no-cache``: their names carry
    no version, so a new release is never served stale), and text files gzip-compressed for a client whose
    ``Accept-Encoding`` admits gzip (``Vary: Accept-Encoding``). Each file is compressed once per process, when first
    asked for, and kept in memory with its modification time and size (the bundle is a few files, about 2 MB)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory=directory, check_dir=False)
        self._gzipped: dict[tuple[str, int, int], bytes] = {}

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = "no-cache"
        request = Headers(scope=scope)
        if (not isinstance(response, FileResponse) or status_code != 200 or "range" in request
                or Path(full_path).suffix not in COMPRESSED_SUFFIXES
                or "gzip" not in request.get("accept-encoding", "").lower()):
            return response
        key = (str(full_path), stat_result.st_mtime_ns, stat_result.st_size)
        body = self._gzipped.get(key)
        if body is None:
            body = gzip.compress(Path(full_path).read_bytes(), compresslevel=6, mtime=0)
            self._gzipped[key] = body
        headers = {name: value for name, value in response.headers.items() if name.lower() != "content-length"}
        headers.update({"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
        return Response(body, status_code=200, headers=headers, media_type=response.media_type)


def static_dir() -> Path:
    """The folder of the built workspace (package data of ``backbone.api.web``)."""
    return Path(__file__).resolve().parent / "static"


def _index_html() -> bytes:
    path = static_dir() / "index.html"
    if not path.is_file():
        return (b"<!doctype html><meta charset=utf-8><title>backbone</title>"
                b"<p>The workspace bundle is missing from this installation (backbone/api/web/static). "
                b"Build it with <code>npm ci &amp;&amp; npm run build</code> in web/, or reinstall the package.</p>")
    return path.read_bytes()


def install_workspace(app: FastAPI) -> None:
    """Serve the workspace page at ``/`` and its assets under :data:`ASSETS_URL`.

    The page is answered with :func:`workspace_csp` (naming the issuer's token endpoint when the app's
    ``state.oidc_login`` offers single sign-on) and ``Cache-Control: no-cache`` (a new release's page is never
    stale); the assets are revalidated by their ETag and sent gzip-compressed (:class:`WorkspaceAssets`).
    ``/index.html`` redirects to ``./``. The page is also where the issuer sends the browser back
    (``?code=...&state=...``): the page reads and removes them.
    """
    folder = static_dir()
    app.mount(ASSETS_URL, WorkspaceAssets(folder), name="workspace-assets")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def workspace_page(request: Request) -> HTMLResponse:
        login = getattr(request.app.state, "oidc_login", None)
        policy = workspace_csp(login.token_endpoint_or_none() if login is not None else None)
        return HTMLResponse(_index_html(), headers={"Content-Security-Policy": policy, "Cache-Control": "no-cache"})

    @app.get("/index.html", include_in_schema=False)
    def workspace_index() -> Response:
        return RedirectResponse("./", status_code=308)
