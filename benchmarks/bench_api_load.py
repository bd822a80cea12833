"""Load and soak test of the REST API: concurrent clients on loopback against ``backbone serve``.

Starts the server as a subprocess on a free 127.0.0.1 port with a temporary data dir (SQLite by
default, or ``--database-url``), creates a planner token with ``backbone token create``, uploads a
small scenario and the shipped one, then runs bounded phases with ``--clients`` concurrent
asyncio + httpx clients:

* reads: ``GET /v1/scenarios/{id}``, ``GET /v1/scenarios``, ``GET /v1/jobs`` in rotation;
* job submission: ``POST /v1/scenarios/{id}/jobs`` (TE on the small scenario); only the
  submission is timed;
* reads while jobs run: the reads again while ``--busy-jobs`` failure sweeps with default options
  run on the shipped scenario (every job worker busy);
* soak (``--soak-seconds``, default 600; 0 skips it): cycles of mixed reads, scenario updates and
  job submissions, each cycle ended by kill -9 of the server while jobs run, then a restart. After
  every restart it checks that every acknowledged write is still there (lost data), that no process
  of the killed server survived (orphans), and that no job is stuck ``running``.

Each phase stops after ``--reads`` / ``--jobs`` requests or ``--max-seconds``, whichever comes
first. 429/503 answers with ``Retry-After`` (the server's queue limits) are counted as throttled,
not as errors. Prints requests, errors, throttled, req/s and p50/p99 latency per phase, and the
soak's kills, lost writes and orphan processes; exits 1 on any error, lost write or orphan.

Usage::

    python benchmarks/bench_api_load.py [--clients 50] [--reads 3000] [--jobs 200] [--soak-seconds 600]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
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
FINAL = ("succeeded", "failed", "cancelled")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(data_dir: Path, database_url: str, workers: int) -> dict[str, str]:
    env = {**os.environ, "BACKBONE_DATA_DIR": str(data_dir), "BACKBONE_WORKERS": str(workers),
           "BACKBONE_MAX_QUEUED_JOBS_PER_TOKEN": "1000"}
    if database_url:
        env["BACKBONE_DATABASE_URL"] = database_url
    return env


def create_token(env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-m", "backbone.api", "token", "create", "--scope", "planner", "--name",
                          "bench"], env=env, capture_output=True, text=True, check=True, timeout=120)
    return out.stdout.split()[-1]


def start_server(data_dir: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str, Any]:
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
                return proc, url, log
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


def stop_server(proc: subprocess.Popen[bytes], log: Any) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)
    log.close()


def process_tree(pid: int) -> set[int]:
    """Live (not zombie) processes below ``pid``, from /proc (empty elsewhere)."""
    if not os.path.isdir("/proc"):
        return set()
    parent: dict[int, int] = {}
    state: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                    rest = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            parent[int(entry)], state[int(entry)] = int(rest[1]), rest[0]
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for child, ppid in parent.items():
            if ppid == p and child not in found:
                found.add(child)
                todo.append(child)
    return {p for p in found if state.get(p) != "Z"}


def still_alive(pids: set[int]) -> set[int]:
    alive = set()
    for p in pids:
        try:
            with open(f"/proc/{p}/stat", encoding="utf-8", errors="replace") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(p)
        except (OSError, IndexError):
            pass
    return alive


@dataclass
class Tally:
    """Latencies and outcomes of one phase."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    throttled: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def record(self, seconds: float, response: httpx.Response | None, exc: BaseException | None = None) -> None:
        self.latencies.append(seconds)
        if exc is not None:
            what = f"{type(exc).__name__}: {exc}"
        elif response is not None and response.status_code in (429, 503) and "retry-after" in response.headers:
            self.throttled += 1
            return
        elif response is not None and response.status_code >= 400:
            what = f"HTTP {response.status_code}: {response.text[:200]}"
        else:
            return
        self.errors += 1
        self.kinds[what] = self.kinds.get(what, 0) + 1

    def row(self) -> dict[str, Any]:
        lat_ms = np.array(self.latencies or [0.0]) * 1000
        n = len(self.latencies)
        return {"requests": n, "errors": self.errors, "throttled": self.throttled, "seconds": self.seconds,
                "rps": n / self.seconds if self.seconds > 0 else 0.0,
                "p50_ms": float(np.percentile(lat_ms, 50)), "p99_ms": float(np.percentile(lat_ms, 99)),
                "error_kinds": self.kinds}


async def timed(client: httpx.AsyncClient, tally: Tally, method: str, path: str,
                body: Any = None) -> httpx.Response | None:
    t0 = time.perf_counter()
    try:
        r = await client.request(method, path, json=body)
    except httpx.HTTPError as exc:
        tally.record(time.perf_counter() - t0, None, exc)
        return None
    tally.record(time.perf_counter() - t0, r)
    return r


async def run_phase(client: httpx.AsyncClient, clients: int, total: int, max_seconds: float,
                    make_request: Any) -> dict[str, Any]:
    """``clients`` workers issue requests until ``total`` are done or ``max_seconds`` pass."""
    tally = Tally()
    counter = 0
    t_end = time.monotonic() + max_seconds

    async def worker() -> None:
        nonlocal counter
        while counter < total and time.monotonic() < t_end:
            i = counter
            counter += 1
            method, path, body = make_request(i)
            await timed(client, tally, method, path, body)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    tally.seconds = time.perf_counter() - t0
    return tally.row()


async def bench(url: str, token: str, args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    from backbone.io import load_scenario, network_to_dict

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
        # cancel what is still queued from the submission phase, then keep every worker busy
        queued = (await client.get("/v1/jobs", params={"status": "queued", "limit": 1000})).json()
        for j in queued:
            await client.delete(f"/v1/jobs/{j['id']}")
        r = await client.post("/v1/scenarios", json=network_to_dict(load_scenario()))
        r.raise_for_status()
        big = r.json()["id"]
        busy = [(await client.post(f"/v1/scenarios/{big}/jobs", json={"kind": "failures", "options": {}})).json()["id"]
                for _ in range(args.busy_jobs)]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            running = (await client.get("/v1/jobs", params={"status": "running"})).json()
            if len(running) >= min(args.workers, args.busy_jobs):
                break
            await asyncio.sleep(0.5)
        busy_reads = [*reads, ("GET", f"/v1/jobs/{busy[0]}", None), ("GET", f"/v1/scenarios/{big}", None)]
        busy_stats = await run_phase(client, args.clients, args.reads, args.max_seconds,
                                     lambda i: busy_reads[i % len(busy_reads)])
        states = [(await client.get(f"/v1/jobs/{j}")).json()["status"] for j in busy]
        busy_stats["note"] = f"{states.count('running')} sweeps running at the end"
        for j in busy:
            await client.delete(f"/v1/jobs/{j}")
    return [("reads (GET scenario/list/jobs)", read_stats), ("job submission (POST jobs)", job_stats),
            (f"reads while {args.busy_jobs} sweeps run", busy_stats)]


@dataclass
class Ledger:
    """Every write the server acknowledged during the soak, to check after each restart."""

    scenarios: dict[str, int] = field(default_factory=dict)  # id -> acknowledged version
    jobs: set[str] = field(default_factory=set)
    lost: list[str] = field(default_factory=list)
    stuck: int = 0


async def soak_cycle(url: str, token: str, ledger: Ledger, tally: Tally, clients: int, seconds: float) -> None:
    """Mixed traffic for ``seconds``: reads, scenario updates, job submissions."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    headers = {"Authorization": f"Bearer {token}"}
    t_end = time.monotonic() + seconds
    rng = random.Random(len(ledger.jobs) * 7919 + len(ledger.scenarios))
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as client:

        async def worker(n: int) -> None:
            while time.monotonic() < t_end:
                sids = list(ledger.scenarios)
                roll = rng.random()
                if not sids or roll < 0.02:
                    r = await timed(client, tally, "POST", "/v1/scenarios", {**SCENARIO, "name": f"soak-{n}"})
                    if r is not None and r.status_code == 201:
                        ledger.scenarios[r.json()["id"]] = 1
                elif roll < 0.12:
                    sid = rng.choice(sids)
                    r = await timed(client, tally, "PUT", f"/v1/scenarios/{sid}", SCENARIO)
                    if r is not None and r.status_code == 200:
                        ledger.scenarios[sid] = max(ledger.scenarios[sid], int(r.json()["version"]))
                elif roll < 0.17:
                    sid = rng.choice(sids)
                    r = await timed(client, tally, "POST", f"/v1/scenarios/{sid}/jobs",
                                    {"kind": "te", "options": {"time_limit_s": 30}})
                    if r is not None and r.status_code == 202:
                        ledger.jobs.add(r.json()["id"])
                else:
                    path = rng.choice([f"/v1/scenarios/{rng.choice(sids)}", "/v1/scenarios?limit=20",
                                       "/v1/jobs?limit=20"])
                    await timed(client, tally, "GET", path)

        await asyncio.gather(*(worker(n) for n in range(clients)))


async def verify(url: str, token: str, ledger: Ledger) -> None:
    """Every acknowledged scenario version and job is still there; no job is stuck running."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        for sid, version in ledger.scenarios.items():
            r = await client.get(f"/v1/scenarios/{sid}")
            if r.status_code != 200 or int(r.json()["version"]) < version:
                ledger.lost.append(f"scenario {sid} v{version}: {r.status_code}")
        for jid in ledger.jobs:
            r = await client.get(f"/v1/jobs/{jid}")
            if r.status_code != 200:
                ledger.lost.append(f"job {jid}: {r.status_code}")


async def settle(url: str, token: str, ledger: Ledger, timeout_s: float) -> dict[str, int]:
    """Wait for every job to end; the final states (``running`` left over counts as stuck)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        deadline = time.monotonic() + timeout_s
        while True:
            states = [(await client.get(f"/v1/jobs/{j}")).json()["status"] for j in ledger.jobs]
            if all(s in FINAL for s in states) or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
    counts: dict[str, int] = {}
    for s in states:
        counts[s] = counts.get(s, 0) + 1
    ledger.stuck = counts.get("running", 0)
    return counts


def soak(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = server_env(tmp, args.database_url, args.workers)
    token = create_token(env)
    ledger, tally = Ledger(), Tally()
    kills, orphans, restarts_s = 0, 0, []
    t0 = time.monotonic()
    t_end = t0 + args.soak_seconds
    while True:
        t_start = time.monotonic()
        proc, url, log = start_server(tmp, env)
        restarts_s.append(time.monotonic() - t_start)
        asyncio.run(verify(url, token, ledger))
        remaining = t_end - time.monotonic()
        if remaining <= 5:
            break
        cycle = min(remaining, random.uniform(args.soak_cycle_s / 2, args.soak_cycle_s))
        c0 = time.perf_counter()
        asyncio.run(soak_cycle(url, token, ledger, tally, args.clients, cycle))
        tally.seconds += time.perf_counter() - c0
        below = process_tree(proc.pid)
        proc.kill()  # kill -9 while jobs run
        proc.wait(30)
        log.close()
        kills += 1
        k0 = time.monotonic()
        left = still_alive(below)
        while left and time.monotonic() - k0 < 5:
            time.sleep(0.1)
            left = still_alive(below)
        orphans += len(left)
    states = asyncio.run(settle(url, token, ledger, timeout_s=180))
    asyncio.run(verify(url, token, ledger))
    stop_server(proc, log)
    return {"row": tally.row(), "kills": kills, "orphans": orphans, "lost": ledger.lost, "stuck": ledger.stuck,
            "scenarios": len(ledger.scenarios), "versions": sum(ledger.scenarios.values()), "jobs": len(ledger.jobs),
            "states": states, "restart_p50_s": float(np.median(restarts_s)), "seconds": time.monotonic() - t0}


def print_rows(rows: list[tuple[str, dict[str, Any]]]) -> None:
    print(f"{'phase':<36}{'requests':>9}{'errors':>8}{'throttled':>10}{'seconds':>9}{'req/s':>8}"
          f"{'p50 ms':>9}{'p99 ms':>9}")
    for name, s in rows:
        print(f"{name:<36}{s['requests']:>9}{s['errors']:>8}{s['throttled']:>10}{s['seconds']:>9.1f}{s['rps']:>8.0f}"
              f"{s['p50_ms']:>9.1f}{s['p99_ms']:>9.1f}")
    for name, s in rows:
        if s.get("note"):
            print(f"  {name}: {s['note']}")
        for what, n in s["error_kinds"].items():
            print(f"  {name}: {n} x {what}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--reads", type=int, default=3000, help="read requests per read phase")
    p.add_argument("--jobs", type=int, default=200, help="job submissions in the submission phase")
    p.add_argument("--busy-jobs", type=int, default=4, help="failure sweeps running during the busy read phase")
    p.add_argument("--max-seconds", type=float, default=60.0, help="time cap per phase")
    p.add_argument("--workers", type=int, default=2, help="server job worker processes")
    p.add_argument("--soak-seconds", type=float, default=600.0, help="soak duration (0: no soak)")
    p.add_argument("--soak-cycle-s", type=float, default=30.0, help="longest run between two server kills")
    p.add_argument("--no-load", action="store_true", help="run only the soak")
    p.add_argument("--database-url", default="", help="SQLAlchemy URL (default: SQLite in a temp dir)")
    args = p.parse_args()
    failed = False
    db = "PostgreSQL" if args.database_url.startswith("postgresql") else "SQLite"
    if not args.no_load:
        with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
            env = server_env(Path(tmp), args.database_url, args.workers)
            token = create_token(env)
            proc, url, log = start_server(Path(tmp), env)
            try:
                results = asyncio.run(bench(url, token, args))
            finally:
                stop_server(proc, log)
                server_log = (Path(tmp) / "server.log").read_text(errors="replace")
        print(f"\nAPI load: {args.clients} concurrent clients, 127.0.0.1, {db}, {args.workers} job workers, "
              f"{os.cpu_count()} CPUs")
        print_rows(results)
        if any(s["errors"] for _, s in results):
            print("server log (tail):\n" + "\n".join(server_log.splitlines()[-40:]))
            failed = True
    if args.soak_seconds > 0:
        with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
            s = soak(Path(tmp), args)
        print(f"\nAPI soak: {s['seconds']:.0f} s, {args.clients} clients, kill -9 of the server every "
              f"<= {args.soak_cycle_s:g} s while jobs run, {db}")
        print_rows([("soak (reads, PUTs, job submissions)", s["row"])])
        print(f"server kills {s['kills']}, restart p50 {s['restart_p50_s']:.1f} s; acknowledged: {s['scenarios']} "
              f"scenarios ({s['versions']} versions), {s['jobs']} jobs; final job states {s['states']}")
        print(f"lost writes {len(s['lost'])}, processes alive 5 s after a kill {s['orphans']}, "
              f"jobs stuck running {s['stuck']}")
        for what in s["lost"][:20]:
            print(f"  lost: {what}")
        failed = failed or bool(s["row"]["errors"] or s["lost"] or s["orphans"] or s["stuck"])
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
