"""Cost of read-only tables: the same reads on a Network's frozen table and on a plain copy; prints a table.

Usage::

    python -m benchmarks.bench_frozen [SCENARIO] [--repeat 5]

Each row times one read the solver and the maps do (a column, its numpy array, a scalar ``.loc``/``.at``,
a row, a list of rows, a boolean filter) on the links table of the scenario (default: the shipped one),
as a plain ``DataFrame`` and as the Network holds it (:class:`backbone.frozen.FrozenFrame`), and reports
the best of ``repeat`` runs per call in CPU microseconds (``time.process_time``, so other work on a shared
machine inflates the figures less than wall clock would). The last rows time building the model (loading the
scenario from its files, and ``Network.from_tables`` from its tables: each freezes every table), the
transformations that rebuild a Network and the re-derivation of ``with_capacity``.
"""

from __future__ import annotations

import argparse
import time
import timeit
from pathlib import Path

from benchmarks.report import add_markdown_option, markdown_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default=None, help="scenario (default: shipped global scenario)")
    parser.add_argument("--repeat", type=int, default=5)
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    with markdown_report(args.markdown, 'FrozenFrame against a plain DataFrame', preformatted=False):
        _run(args)
    return 0


def _run(args: argparse.Namespace) -> None:

    import pandas as pd

    from backbone.io import load_scenario
    from backbone.model import Network

    net = load_scenario(Path(args.scenario) if args.scenario else None)
    frozen = net.links
    plain = pd.DataFrame(frozen)
    link = frozen.index[len(frozen) // 2]
    some = list(frozen.index[::7])
    reads = [
        ("column", "t['capacity_gbps']"),
        ("column to_numpy", "t['capacity_gbps'].to_numpy()"),
        ("scalar .loc", "t.loc[link, 'capacity_gbps']"),
        ("scalar .at", "t.at[link, 'capacity_gbps']"),
        ("row .loc", "t.loc[link]"),
        ("rows .loc[list]", "t.loc[some]"),
        ("boolean filter", "t[t['kind'] == 'submarine']"),
        ("copy()", "t.copy()"),
    ]
    print(f"links table of {net.name!r}: {len(frozen)} rows; best of {args.repeat}, CPU microseconds per call\n")
    print("read | plain DataFrame | FrozenFrame | ratio")
    print("---|---|---|---")
    for name, stmt in reads:
        times = []
        for table in (plain, frozen):
            env = {"t": table, "link": link, "some": some}
            number = 200
            times.append(min(timeit.repeat(stmt, globals=env, number=number, repeat=args.repeat,
                                           timer=time.process_time)) / number * 1e6)
        print(f"{name} | {times[0]:.1f} | {times[1]:.1f} | {times[1] / times[0]:.2f}")
    print("\nmodel build or transformation | CPU microseconds per call")
    print("---|---")
    first = [frozen.index[0]]
    tables = {name: pd.DataFrame(table) for name, table in net.tables().items()}
    env = {"net": net, "first": first, "load_scenario": load_scenario, "path": args.scenario, "tables": tables,
           "Network": Network}
    for name, stmt in [("load_scenario (files to model)", "load_scenario(path)"),
                       ("Network.from_tables (tables to model)", "Network.from_tables(tables, net.name, net.meta)"),
                       ("fail_links (one link)", "net.fail_links(first)"),
                       ("scale_demand", "net.scale_demand(1.1)"),
                       ("with_capacity (one link, re-derives)", "net.with_capacity({first[0]: 100.0})"),
                       ("overrides('links')", "net.overrides('links')")]:
        t = min(timeit.repeat(stmt, globals=env, number=10, repeat=args.repeat, timer=time.process_time)) / 10 * 1e6
        print(f"{name} | {t:,.0f}")


if __name__ == "__main__":
    raise SystemExit(main())
