"""SNDlib design benchmark: cost, lower bound and gap per network and model after a time limit.

Usage::

    python benchmarks/bench_sndlib.py --time-limit 300            # the issue's figure (long)
    python benchmarks/bench_sndlib.py --time-limit 20 --networks polska,atlanta --csv out.csv
    python benchmarks/bench_sndlib.py --time-limit 60 --networks all --models sndlib   # every instance

Every design is re-priced independently (:func:`backbone.solver.checks.design.check_design`: its
module, setup and pre-installed costs plus its cheapest routing) and the ``objective`` column says
whether the reported cost is the design's (``ok``) or not (``MISMATCH``, with the recomputed cost);
the command exits 1 when any objective or check fails. ``--models sndlib`` solves, per network, the
models SNDlib itself defines for it (its ``models/`` folder).

Networks are read from ``../shared/conformance/sndlib/native`` (``--root`` to change). The
``sndlib`` column says whether SNDlib itself defines the model for that network (a model file
exists); the others are solved on the same data for comparison. SNDlib's published best known
solutions are not part of the shared data, so no comparison with them is printed.
"""

from __future__ import annotations

import argparse
import csv
import logging
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "conformance" / "sndlib" / "native"
NETWORKS = ("dfn-gwin", "polska", "atlanta", "france", "nobel-germany", "abilene", "germany50")
MODELS = ("U-U-M-N-C-A-N-N", "U-U-E-N-C-A-N-N", "D-B-M-N-C-A-N-N", "D-D-M-N-C-A-N-N", "U-U-M-N-C-A-N-U")


def run(root: Path, networks: list[str], models: list[str], time_limit: float, verify: bool) -> list[dict[str, object]]:
    """Solve every (network, model) pair; one result row each."""
    from backbone.errors import BackboneError
    from backbone.io.sndlib import parse_model_code, parse_sndlib
    from backbone.solver.design import solve_design
    from backbone.solver.design.sndlib import build_instance

    rows: list[dict[str, object]] = []
    for net in networks:
        path = root / net / f"{net}.txt"
        if not path.exists():
            print(f"skip {net}: {path} not found", file=sys.stderr)
            continue
        snd = parse_sndlib(path)
        net_models = models
        if models == ["sndlib"]:  # the models SNDlib defines for this network that the solver supports
            net_models = sorted(p.stem for p in (root / net / "models").glob("*.txt")
                                if not parse_model_code(p.stem).unsupported())
        for code in net_models:
            model = parse_model_code(code)
            row: dict[str, object] = {"network": net, "model": code,
                                      "sndlib": (root / net / "models" / f"{code}.txt").exists()}
            t0 = time.perf_counter()
            try:
                inst = build_instance(snd, model)
                sol = solve_design(inst, time_limit_s=time_limit)
            except BackboneError as exc:
                row.update(status=f"error: {type(exc).__name__}", seconds=time.perf_counter() - t0)
                rows.append(row)
                print(f"{net} {code}: {exc}", file=sys.stderr)
                continue
            row.update(states=len(inst.states), cols=sol.stats.get("cols", 0), status=sol.status, cost=sol.cost,
                       lower_bound=sol.lower_bound, gap=sol.gap, lp_bound=sol.lp_bound,
                       heuristic=sol.heuristic_cost, seconds=time.perf_counter() - t0)
            if sol.counts is not None:
                from backbone.solver.checks.design import check_design, configurations_from_counts

                check = check_design(inst, configurations_from_counts(inst, sol.counts), time_limit_s=time_limit,
                                     reported_cost=sol.cost, reported_optimal=sol.status == "optimal")
                row["recomputed"] = check.total_cost
                row["objective"] = "ok" if not any(v.check == "objective" for v in check.report.violations) \
                    else "MISMATCH"
                if verify:
                    row["verified"] = check.ok
                row["notes"] = "; ".join(sol.notes)
            rows.append(row)
            print(_line(row), file=sys.stderr, flush=True)
    return rows


def _num(x: object, digits: int = 0) -> str:
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(float(x)):
        return "-"
    return f"{float(x):,.{digits}f}"


def _line(r: dict[str, object]) -> str:
    gap = r.get("gap")
    gap_s = f"{100 * float(gap):.2f}" if isinstance(gap, float) else "-"
    return (f"| {r['network']:<13} | {r['model']} | {'yes' if r['sndlib'] else 'no ':<3} | {_num(r.get('states')):>6} | "
            f"{_num(r.get('cols')):>9} | {_num(r.get('cost'), 1):>16} | {_num(r.get('lower_bound'), 1):>16} | "
            f"{gap_s:>7} | {_num(r.get('heuristic'), 1):>16} | {r.get('status', '')!s:<10} | "
            f"{_num(r.get('seconds'), 1):>6} | {_num(r.get('recomputed'), 1):>16} | {r.get('objective', '-')!s:<9} |")


HEADER = ("| network       | model           | sndlib | states |      cols |             cost |      lower bound | "
          "gap %   |        heuristic | status     | sec    |       recomputed | objective |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--time-limit", type=float, default=300.0, help="seconds per instance (default 300)")
    p.add_argument("--networks", default=",".join(NETWORKS), help="comma-separated, or 'all' (every network in --root)")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated codes, or 'sndlib' (each network's "
                                                             "own SNDlib models)")
    p.add_argument("--root", type=Path, default=DEFAULT_DATA)
    p.add_argument("--verify", action="store_true", help="run the independent checker on each design")
    p.add_argument("--csv", type=Path, help="also write the rows as CSV")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    networks = sorted(p.name for p in a.root.iterdir() if (p / f"{p.name}.txt").exists()) \
        if a.networks == "all" else a.networks.split(",")
    rows = run(a.root, networks, a.models.split(","), a.time_limit, a.verify)
    print(f"SNDlib design, time limit {a.time_limit:g} s per instance (LP + heuristic + MIP share it)")
    print(HEADER)
    print("|" + "|".join("-" * (len(c)) for c in HEADER.split("|")[1:-1]) + "|")
    for r in rows:
        print(_line(r))
    if a.csv:
        keys = sorted({k for r in rows for k in r})
        with a.csv.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    bad = [r for r in rows if r.get("objective") == "MISMATCH" or r.get("verified") is False]
    for r in bad:
        print(f"FAILED {r['network']} {r['model']}: objective {r.get('objective')}, verified {r.get('verified')}",
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
