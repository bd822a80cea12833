"""Helpers shared by the API tests (kept out of conftest so test modules can import them)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest


def postgres_url() -> str:
    """The test PostgreSQL URL, or skip (fail when BACKBONE_REQUIRE_POSTGRES=1)."""
    url = os.environ.get("BACKBONE_TEST_POSTGRES_URL", "")
    if not url:
        if os.environ.get("BACKBONE_REQUIRE_POSTGRES") == "1":
            pytest.fail("BACKBONE_REQUIRE_POSTGRES=1 but BACKBONE_TEST_POSTGRES_URL is not set")
        pytest.skip("PostgreSQL not configured (set BACKBONE_TEST_POSTGRES_URL)")
    return url


def postgres_schema_url(url: str) -> tuple[str, Callable[[], None]]:
    """A URL whose connections use a new, private schema (``search_path``), and a function dropping it."""
    import uuid

    from sqlalchemy import create_engine, text

    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"
    private = f"{url}{sep}options=-csearch_path%3D{schema}"

    def drop() -> None:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()

    return private, drop


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


class LiveServer:
    """``backbone serve`` in a subprocess on a free 127.0.0.1 port, on a given data dir and database."""

    def __init__(self, data_dir: Any, database_url: str, workers: int = 2,
                 extra_env: dict[str, str] | None = None) -> None:
        self.data_dir, self.database_url, self.workers = data_dir, database_url, workers
        self.extra_env = dict(extra_env or {})
        self.proc: Any = None
        self.port = 0
        self.log_path = data_dir / "server.log"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(BACKBONE_DATA_DIR=str(self.data_dir), BACKBONE_DATABASE_URL=self.database_url,
                   BACKBONE_WORKERS=str(self.workers), **self.extra_env)
        return env

    def cli(self, *args: str) -> Any:
        """Run ``backbone <args>`` (the same entry point as the console script) on this server's storage."""
        import subprocess
        import sys

        return subprocess.run([sys.executable, "-m", "backbone.api", *args], env=self.env(), capture_output=True, text=True,
                              timeout=120, check=False)

    def token(self, scope: str) -> str:
        """``backbone token create --scope S``; the token is the last word of the output."""
        out = self.cli("token", "create", "--scope", scope, "--name", f"live-{scope}")
        assert out.returncode == 0, out.stderr
        return str(out.stdout.split()[-1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 90.0) -> None:
        import socket
        import subprocess
        import sys

        import httpx

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "a")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "backbone.api", "serve", "--host", "127.0.0.1", "--port", str(self.port),
             "--log-level", "warning"], env=self.env(), stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log_path.read_text()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"server did not come up:\n{self.log_path.read_text()}")

    def kill(self) -> None:
        """SIGKILL: the server dies without any clean-up (a crash)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)

    def stop(self) -> int:
        """SIGTERM: a graceful shutdown; returns the exit code (uvicorn re-raises the signal after a clean
        shutdown, so -SIGTERM is a clean exit too)."""
        import signal

        if self.proc is None or self.proc.poll() is not None:
            return int(self.proc.returncode) if self.proc is not None else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return int(self.proc.wait(60))
        except Exception:
            self.kill()
            raise


def process_table() -> dict[int, tuple[int, str]]:
    """``pid -> (parent pid, state)`` of every process, from /proc (Linux)."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
        table[int(entry)] = (int(rest[1]), rest[0])
    return table


def descendants(pid: int) -> set[int]:
    """Every live (not zombie) process below ``pid``."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for p, (ppid, _state) in table.items():
        children.setdefault(ppid, []).append(p)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return {p for p in found if table[p][1] != "Z"}


def still_running(pids: set[int]) -> set[int]:
    """Those of ``pids`` that exist and are not zombies."""
    table = process_table()
    return {p for p in pids if p in table and table[p][1] != "Z"}
