"""Upload benchmark: what a large scenario costs the API process, end to end over loopback.

Starts ``backbone serve`` on 127.0.0.1 with a fresh data dir, uploads a synthetic scenario as canonical JSON
(``POST /v1/scenarios``), reads it back (``GET /v1/scenarios/{id}``), and samples the API server process's
resident memory (``/proc/<pid>/status``: ``VmRSS``) every 50 ms. Parsing runs in a bounded document worker
(:mod:`backbone.api.isolation`), a separate process, so its memory is not the API process's.

Printed per size: body MB, upload seconds, GET seconds and MB, and the API process's RSS before, at its peak
during the upload and GET, and after (MB).

Usage::

    python benchmarks/bench_api_upload.py --sizes 2000:6000:50000 5000:15000:200000
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np


def synthetic_document(sites: int, links: int, demands: int, seed: int = 7) -> dict[str, Any]:
    """A valid canonical scenario: sites on a lon/lat grid in NA, links between near neighbours, random demands."""
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(sites)))
    site_rows = [{"id": f"s{i}", "name": f"site {i}", "lon": -120 + 50 * (i % side) / side,
                  "lat": 25 + 25 * (i // side) / side, "region": "NA"} for i in range(sites)]
    a = rng.integers(0, sites, links)
    b = (a + 1 + rng.integers(0, min(side, sites - 1), links)) % sites
    link_rows = [{"id": f"l{k}", "site_a": f"s{i}", "site_b": f"s{j}", "capacity_gbps": 400.0}
                 for k, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)) if i != j]
    src = rng.integers(0, sites, demands)
    dst = (src + 1 + rng.integers(0, sites - 1, demands)) % sites
    demand_rows = [{"id": f"d{k}", "src": f"s{i}", "dst": f"s{j}", "demand_gbps": 1.0}
                   for k, (i, j) in enumerate(zip(src.tolist(), dst.tolist(), strict=True))]
    return {"name": f"synthetic-{sites}", "sites": site_rows, "links": link_rows, "demands": demand_rows}


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class RssSampler:
    """The peak RSS of a process, sampled every ``interval_s`` on a thread."""

    def __init__(self, pid: int, interval_s: float = 0.05) -> None:
        self.pid, self.interval_s, self.peak_mb = pid, interval_s, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, _rss_mb(self.pid))
            time.sleep(self.interval_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["2000:6000:50000", "5000:15000:200000"],
                        help="sites:links:demands per run")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    env = {**os.environ, "BACKBONE_DATA_DIR": str(tmp / "data"), "BACKBONE_MAX_BODY_BYTES": str(512 * 1024 * 1024),
           "BACKBONE_MAX_DOCUMENT_BYTES": str(1024 * 1024 * 1024), "BACKBONE_BODY_TIMEOUT_S": "600"}
    backbone = [str(Path(sys.executable).parent / "backbone")]  # the CLI installed beside this interpreter
    token = json.loads(subprocess.run([*backbone, "token", "create", "--scope", "planner", "--json"], env=env,
                                      check=True, capture_output=True, text=True).stdout)["token"]
    port = _free_port()
    server = subprocess.Popen([*backbone, "serve", "--port", str(port), "--log-level", "warning"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        with httpx.Client(timeout=900) as client:
            for _ in range(200):
                try:
                    if client.get(f"{base}/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            rows = []
            for size in args.sizes:
                n_sites, n_links, n_demands = (int(x) for x in size.split(":"))
                body = json.dumps(synthetic_document(n_sites, n_links, n_demands)).encode()
                before = _rss_mb(server.pid)
                with RssSampler(server.pid) as sampler:
                    t0 = time.perf_counter()
                    r = client.post(f"{base}/v1/scenarios", content=body, headers=headers)
                    upload_s = time.perf_counter() - t0
                    if r.status_code != 201:
                        raise SystemExit(f"upload of {size} answered {r.status_code}: {r.text[:300]}")
                    t0 = time.perf_counter()
                    got = client.get(f"{base}/v1/scenarios/{r.json()['id']}", headers=headers)
                    get_s = time.perf_counter() - t0
                time.sleep(1.0)
                rows.append((size, len(body) / 1e6, upload_s, get_s, len(got.content) / 1e6, before, sampler.peak_mb,
                             _rss_mb(server.pid)))
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{'sites:links:demands':>22} {'body MB':>8} {'upload s':>9} {'GET s':>7} {'GET MB':>7} "
          f"{'RSS before':>11} {'RSS peak':>9} {'RSS after':>10}")
    for size, mb, up, get_s, get_mb, before, peak, after in rows:
        print(f"{size:>22} {mb:8.1f} {up:9.2f} {get_s:7.2f} {get_mb:7.1f} {before:11.0f} {peak:9.0f} {after:10.0f}")


if __name__ == "__main__":
    main()
