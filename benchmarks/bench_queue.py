"""The PostgreSQL job queue at 1 and 2 servers and 1, 2 and 4 workers, on loopback.

For each of the six layouts it creates a private schema in the given PostgreSQL database and a fresh data folder,
starts ``backbone serve`` processes with ``BACKBONE_JOB_EXECUTION=queue`` and ``backbone worker --concurrency 1``
processes on 127.0.0.1, uploads a three-site scenario, and submits ``--jobs`` te jobs alternately through the
servers. While they run, one client reads ``GET /v1/jobs/{id}`` in rotation over the jobs and the servers (at most
``--reads`` reads). Printed per layout:

* throughput: jobs / (last job's ``finished_at`` - first job's ``created_at``), jobs per second;
* start latency: ``started_at`` - ``created_at`` of each job (submit to running), p50 and p99, from the
  database's own timestamps (the server writes the first, the claiming worker the second);
* read latency: p50 and p99 of the ``GET /v1/jobs/{id}`` requests, client-side, while the jobs run.

Every job must succeed; the run exits 1 otherwise. The schema and every process are removed at the end of each
layout. Without a PostgreSQL URL (``--database-url``, or ``BACKBONE_TEST_POSTGRES_URL``) it prints why and exits 0.

Usage::

    python benchmarks/bench_queue.py --database-url postgresql+psycopg://user@127.0.0.1:5432/db [--jobs 12]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from bench_api_load import (
    SCENARIO,
    create_token,
    process_tree,
    server_env,
    start_server,
    still_alive,
    stop_server,
)

FINAL = ("succeeded", "failed", "cancelled")
LAYOUTS = [(servers, workers) for servers in (1, 2) for workers in (1, 2, 4)]


def private_schema(url: str) -> tuple[str, Any]:
    """A URL whose connections use a new schema, and a function dropping the schema."""
    from sqlalchemy import create_engine, text

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"

    def drop() -> None:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()

    return f"{url}{sep}options=-csearch_path%3D{schema}", drop


def start_worker(data_dir: Path, env: dict[str, str], index: int) -> subprocess.Popen[bytes]:
    with open(data_dir / f"worker-{index}.log", "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "backbone.api", "worker", "--concurrency", "1", "--drain-s",
                                 "5"], env=env, stdout=log, stderr=log)


def _ms(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) * 1000.0 if values else float("nan")


def _at(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def run_layout(url: str, n_servers: int, n_workers: int, args: argparse.Namespace) -> dict[str, Any]:
    """One layout, from a fresh schema to every process gone; returns its figures."""
    db_url, drop = private_schema(url)
    tmp = Path(tempfile.mkdtemp(prefix="bench-queue-"))
    env = server_env(tmp, db_url, 1)
    env.update(BACKBONE_JOB_EXECUTION="queue", BACKBONE_JOB_HEARTBEAT_S="0.5")
    servers: list[tuple[subprocess.Popen[bytes], str, Any]] = []
    workers: list[subprocess.Popen[bytes]] = []
    tree: set[int] = set()
    try:
        servers = [start_server(tmp, env) for _ in range(n_servers)]
        urls = [u for _, u, _ in servers]
        head = {"Authorization": f"Bearer {create_token(env)}"}
        workers = [start_worker(tmp, env, i) for i in range(n_workers)]
        with httpx.Client(timeout=30) as http:
            sid = http.post(f"{urls[0]}/v1/scenarios", json=SCENARIO, headers=head).json()["id"]
            # the workers are up once one of them has run a warm-up job (imports, first database connection)
            warm = [http.post(f"{urls[0]}/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {}},
                              headers=head).json()["id"] for _ in range(n_workers)]
            while any(http.get(f"{urls[0]}/v1/jobs/{j}", headers=head).json()["status"] not in FINAL for j in warm):
                time.sleep(0.2)
            jobs = []
            for i in range(args.jobs):
                r = http.post(f"{urls[i % n_servers]}/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {}},
                              headers=head)
                r.raise_for_status()
                jobs.append(r.json()["id"])
            reads: list[float] = []
            final: dict[str, dict[str, Any]] = {}
            deadline = time.monotonic() + args.max_seconds
            i = 0
            while len(final) < len(jobs) and time.monotonic() < deadline:
                job_id = jobs[i % len(jobs)]
                base = urls[i % n_servers]
                i += 1
                if job_id in final:
                    continue
                t0 = time.perf_counter()
                r = http.get(f"{base}/v1/jobs/{job_id}", headers=head)
                if len(reads) < args.reads:
                    reads.append(time.perf_counter() - t0)
                else:
                    time.sleep(0.05)  # the timed reads are done: only wait for the jobs
                r.raise_for_status()
                if r.json()["status"] in FINAL:
                    final[job_id] = r.json()
            for pid in [p.pid for p, _, _ in servers] + [w.pid for w in workers]:
                tree |= process_tree(pid) | {pid}
        bad = [j for j in jobs if final.get(j, {}).get("status") != "succeeded"]
        starts = [_at(j["started_at"]) - _at(j["created_at"]) for j in final.values() if j.get("started_at")]
        span = max(_at(j["finished_at"]) for j in final.values()) - min(_at(j["created_at"]) for j in final.values())
        return {"servers": n_servers, "workers": n_workers, "jobs": len(jobs), "not_succeeded": len(bad),
                "jobs_per_s": len(final) / span if span > 0 else float("nan"),
                "start_p50_ms": _ms(starts, 50), "start_p99_ms": _ms(starts, 99), "reads": len(reads),
                "read_p50_ms": _ms(reads, 50), "read_p99_ms": _ms(reads, 99)}
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(30)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait(10)
        for proc, _, log in servers:
            stop_server(proc, log)
        drop()
        left = still_alive(tree)
        if left:
            print(f"processes left behind: {sorted(left)}", file=sys.stderr)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("BACKBONE_TEST_POSTGRES_URL", ""),
                   help="PostgreSQL SQLAlchemy URL (default: $BACKBONE_TEST_POSTGRES_URL)")
    p.add_argument("--jobs", type=int, default=12, help="te jobs per layout (after one warm-up job per worker)")
    p.add_argument("--reads", type=int, default=500, help="GET /v1/jobs/{id} reads timed per layout, at most")
    p.add_argument("--max-seconds", type=float, default=180.0, help="time cap on one layout's jobs")
    args = p.parse_args()
    if not args.database_url.startswith("postgresql"):
        print("bench_queue: no PostgreSQL URL given (--database-url or BACKBONE_TEST_POSTGRES_URL); skipped.")
        return
    print("| servers | workers | jobs | not succeeded | jobs/s | start p50 ms | start p99 ms | reads | read p50 ms | read p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for n_servers, n_workers in LAYOUTS:
        r = run_layout(args.database_url, n_servers, n_workers, args)
        failed += r["not_succeeded"]
        print(f"| {r['servers']} | {r['workers']} | {r['jobs']} | {r['not_succeeded']} | {r['jobs_per_s']:.2f} | {r['start_p50_ms']:.0f} "
              f"| {r['start_p99_ms']:.0f} | {r['reads']} | {r['read_p50_ms']:.1f} | {r['read_p99_ms']:.1f} |",
              flush=True)
    if failed:
        raise SystemExit(f"{failed} job(s) did not succeed")


if __name__ == "__main__":
    main()
