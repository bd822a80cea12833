"""Serve the workspace: ``/`` is its page, ``/ui/*`` its bundled script, style sheet, map worker and licences.

Every URL the page uses is relative (``ui/app.js``, ``v1/scenarios``), so the workspace works unchanged behind a
reverse proxy that mounts the app under a path prefix (``/backbone/``). The page's content security policy
(:data:`WORKSPACE_CSP`) admits scripts, styles, the map's worker and requests from this origin only.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/ui"
"""Where the bundle (``static/``) is served."""

WORKSPACE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
                 "connect-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; "
                 "frame-ancestors 'none'")
"""The workspace page's policy: script, style sheet, map worker and API calls from this origin only; no inline
script or style, nothing from any other origin. MapLibre's worker is a module script served beside the bundle
(``worker-src 'self'``, no ``blob:``); ``img-src data: blob:`` lets the map read its own canvas images."""


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

    The page is answered with :data:`WORKSPACE_CSP` and ``Cache-Control: no-cache`` (a new release's page is
    never stale); the assets are revalidated by their ETag. ``/index.html`` redirects to ``./``.
    """
    folder = static_dir()
    app.mount(ASSETS_URL, StaticFiles(directory=folder, check_dir=False), name="workspace-assets")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def workspace_page() -> HTMLResponse:
        return HTMLResponse(_index_html(), headers={"Content-Security-Policy": WORKSPACE_CSP,
                                                    "Cache-Control": "no-cache"})

    @app.get("/index.html", include_in_schema=False)
    def workspace_index() -> Response:
        return RedirectResponse("./", status_code=308)
