"""Helpers shared by the API tests (kept out of conftest so test modules can import them)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest

from api.store import Store, downgrade_database


def postgres_url() -> str:
    """The test PostgreSQL URL, or skip (fail when BACKBONE_REQUIRE_POSTGRES=1)."""
    url = os.environ.get("BACKBONE_TEST_POSTGRES_URL", "")
    if not url:
        if os.environ.get("BACKBONE_REQUIRE_POSTGRES") == "1":
            pytest.fail("BACKBONE_REQUIRE_POSTGRES=1 but BACKBONE_TEST_POSTGRES_URL is not set")
        pytest.skip("PostgreSQL not configured (set BACKBONE_TEST_POSTGRES_URL)")
    return url


def reset_postgres(url: str) -> None:
    """Drop every table of the test database (tests share one database, one at a time)."""
    store = Store(url)
    try:
        downgrade_database(store.engine, "base")
    except Exception:
        from sqlalchemy import text

        with store.engine.begin() as conn:
            for t in ("audit_log", "jobs", "scenario_versions", "scenarios", "tokens", "alembic_version"):
                conn.execute(text(f"DROP TABLE IF EXISTS {t} CASCADE"))
    store.dispose()


def auth(token: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **headers}


def wait_for(fetch: Callable[[], dict[str, Any]], done: Callable[[dict[str, Any]], bool],
             timeout_s: float = 60.0, interval_s: float = 0.05) -> dict[str, Any]:
    """Poll ``fetch()`` until ``done(result)``; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = fetch()
        if done(got):
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting; last state {got}")
        time.sleep(interval_s)


FINAL = ("succeeded", "failed", "cancelled")
