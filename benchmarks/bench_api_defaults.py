"""Every job kind with its default options ``{}`` on the shipped scenario, through ``backbone serve``.

Starts the server as a subprocess on a free 127.0.0.1 port with a temporary data dir (SQLite, inline workers),
creates a planner token, uploads the shipped scenario, then submits each kind (``--kinds``; default: every kind
``GET /v1/job-kinds`` lists that runs on one scenario) one after the other with ``{}`` options, and waits for each.
Prints, per kind: its final status line, its message, wall seconds from submission to the end, the job's own
running seconds (``started_at`` to ``finished_at``), files listed, and the machine's load average before and after.
Exits 1 when a job does not succeed.

Usage::

    python benchmarks/bench_api_defaults.py [--kinds roadmap,plan] [--workers 2] [--timeout-s 3600] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_api_load import FINAL, create_token, server_env, start_server, stop_server
from benchmarks.report import add_markdown_option, markdown_report

NOT_ON_ONE_SCENARIO = {"import", "diff", "deck"}
"""Kinds that take more than the scenario a job runs on (an upload, two results): not submitted by default."""


def _seconds(job: dict[str, Any]) -> float | None:
    if not job.get("started_at") or not job.get("finished_at"):
        return None
    return (datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["started_at"])).total_seconds()


def run_kind(client: httpx.Client, sid: str, kind: str, timeout_s: float) -> dict[str, Any]:
    """Submit ``kind`` with ``{}`` on scenario ``sid``, wait for it, print a progress line every 30 s."""
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": {}})
    if r.status_code != 202:
        return {"kind": kind, "status_detail": f"HTTP {r.status_code}", "message": r.text[:300], "wall_s": 0.0,
                "job_s": None, "files": 0, "load": (load0, os.getloadavg()[0]), "ok": False}
    jid, last, job = r.json()["id"], 0.0, r.json()
    while job["status"] not in FINAL and time.perf_counter() - t0 < timeout_s:
        time.sleep(2.0)
        job = client.get(f"/v1/jobs/{jid}").json()
        if time.perf_counter() - last >= 30.0:
            last = time.perf_counter()
            p = job["progress"]
            print(f"[{time.perf_counter() - t0:7.1f} s] {kind}: {job['status']} {100 * p['fraction']:5.1f} % "
                  f"{p.get('message', '')}", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    return {"kind": kind, "status_detail": job.get("status_detail") or job["status"],
            "message": (job.get("progress") or {}).get("message", "") if job["status"] == "succeeded"
            else str((job.get("error") or {}).get("detail", job["status"]))[:300],
            "wall_s": wall, "job_s": _seconds(job), "files": len(job.get("files") or []),
            "load": (load0, os.getloadavg()[0]), "ok": job["status"] == "succeeded"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default="", help="comma-separated kinds (default: every kind on one scenario)")
    ap.add_argument("--workers", type=int, default=2, help="server job worker processes")
    ap.add_argument("--timeout-s", type=float, default=3600.0, help="longest wait for one job")
    add_markdown_option(ap)
    args = ap.parse_args()
    from backbone.io import load_scenario, network_to_dict

    with tempfile.TemporaryDirectory(prefix="bench-api-defaults-") as tmp:
        data = Path(tmp)
        env = server_env(data, "", args.workers)
        token = create_token(env)
        proc, url, log = start_server(data, env)
        rows: list[dict[str, Any]] = []
        try:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
                kinds = [k for k in args.kinds.split(",") if k] or [
                    k["kind"] for k in client.get("/v1/job-kinds").json() if k["kind"] not in NOT_ON_ONE_SCENARIO]
                up = client.post("/v1/scenarios", json=network_to_dict(load_scenario()))
                up.raise_for_status()
                for kind in kinds:
                    rows.append(run_kind(client, up.json()["id"], kind, args.timeout_s))
                    print(f"{kind}: {rows[-1]['status_detail']} in {rows[-1]['wall_s']:.1f} s", file=sys.stderr,
                          flush=True)
        finally:
            stop_server(proc, log)
    with markdown_report(args.markdown, "Every job kind with {} on the shipped scenario, through the API",
                         preformatted=False):
        print("kind | status | message | wall s | job s | files | load (1 min, before/after)")
        print("---|---|---|---:|---:|---:|---")
        for row in rows:
            job_s = "-" if row["job_s"] is None else f"{row['job_s']:.1f}"
            print(f"{row['kind']} | {row['status_detail']} | {row['message']} | {row['wall_s']:.1f} | {job_s} | "
                  f"{row['files']} | {row['load'][0]:.1f} / {row['load'][1]:.1f}")
    sys.exit(0 if rows and all(r["ok"] for r in rows) else 1)


if __name__ == "__main__":
    main()
