"""The API's /docs and /redoc draw in a real browser with the network cut off: Swagger UI and ReDoc come from the
package, and their content security policy lets them run (no console error, no blocked load)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from apitest_helpers import LiveServer

from tests.browser import chromium


def _dump_dom(url: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--user-data-dir={tmp / 'profile'}",
            "--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000", "--dump-dom", url]
    return subprocess.run(args, capture_output=True, text=True, timeout=180, check=False)


REDOC_BADGE = "https://cdn.redoc.ly/redoc/logo-mini.svg"
"""ReDoc's "API docs by Redocly" badge, which its build always asks for: the policy blocks it (nothing is loaded)."""


def _problems(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ("Content Security Policy" in ln and REDOC_BADGE not in ln)
            or "net::ERR_" in ln or "Failed to load resource" in ln or "Uncaught" in ln]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")
def test_docs_and_redoc_draw_offline(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "live", f"sqlite:///{tmp_path / 'live.db'}", workers=1)
    server.start()
    try:
        swagger = _dump_dom(f"{server.url}/docs", tmp_path)
        assert swagger.returncode == 0, swagger.stderr[-2000:]
        assert _problems(swagger.stderr) == []
        assert "opblock" in swagger.stdout and "/v1/scenarios" in swagger.stdout  # operations are drawn
        redoc = _dump_dom(f"{server.url}/redoc", tmp_path)
        assert redoc.returncode == 0, redoc.stderr[-2000:]
        assert _problems(redoc.stderr) == []
        assert "/v1/scenarios" in redoc.stdout and "backbone planning API" in redoc.stdout
    finally:
        server.stop()
