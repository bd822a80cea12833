"""Failure sweeps of API jobs on a Dask cluster started by hand: ``dask scheduler`` plus two ``dask worker``
processes (one thread each) on 127.0.0.1, against the same sweep on the job's own processes.

Each row runs the ``failures`` task as an API job's worker runs it (:func:`backbone.solver.tasks.service.run_task`
with the options :func:`backbone.api.input_policy.server_job_options` gives it): without a server scheduler
(``BACKBONE_DASK_SCHEDULER`` empty: serially and on a local pool of ``--workers`` processes, the process cap an API
job has) and with the scheduler's address (engine dask). Every row's records are compared with the serial row's
(wall-clock fields aside). The cluster's processes are bounded (``--timeout-s``) and killed at the end; nothing
listens beyond loopback.

Usage: ``python benchmarks/bench_dask_api.py [SCENARIO] [--kind srlg] [--workers 2] [--timeout-s 900]``
(default: the shipped scenario's default failure sweep, single SRLGs).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dask_cli() -> list[str]:
    exe = Path(sys.executable).with_name("dask")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dask"]


@contextmanager
def hand_started_cluster(workers: int, timeout_s: float) -> Iterator[str]:
    """``dask scheduler`` and ``workers`` ``dask worker`` processes on 127.0.0.1, each in its own session and
    killed (with their children) on exit; yields the scheduler's address once every worker has joined."""
    from distributed import Client

    addr = f"tcp://127.0.0.1:{_free_port()}"
    common = {"start_new_session": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
              "env": {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}}
    procs = [subprocess.Popen(["timeout", str(int(timeout_s)), *_dask_cli(), "scheduler", "--host", "127.0.0.1",
                               "--port", addr.rsplit(":", 1)[1], "--no-dashboard"], **common)]  # type: ignore[call-overload]
    try:
        procs += [subprocess.Popen(["timeout", str(int(timeout_s)), *_dask_cli(), "worker", addr, "--host", "127.0.0.1",
                                    "--nthreads", "1", "--nworkers", "1", "--no-dashboard"], **common)  # type: ignore[call-overload]
                  for _ in range(workers)]
        with Client(addr, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=120)
        yield addr
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def _run(net: Any, options: dict[str, Any], scheduler: str) -> tuple[float, Any]:
    from backbone.api.input_policy import server_job_options
    from backbone.solver.tasks.service import run_task

    job_options = server_job_options("failures", options, scheduler)
    t0 = time.perf_counter()
    result = run_task("failures", net, job_options, None)
    return time.perf_counter() - t0, result


def _figures(result: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in result.sweep.scenarios]


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.io import load_scenario
    from backbone.solver.core.processes import set_process_limit

    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default=None)
    ap.add_argument("--kind", default=None, help="failure kind (default: the failures task's own, srlg)")
    ap.add_argument("--workers", type=int, default=2, help="local pool processes and dask workers")
    ap.add_argument("--timeout-s", type=float, default=900.0, help="lifetime bound of the cluster's processes")
    args = ap.parse_args()
    console = Console(width=120)
    net = load_scenario(args.scenario)
    base: dict[str, Any] = {"kind": args.kind} if args.kind else {}
    set_process_limit(args.workers)  # an API job's process cap (BACKBONE_JOB_PROCESSES)
    console.print(f"{net.name}: {len(net.sites)} sites, {len(net.links)} links, {len(net.demands)} demands; "
                  f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    rows = []
    t_serial, serial = _run(net, {**base, "engine": "serial"}, "")
    rows.append(("job process, serial", t_serial, serial, True))
    t_local, local = _run(net, base, "")
    rows.append((f"job process, local pool ({args.workers})", t_local, local, _figures(local) == _figures(serial)))
    t0 = time.perf_counter()
    with hand_started_cluster(args.workers, args.timeout_s) as addr:
        t_start = time.perf_counter() - t0
        t_dask, on_dask = _run(net, base, addr)
        t_again, again = _run(net, base, addr)  # the workers' imports and kernels are warm now
    rows.append((f"dask scheduler + {args.workers} workers, first job", t_dask, on_dask,
                 _figures(on_dask) == _figures(serial)))
    rows.append((f"dask scheduler + {args.workers} workers, second job", t_again, again,
                 _figures(again) == _figures(serial)))
    n = serial.summary.scenarios_run
    table = Table(title=f"failures ({serial.summary.options['kind']}, {n} scenarios), as an API job runs it; "
                        f"cluster start-up {t_start:.1f} s (not in the rows)", title_justify="left")
    for col in ("where", "ran on", "wall s", "scenarios/s", "same records as serial"):
        table.add_column(col, justify="left" if col in ("where", "ran on") else "right")
    for name, wall, res, same in rows:
        ran = res.summary.ran_on
        where = f"{ran.engine}, {ran.workers} workers" if ran else "-"
        table.add_row(name, where, f"{wall:.1f}", f"{n / wall:.2f}", "yes" if same else "NO")
    console.print(table)
    if not all(r[3] for r in rows):
        raise SystemExit("records differ between engines")


if __name__ == "__main__":
    main()
