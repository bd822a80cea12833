"""TE scaling benchmark: min-MLU over k=4 candidate paths on synthetic backbones, all-pairs demand.

For each size (one subprocess per size, so peak memory is that size's alone) it prints:

* ours: candidate paths, model build, solve, result extraction, total (``solve_te``), peak RSS;
* bare: a fresh HiGHS reading the *same* LP from an MPS file and solving it with the same
  method -- the solver's time alone, no Python around it;
* naive: research-style code (``benchmarks/naive_te.py``: networkx k-shortest paths, PuLP row by
  row, CBC), up to ``--naive-max`` sites with a time cap per size (``> cap`` when exceeded).

Targets: total at 200 sites <= 1.5x bare and >= 40x faster than naive; 400 sites within 60 s and
2 GB.

Usage: ``python benchmarks/bench_te.py [--sizes 50 100 200 400] [--naive-max 200] [--naive-cap 600]``
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


def run_one(n: int, k: int, bare: bool) -> dict[str, Any]:
    """Ours (+ bare solver) at one size, in this process."""
    from backbone.solver.te import TEOptions, solve_te
    from benchmarks.synthetic import synthetic_backbone

    net = synthetic_backbone(n)
    r = solve_te(net, TEOptions(objective="min-mlu", formulation="path", k_paths=k, time_limit_s=3600))
    s = r.summary
    out: dict[str, Any] = {
        "sites": n, "links": len(net.links), "demands": len(net.demands), "path_vars": s.path_variables,
        "rows": s.lp.rows, "cols": s.lp.cols, "nonzeros": s.lp.nonzeros,
        "mlu": s.mlu, "status": s.status, "paths_s": s.paths_seconds, "build_s": s.build_seconds,
        "solve_s": s.solve_seconds, "extract_s": s.extract_seconds, "total_s": s.total_seconds,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if bare:
        out.update(bare_solve(net, k))
    return out


def bare_solve(net: Any, k: int) -> dict[str, Any]:
    """Write the same LP as MPS, then time a fresh HiGHS ``run()`` on it (same method options)."""
    import highspy

    from backbone.solver.backends._stdio import stdout_to_stderr
    from backbone.solver.backends.highs import method_options
    from backbone.solver.te.formulations import build_formulation
    from backbone.solver.te.objectives import stage_program

    form = build_formulation(net, "path", k_paths=k)
    lp = stage_program(form.lp, "min-mlu", {"mlu": 1.0}, {"unmet": (0.0, 0.0)},
                       {b: form.lp.bounds(b) for b in form.lp.variables})
    opts = method_options("auto", lp.n_cols)
    with tempfile.TemporaryDirectory() as tmp, stdout_to_stderr():
        path = str(Path(tmp) / "te.mps")
        a = lp.A.tocsc()
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        model = highspy.HighsLp()
        model.num_col_, model.num_row_ = lp.n_cols, lp.n_rows
        model.col_cost_, model.col_lower_, model.col_upper_ = lp.c, lp.col_lower, lp.col_upper
        model.row_lower_, model.row_upper_ = lp.row_lower, lp.row_upper
        model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        model.a_matrix_.start_, model.a_matrix_.index_, model.a_matrix_.value_ = a.indptr, a.indices, a.data
        h.passModel(model)
        h.writeModel(path)
        fresh = highspy.Highs()
        fresh.setOptionValue("output_flag", False)
        for key, value in opts.items():
            fresh.setOptionValue(key, value)
        fresh.readModel(path)
        t0, c0 = time.perf_counter(), time.process_time()
        fresh.run()
        seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
        obj = fresh.getInfo().objective_function_value
    return {"bare_s": seconds, "bare_cpu_s": cpu_seconds, "bare_mlu": obj}


def child(args: list[str], timeout: float) -> dict[str, Any] | None:
    """Run ``args`` as a Python subprocess printing one JSON line; None on timeout."""
    try:
        p = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"{args} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400])
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--naive-max", type=int, default=200, help="largest size for the naive reference")
    ap.add_argument("--naive-cap", type=float, default=600.0, help="time cap per naive run, seconds")
    ap.add_argument("--no-bare", action="store_true", help="skip the bare-solver timing")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.k, not args.no_bare)))
        return

    rows = []
    for n in args.sizes:
        print(f"... {n} sites", file=sys.stderr, flush=True)
        ours = child(["benchmarks/bench_te.py", "--one", str(n), "--k", str(args.k)]
                     + (["--no-bare"] if args.no_bare else []), timeout=7200)
        assert ours is not None
        naive = None
        capped = False
        if n <= args.naive_max:
            naive = child(["benchmarks/naive_te.py", str(n), str(args.k)], timeout=args.naive_cap)
            capped = naive is None
        rows.append((ours, naive, capped))

    print(f"\nTE min-MLU, path formulation, k={args.k}, all-pairs demand, synthetic backbones "
          f"(HiGHS; {os.cpu_count()} cores, machine shared)\n")
    head = ("sites", "links", "demands", "path vars", "LP rows x cols", "paths s", "build s", "solve s",
            "extract s", "total s", "bare s", "total/bare", "peak MB", "MLU")
    print(" | ".join(head))
    print("|".join("---" for _ in head))
    for o, _, _ in rows:
        bare = o.get("bare_s")
        print(" | ".join([
            str(o["sites"]), str(o["links"]), f"{o['demands']:,}", f"{o['path_vars']:,}",
            f"{o['rows']:,} x {o['cols']:,}", f"{o['paths_s']:.2f}", f"{o['build_s']:.2f}", f"{o['solve_s']:.2f}",
            f"{o['extract_s']:.2f}", f"{o['total_s']:.2f}", "-" if bare is None else f"{bare:.2f}",
            "-" if bare is None else f"{o['total_s'] / bare:.2f}x", f"{o['peak_mb']:,.0f}", f"{o['mlu']:.6f}"]))
    print(f"\nnaive reference (networkx shortest_simple_paths + PuLP row by row + CBC), cap {args.naive_cap:.0f} s\n")
    head2 = ("sites", "naive paths s", "naive build s", "naive solve s", "naive total s", "naive MLU",
             "ours total s", "speed-up")
    print(" | ".join(head2))
    print("|".join("---" for _ in head2))
    for o, nv, capped in rows:
        if nv is None and not capped:
            continue
        if capped:
            print(" | ".join([str(o["sites"]), "-", "-", "-", f"> {args.naive_cap:.0f}", "-", f"{o['total_s']:.2f}",
                              f"> {args.naive_cap / o['total_s']:.0f}x"]))
            continue
        assert nv is not None
        print(" | ".join([str(o["sites"]), f"{nv['paths_seconds']:.2f}", f"{nv['build_seconds']:.2f}",
                          f"{nv['solve_seconds']:.2f}", f"{nv['total_seconds']:.2f}",
                          "-" if nv["mlu"] is None else f"{nv['mlu']:.6f}", f"{o['total_s']:.2f}",
                          f"{nv['total_seconds'] / o['total_s']:.0f}x"]))


if __name__ == "__main__":
    main()
