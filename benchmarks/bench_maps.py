"""Time to render each map format for the shipped scenario (or a given one); prints a table.

Usage::

    python -m benchmarks.bench_maps [SCENARIO] [--repeat 3] [--size 1920x1080]

Each row renders the map ``repeat`` times after one warm-up (which pays the imports and the
per-view basemap projection, reported separately as "first") and reports the median, plus the
output size. A utilisation result with made-up but deterministic values (a seeded random
number per link) is drawn, so the colour path is exercised; no solver is involved.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.report import add_markdown_option, markdown_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default=None, help="scenario (default: shipped global scenario)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", default="1920x1080")
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    with markdown_report(args.markdown, 'Map rendering', preformatted=True):
        _run(args)
    return 0


def _run(args: argparse.Namespace) -> None:

    t0 = time.perf_counter()
    from backbone.io import load_scenario
    from backbone.maps import render_map_bytes

    net = load_scenario(Path(args.scenario) if args.scenario else None)
    load_s = time.perf_counter() - t0
    rng = np.random.default_rng(7)
    util = dict(zip(net.links.index, rng.beta(2.0, 3.0, len(net.links)) * 1.2, strict=True))
    result = {"map": {"link_values": {"utilisation": util}}}
    cases = [
        ("png world", "png", {"center_lon": 0.0}),
        ("png pacific", "png", {"center_lon": 150.0}),
        ("png region emea", "png", {"region": "emea"}),
        ("png 3840x2160", "png", {"center_lon": 0.0, "size": "3840x2160"}),
        ("svg world", "svg", {}),
        ("pdf world", "pdf", {}),
        ("html (2 views)", "html", {}),
        ("geojson", "geojson", {}),
        ("kml", "kml", {}),
    ]
    print(f"scenario {net.name}: {len(net.sites)} sites, {len(net.links)} links "
          f"({int((net.links['kind'] == 'submarine').sum())} submarine), loaded in {load_s:.2f} s")
    print(f"{'map':<18} {'first s':>8} {'median s':>9} {'min s':>7} {'size kB':>9}")
    print("-" * 55)
    for label, fmt, kw in cases:
        kw = {"size": args.size, **kw}
        t = time.perf_counter()
        data = render_map_bytes(net, fmt, result, **kw)
        first = time.perf_counter() - t
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            data = render_map_bytes(net, fmt, result, **kw)
            times.append(time.perf_counter() - t)
        print(f"{label:<18} {first:>8.2f} {statistics.median(times):>9.2f} {min(times):>7.2f} {len(data) / 1024:>9,.0f}")


if __name__ == "__main__":
    sys.exit(main())
