"""Ingest benchmark: TopoHub's world backbone as a node-link file with all-pairs gravity demand.

The file is ``world.json`` (3,815 nodes, 5,189 edges) with ``graph.demands`` set to gravity demand
among its ``N`` highest-degree cities (as :mod:`benchmarks.bench_world_te` builds it; 1,246 cities
give 1.55 M demands, a ~60 MB file). Each size is loaded by :func:`backbone.io.nodelink.load_node_link`
in a fresh subprocess, so ``peak GB`` is that load's own peak RSS (the interpreter and imports
included; ``baseline GB`` is the same subprocess before loading).

Usage::

    python -m benchmarks.bench_ingest --sizes 300 600 1246
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORLD = ROOT.parent / "shared" / "conformance" / "topohub" / "backbone" / "world.json"


def write_world_with_demand(n_cities: int, out: Path) -> int:
    """Write ``world.json`` with ``graph.demands`` (gravity among ``n_cities``) to ``out``; returns the count."""
    from benchmarks.bench_world_te import world_with_demand

    net = world_with_demand(n_cities)
    doc = json.loads(WORLD.read_text(encoding="utf-8"))
    d = net.demands
    table: dict[str, dict[str, float]] = {}
    for (src, dst), v in zip(zip(d["src"].astype(str), d["dst"].astype(str), strict=True),
                             d["demand_gbps"].to_numpy().tolist(), strict=True):
        table.setdefault(src, {})[dst] = v
    doc.setdefault("graph", {})["demands"] = table
    out.write_text(json.dumps(doc), encoding="utf-8")
    return len(d)


def peak_rss_gb() -> float:
    """This process's peak resident set (``VmHWM``: reset at exec, unlike ``ru_maxrss``, which a child
    inherits from the parent that forked it), GB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # not Linux


def load_one(path: Path) -> dict[str, Any]:
    """Load ``path`` in this process; the table row."""
    from backbone.io.nodelink import load_node_link

    base = peak_rss_gb()
    t0 = time.perf_counter()
    net = load_node_link(path)
    seconds = time.perf_counter() - t0
    return {"sites": len(net.sites), "links": len(net.links), "demands": len(net.demands), "seconds": seconds,
            "baseline_gb": base, "peak_gb": peak_rss_gb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 600, 1246])
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(load_one(Path(args.one))))
        return
    if not WORLD.exists():
        print(f"skipped: {WORLD} is absent")
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"world_dem_{n}.json"
            write_world_with_demand(n, path)
            p = subprocess.run([sys.executable, "-m", "benchmarks.bench_ingest", "--one", str(path)],
                               capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                               timeout=900)
            if p.returncode != 0:
                print(p.stderr, file=sys.stderr)
                raise SystemExit(p.returncode)
            row = json.loads(p.stdout.strip().splitlines()[-1])
            row.update(cities=n, file_mb=path.stat().st_size / 1e6)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            path.unlink()
    print("\nload_node_link of the world backbone with gravity demand among the N highest-degree cities")
    head = f"{'cities':>6} {'sites':>5} {'links':>5} {'demands':>9} {'file MB':>7} {'seconds':>8} {'baseline GB':>11} {'peak GB':>7}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['cities']:>6} {r['sites']:>5} {r['links']:>5} {r['demands']:>9,} {r['file_mb']:>7.1f} "
              f"{r['seconds']:>8.2f} {r['baseline_gb']:>11.2f} {r['peak_gb']:>7.2f}")


if __name__ == "__main__":
    main()
