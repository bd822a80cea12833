"""First meaningful paint of the browser workspace: headless Chromium (Playwright, Debian's ``/usr/bin/chromium``,
software WebGL) against a live ``backbone serve`` on loopback with the shipped scenario.

Starts the server as a subprocess on a free 127.0.0.1 port with a temporary data dir and SQLite (``db upgrade``,
``db seed``, a team and a planner token), then ``--reloads`` times each:

* *sign-in form*: a fresh browser context (empty cache, no token) opens ``/``; the time of the page's
  ``signin-drawn`` mark;
* *deep link, empty cache*: a fresh context whose tab already holds the token (as after signing in) opens
  ``#/scenario/<shipped id>``; the times of the ``scenario-received`` mark (its content and version list
  answered), the ``tables-drawn`` mark (the scenario's tables in the page: its first
  meaningful paint) and the ``map-drawn`` mark (the map's data drawn, MapLibre idle);
* *deep link, reload*: the same tab reloaded (the browser's cache warm, assets revalidated).

Every time is the mark's ``startTime``: milliseconds from the navigation's start, read with ``page.evaluate``.
Bytes are the resource timing entries' ``transferSize`` (on the wire, headers included) and ``decodedBodySize``
(after decompression) of the page and every request it made until the map was drawn. Prints median, p90, min and
max, the load average before and after, and per request (the empty-cache deep link) its median duration and size.

Usage: ``python benchmarks/bench_workspace.py [--reloads 10] [--markdown docs/benchmarks/workspace.md]``.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import add_markdown_option, load_average, markdown_report

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
MARK = "(name) => { const e = performance.getEntriesByName(name); return e.length ? e[e.length - 1].startTime : null; }"
RESOURCES = """() => {
    const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
    return entries.map((e) => ({ name: e.name, start: e.startTime, end: e.responseEnd, duration: e.duration,
                                 transfer: e.transferSize,
                                 encoded: e.encodedBodySize, decoded: e.decodedBodySize }));
}"""


class Server:
    """``backbone serve`` in a subprocess on a free loopback port, on a temporary data dir and SQLite."""

    def __init__(self, folder: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.env = dict(os.environ, BACKBONE_DATA_DIR=str(folder / "data"),
                        BACKBONE_DATABASE_URL=f"sqlite:///{folder / 'bench.db'}", BACKBONE_WORKERS="1")
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def cli(self, *args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "backbone.api", *args], env=self.env, capture_output=True,
                             text=True, timeout=300, check=True)
        return out.stdout

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "backbone.api", "serve", "--host", "127.0.0.1", "--port",
                                      str(self.port), "--log-level", "warning"], env=self.env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start within 120 s")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _wait_mark(page: Any, name: str) -> float:
    page.wait_for_function(f"() => ({MARK})({name!r}) !== null", timeout=120_000)
    return float(page.evaluate(MARK, name))


def _open_deep_link(context: Any, url: str) -> tuple[Any, dict[str, float], list[dict[str, Any]]]:
    page = context.new_page()
    page.goto(url)
    marks = {"tables": _wait_mark(page, "tables-drawn"), "map": _wait_mark(page, "map-drawn"),
             "content": _wait_mark(page, "scenario-received")}
    return page, marks, page.evaluate(RESOURCES)


def measure(reloads: int) -> tuple[dict[str, list[float]], dict[str, list[dict[str, Any]]]]:
    """Run the page loads; return the times (ms) per measure and the resource entries per kind of load."""
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {k: [] for k in ("sign-in form", "deep link, empty cache: content received",
                                                     "deep link, empty cache: tables drawn",
                                                     "deep link, empty cache: map drawn", "reload: tables drawn",
                                                     "reload: map drawn")}
    resources: dict[str, list[dict[str, Any]]] = {"sign-in form": [], "deep link, empty cache": [], "reload": []}
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        server.cli("db", "upgrade")
        server.cli("db", "seed")
        server.cli("team", "create", "Network Planning")
        token = server.cli("token", "create", "--scope", "planner", "--team", "Network Planning", "--name",
                           "bench").split()[-1]
        server.start()
        try:
            headers = {"Authorization": f"Bearer {token}"}
            shipped = next(s["id"] for s in httpx.get(f"{server.url}/v1/scenarios", headers=headers, timeout=60).json()
                           if s["read_only"])
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for _ in range(reloads + 1):  # the first round warms the server (its document worker) and is dropped
                    context = browser.new_context(viewport={"width": 1280, "height": 800})
                    page = context.new_page()
                    page.goto(f"{server.url}/")
                    signin = _wait_mark(page, "signin-drawn")
                    signin_resources = page.evaluate(RESOURCES)
                    context.close()
                    context = browser.new_context(viewport={"width": 1280, "height": 800})
                    context.add_init_script(f"sessionStorage.setItem('backbone.token', {token!r})")
                    page, cold, cold_resources = _open_deep_link(context, f"{server.url}/#/scenario/{shipped}")
                    page.reload()
                    warm = {"tables": _wait_mark(page, "tables-drawn"), "map": _wait_mark(page, "map-drawn")}
                    warm_resources = page.evaluate(RESOURCES)
                    context.close()
                    if _ == 0:
                        continue
                    times["sign-in form"].append(signin)
                    times["deep link, empty cache: content received"].append(cold["content"])
                    times["deep link, empty cache: tables drawn"].append(cold["tables"])
                    times["deep link, empty cache: map drawn"].append(cold["map"])
                    times["reload: tables drawn"].append(warm["tables"])
                    times["reload: map drawn"].append(warm["map"])
                    resources["sign-in form"].append({"entries": signin_resources})
                    resources["deep link, empty cache"].append({"entries": cold_resources})
                    resources["reload"].append({"entries": warm_resources})
                browser.close()
        finally:
            server.stop()
    return times, resources


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def _short(url: str) -> str:
    path = url.split("://", 1)[-1].split("/", 1)[-1]
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "v1" and parts[1] == "scenarios":  # v1/scenarios/<id>/... -> {id}
        parts[2] = "{id}"
    return "/" + "/".join(parts).split("#", 1)[0]


def report(times: dict[str, list[float]], resources: dict[str, list[dict[str, Any]]], load_before: str) -> None:
    """Print the times and bytes as tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=130)
    table = Table(title=f"workspace page loads on loopback, shipped scenario ({len(times['sign-in form'])} of each)")
    for col in ("measure (from navigation start)", "median ms", "p90 ms", "min ms", "max ms"):
        table.add_column(col, justify="left" if col.startswith("measure") else "right")
    for name, values in times.items():
        table.add_row(name, f"{statistics.median(values):,.0f}", f"{_p90(values):,.0f}", f"{min(values):,.0f}",
                      f"{max(values):,.0f}")
    bytes_table = Table(title="bytes per page load (median over the loads)")
    for col in ("load", "requests", "transferred kB", "decoded kB"):
        bytes_table.add_column(col, justify="left" if col == "load" else "right")
    for name, runs in resources.items():
        count = statistics.median(len(r["entries"]) for r in runs)
        transfer = statistics.median(sum(e["transfer"] for e in r["entries"]) for r in runs) / 1000
        decoded = statistics.median(sum(e["decoded"] for e in r["entries"]) for r in runs) / 1000
        bytes_table.add_row(name, f"{count:.0f}", f"{transfer:,.0f}", f"{decoded:,.0f}")
    detail = Table(title="deep link, empty cache: each request (median; started and answered: ms from navigation "
                           "start)")
    for col in ("request", "started ms", "answered ms", "duration ms", "transferred kB", "decoded kB"):
        detail.add_column(col, justify="left" if col == "request" else "right")
    per: dict[str, list[dict[str, Any]]] = {}
    for run in resources["deep link, empty cache"]:
        for e in run["entries"]:
            per.setdefault(_short(e["name"]), []).append(e)
    for name, entries in per.items():
        detail.add_row(name, f"{statistics.median(e['start'] for e in entries):,.0f}",
                       f"{statistics.median(e['end'] for e in entries):,.0f}",
                       f"{statistics.median(e['duration'] for e in entries):,.0f}",
                       f"{statistics.median(e['transfer'] for e in entries) / 1000:,.1f}",
                       f"{statistics.median(e['decoded'] for e in entries) / 1000:,.1f}")
    table.caption = f"{load_before} before; {load_average()} after"
    for t in (table, bytes_table, detail):
        console.print(t)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reloads", type=int, default=10, help="page loads of each kind measured (default 10)")
    add_markdown_option(ap)
    args = ap.parse_args(argv)
    load_before = load_average()
    times, resources = measure(args.reloads)
    with markdown_report(args.markdown, "Workspace first meaningful paint"):
        report(times, resources, load_before)


if __name__ == "__main__":
    main()
