"""Headless Chromium for the browser tests: Debian's ``chromium`` (nothing is downloaded at test time)."""

from __future__ import annotations

import os
import shutil

import pytest


def chromium() -> str:
    """The Chromium binary on PATH; skips the test when there is none (fails under BACKBONE_REQUIRE_CHROMIUM=1)."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("BACKBONE_REQUIRE_CHROMIUM") == "1":
        pytest.fail("BACKBONE_REQUIRE_CHROMIUM=1 but no chromium binary on PATH")
    pytest.skip("headless chromium not installed (apt-get install chromium); set BACKBONE_REQUIRE_CHROMIUM=1 to fail")
