"""Load test of the REST API: concurrent clients on loopback against ``backbone serve``.

Starts the server as a subprocess on a free 127.0.0.1 port with a temporary data dir (SQLite by
default, or ``--database-url``), creates a planner token with ``backbone token create``, uploads a
small scenario, then runs two bounded phases with ``--clients`` concurrent asyncio + httpx clients:

* reads: ``GET /v1/scenarios/{id}``, ``GET /v1/scenarios``, ``GET /v1/jobs`` in rotation;
* job submission: ``POST /v1/scenarios/{id}/jobs`` (TE on the scenario); only the submission is
  timed (the jobs run in worker processes; the server is stopped afterwards, killing them).

Each phase stops after ``--reads`` / ``--jobs`` requests or ``--max-seconds``, whichever comes
first. Prints requests per second, p50/p99 latency and the error count per phase.

Usage::

    python benchmarks/bench_api_load.py [--clients 50] [--reads 3000] [--jobs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

SCENARIO = {
    "name": "bench-triangle",
    "sites": [{"id": "A", "name": "A", "lon": 0, "lat": 0, "region": "NA"},
              {"id": "B", "name": "B", "lon": 1, "lat": 1, "region": "NA"},
              {"id": "C", "name": "C", "lon": 2, "lat": 0, "region": "NA"}],
    "links": [{"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 10},
              {"id": "BC", "site_a": "B", "site_b": "C", "capacity_gbps": 10},
              {"id": "AC", "site_a": "A", "site_b": "C", "capacity_gbps": 10}],
    "demands": [{"id": "d1", "src": "A", "dst": "C", "demand_gbps": 15}],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data_dir: Path, database_url: str, workers: int) -> tuple[subprocess.Popen[bytes], str, str, Any]:
    env = {**os.environ, "BACKBONE_DATA_DIR": str(data_dir), "BACKBONE_WORKERS": str(workers)}
    if database_url:
        env["BACKBONE_DATABASE_URL"] = database_url
    out = subprocess.run([sys.executable, "-m", "backbone.api", "token", "create", "--scope", "planner", "--name", "bench"],
                         env=env, capture_output=True, text=True, check=True, timeout=120)
    token = out.stdout.split()[-1]
    port = free_port()
    log = open(data_dir / "server.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen([sys.executable, "-m", "backbone.api", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--log-level", "warning"], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {(data_dir / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url, token, log
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


async def run_phase(client: httpx.AsyncClient, clients: int, total: int, max_seconds: float,
                    make_request: Any) -> dict[str, Any]:
    """``clients`` workers issue requests until ``total`` are done or ``max_seconds`` pass."""
    latencies: list[float] = []
    kinds: dict[str, int] = {}
    errors = 0
    counter = 0
    t_end = time.monotonic() + max_seconds

    async def worker() -> None:
        nonlocal counter, errors
        while counter < total and time.monotonic() < t_end:
            i = counter
            counter += 1
            method, path, body = make_request(i)
            t0 = time.perf_counter()
            try:
                r = await client.request(method, path, json=body)
                what = "" if r.status_code < 400 else f"HTTP {r.status_code}: {r.text[:200]}"
            except httpx.HTTPError as exc:
                what = f"{type(exc).__name__}: {exc}"
            latencies.append(time.perf_counter() - t0)
            if what:
                errors += 1
                kinds[what] = kinds.get(what, 0) + 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    elapsed = time.perf_counter() - t0
    lat_ms = np.array(latencies) * 1000
    return {"requests": len(latencies), "errors": errors, "error_kinds": kinds, "seconds": elapsed, "rps": len(latencies) / elapsed,
            "p50_ms": float(np.percentile(lat_ms, 50)), "p99_ms": float(np.percentile(lat_ms, 99))}


async def bench(url: str, token: str, args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as client:
        r = await client.post("/v1/scenarios", json=SCENARIO)
        r.raise_for_status()
        sid = r.json()["id"]
        reads = [("GET", f"/v1/scenarios/{sid}", None), ("GET", "/v1/scenarios", None),
                 ("GET", "/v1/jobs?limit=20", None)]
        read_stats = await run_phase(client, args.clients, args.reads, args.max_seconds,
                                     lambda i: reads[i % len(reads)])
        job_body = {"kind": "te", "options": {"time_limit_s": 30}}
        job_stats = await run_phase(client, args.clients, args.jobs, args.max_seconds,
                                    lambda i: ("POST", f"/v1/scenarios/{sid}/jobs", job_body))
    return [("reads (GET scenario/list/jobs)", read_stats), ("job submission (POST jobs)", job_stats)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--reads", type=int, default=3000, help="read requests in the read phase")
    p.add_argument("--jobs", type=int, default=200, help="job submissions in the submission phase")
    p.add_argument("--max-seconds", type=float, default=60.0, help="time cap per phase")
    p.add_argument("--workers", type=int, default=2, help="server job worker processes")
    p.add_argument("--database-url", default="", help="SQLAlchemy URL (default: SQLite in a temp dir)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        proc, url, token, log = start_server(Path(tmp), args.database_url, args.workers)
        try:
            results = asyncio.run(bench(url, token, args))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()
            server_log = (Path(tmp) / "server.log").read_text(errors="replace")
    db = "PostgreSQL" if args.database_url.startswith("postgresql") else "SQLite"
    print(f"\nAPI load: {args.clients} concurrent clients, 127.0.0.1, {db}, {args.workers} job workers, "
          f"{os.cpu_count()} CPUs")
    print(f"{'phase':<32}{'requests':>9}{'errors':>8}{'seconds':>9}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}")
    for name, s in results:
        print(f"{name:<32}{s['requests']:>9}{s['errors']:>8}{s['seconds']:>9.1f}{s['rps']:>9.0f}"
              f"{s['p50_ms']:>9.1f}{s['p99_ms']:>9.1f}")
    for name, s in results:
        for what, n in s["error_kinds"].items():
            print(f"  {name}: {n} x {what}")
    if any(s["errors"] for _, s in results):
        print("server log (tail):\n" + "\n".join(server_log.splitlines()[-40:]))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
