"""Importer and export benchmark on the conformance data (../shared/conformance).

For each dataset: how many files load (strict, and with the documented fallback rule), total
sites and links, and wall time per file (median and worst, load + validation). Then the
largest network (TopoHub ``world.json``) through the canonical folder and JSON round trip and
the GeoJSON export.

Usage: ``python benchmarks/bench_importers.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CONFORMANCE = Path(__file__).resolve().parent.parent.parent / "shared" / "conformance"


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.errors import ValidationError
    from backbone.io import load_scenario, save_scenario
    from backbone.io.geojson import save_geojson
    from backbone.io.graphml import load_graphml
    from backbone.io.nodelink import load_node_link

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1, help="best of N per file")
    args = ap.parse_args()
    console = Console(width=132)
    if not CONFORMANCE.exists():
        console.print(f"no conformance data at {CONFORMANCE}")
        raise SystemExit(1)
    datasets: list[tuple[str, list[Path], Callable[..., Any], str]] = [
        ("Topology Zoo GraphML", sorted((CONFORMANCE / "topologyzoo" / "graphml").glob("*.graphml")), load_graphml,
         "drop_uncoordinated"),
        ("TopoHub sndlib", sorted((CONFORMANCE / "topohub" / "sndlib").glob("*.json")), load_node_link,
         "allow_missing_coordinates"),
        ("TopoHub backbone", sorted((CONFORMANCE / "topohub" / "backbone").glob("*.json")), load_node_link,
         "allow_missing_coordinates"),
        ("Teal", sorted((CONFORMANCE / "teal" / "topologies").glob("*.json")), load_node_link,
         "allow_missing_coordinates"),
    ]
    table = Table(title=f"importers (best of {args.repeat} per file)")
    for col in ("dataset", "files", "strict", "fallback", "sites", "links", "median s/file", "max s/file",
                "slowest"):
        table.add_column(col, justify="left" if col in ("dataset", "slowest") else "right")
    for name, files, loader, fallback in datasets:
        strict = relaxed = sites = links = 0
        times: list[tuple[float, str]] = []
        for path in files:
            try:
                net, dt = _timed(lambda p=path, f=loader: f(p), args.repeat)
                strict += 1
            except ValidationError:
                net, dt = _timed(lambda p=path, f=loader, k=fallback: f(p, **{k: True}), args.repeat)
                relaxed += 1
            sites += len(net.sites)
            links += len(net.links)
            times.append((dt, path.name))
        worst = max(times)
        table.add_row(name, str(len(files)), str(strict), str(relaxed), f"{sites:,}", f"{links:,}",
                      f"{statistics.median(t for t, _ in times):.3f}", f"{worst[0]:.3f}", worst[1])
    console.print(table)

    world_path = CONFORMANCE / "topohub" / "backbone" / "world.json"
    world, t_load = _timed(lambda: load_node_link(world_path), args.repeat)
    rows = [("load node-link world.json", t_load)]
    folded, t = _timed(lambda: load_node_link(world_path, collapse_waypoints=True), args.repeat)
    rows.append((f"load with collapse_waypoints ({len(folded.sites):,} sites, {len(folded.links):,} links)", t))
    with tempfile.TemporaryDirectory() as tmp:
        folder, t = _timed(lambda: save_scenario(world, Path(tmp) / "world"), args.repeat)
        rows.append(("save canonical folder", t))
        back, t = _timed(lambda: load_scenario(folder), args.repeat)
        rows.append(("load canonical folder", t))
        doc, t = _timed(lambda: save_scenario(world, Path(tmp) / "world.json"), args.repeat)
        rows.append(("save canonical JSON", t))
        back_json, t = _timed(lambda: load_scenario(doc), args.repeat)
        rows.append(("load canonical JSON", t))
        geojson, t = _timed(lambda: save_geojson(world, Path(tmp) / "world.geojson"), args.repeat)
        rows.append((f"save GeoJSON ({geojson.stat().st_size / 1e6:.1f} MB)", t))
        assert back.equals(world) and back_json.equals(world)
    big = Table(title=f"TopoHub world.json: {len(world.sites):,} sites, {len(world.links):,} links "
                      f"(best of {args.repeat})")
    big.add_column("step")
    big.add_column("seconds", justify="right")
    for step, t in rows:
        big.add_row(step, f"{t:.3f}")
    console.print(big)


if __name__ == "__main__":
    main()
