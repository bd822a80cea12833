"""The API's own documentation pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served with every asset from
the installed package (``fastapi-offline`` ships Swagger UI's and ReDoc's builds), so they draw offline and their
content security policy names this origin only (:data:`backbone.api.guards.DOCS_CSP`)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
"""Where Swagger UI's and ReDoc's scripts, style sheet and icon are served."""


def assets_dir() -> Path:
    """The folder of the bundled Swagger UI and ReDoc builds (package data of ``fastapi_offline``)."""
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"


def install_docs_pages(app: FastAPI) -> None:
    """Serve ``/docs``, ``/docs/oauth2-redirect`` and ``/redoc`` from packaged assets (the app is created with
    ``docs_url=None, redoc_url=None``)."""
    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"
    title = app.title

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=openapi_url, title=f"{title} - Swagger UI",
                                   oauth2_redirect_url="/docs/oauth2-redirect",
                                   swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
                                   swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
                                   swagger_ui_parameters={"validatorUrl": None})

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=openapi_url, title=f"{title} - ReDoc",
                              redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
                              redoc_favicon_url=f"{ASSETS_URL}/favicon.png", with_google_fonts=False)
