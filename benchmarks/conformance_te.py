"""TE on real topologies from ../shared/conformance (skipped with a message when absent).

* **B4** (Teal: 12 sites, 19 links) with its **36 real traffic matrices**: per matrix, min-MLU with
  k=4 paths and the edge bound (exact multicommodity flow), ECMP's MLU for comparison, and
  max-throughput (what fits at MLU <= 1). Every result goes through the independent checker.
* **Teal UsCarrier** (158 sites) and **Kdl** (754 sites): no real matrices ship for them, so
  demand is a gravity model by node degree (``vol_ij ~ deg_i deg_j``) scaled to 10 % of total
  capacity, over all pairs (UsCarrier) or 3,000 seeded random pairs (Kdl; no edge bound there: with
  ~740 distinct sources its source-aggregated edge LP has over a million columns).
  Teal files carry no coordinates: sites are placed by the importer's documented layout and every
  link has latency 1 ms.
* **Topology Zoo**: every GraphML with coordinates on every node (85 networks), the same
  gravity demand over all pairs; min-MLU path (k=4) vs edge bound, ECMP, checker.

Usage: ``python benchmarks/conformance_te.py [--zoo-limit N] [--skip-kdl]``; prints tables.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance"


def gravity_demands(net: Any, share_of_capacity: float = 0.10, n_pairs: int | None = None,
                    seed: int = 0) -> pd.DataFrame:
    """All-pairs (or ``n_pairs`` random pairs) demand ``~ deg_i * deg_j``, total = share x capacity."""
    deg = pd.concat([net.links["site_a"], net.links["site_b"]]).value_counts().reindex(net.sites.index,
                                                                                     fill_value=0)
    ids = net.sites.index.to_numpy()
    n = len(ids)
    if n_pairs is None:
        i, j = np.where(~np.eye(n, dtype=bool))
    else:
        rng = np.random.default_rng(seed)
        i = rng.integers(0, n, n_pairs * 2)
        j = rng.integers(0, n, n_pairs * 2)
        keep = i != j
        pairs = pd.DataFrame({"i": i[keep], "j": j[keep]}).drop_duplicates().head(n_pairs)
        i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    mass = deg.to_numpy(float)[i] * deg.to_numpy(float)[j]
    total = share_of_capacity * float(net.links["capacity_gbps"].sum())
    vol = total * mass / mass.sum()
    return pd.DataFrame({"src": ids[i], "dst": ids[j], "demand_gbps": vol, "traffic_class": "bulk",
                         "slo_rtt_ms": np.nan}, index=pd.Index([f"{a}-{b}" for a, b in zip(ids[i], ids[j],
                                                                                               strict=True)],
                                                                 name="id"))


def run_case(net: Any, name: str, edge: bool = True, throughput: bool = False) -> dict[str, Any]:
    """min-MLU path k=4 (+ edge bound, ECMP, optional max-throughput), all checked."""
    from backbone.solver.checks.te import check_te
    from backbone.solver.te import TEOptions, solve_te

    row: dict[str, Any] = {"network": name, "sites": len(net.sites), "links": len(net.links),
                           "demands": len(net.demands)}
    bad = 0
    t0 = time.perf_counter()
    path = solve_te(net, TEOptions(objective="min-mlu", formulation="path", k_paths=4, time_limit_s=1800))
    row["path_s"] = time.perf_counter() - t0
    bad += not check_te(net, path).ok
    row["mlu_path"] = path.summary.mlu
    if edge:
        t0 = time.perf_counter()
        e = solve_te(net, TEOptions(objective="min-mlu", formulation="edge", time_limit_s=1800))
        row["edge_s"] = time.perf_counter() - t0
        bad += not check_te(net, e).ok
        row["mlu_edge"] = e.summary.mlu
        row["gap"] = (row["mlu_path"] - row["mlu_edge"]) / max(row["mlu_edge"], 1e-12)
    ecmp = solve_te(net, TEOptions(objective="ecmp"))
    bad += not check_te(net, ecmp).ok
    row["mlu_ecmp"] = ecmp.summary.mlu
    if throughput:
        t = solve_te(net, TEOptions(objective="max-throughput", formulation="path", k_paths=4, time_limit_s=1800))
        bad += not check_te(net, t).ok
        row["carried_pct"] = 100 * t.summary.carried_gbps / max(t.summary.demand_gbps, 1e-12)
    row["checker_failures"] = bad
    return row


def _print(rows: list[dict[str, Any]], cols: list[tuple[str, str, str]]) -> None:
    print(" | ".join(h for h, _, _ in cols))
    print("|".join("---" for _ in cols))
    for r in rows:
        print(" | ".join("-" if r.get(k) is None else format(r[k], f) for _, k, f in cols))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo-limit", type=int, default=None, help="only the N largest Topology Zoo networks")
    ap.add_argument("--skip-kdl", action="store_true")
    args = ap.parse_args()
    if not CONFORMANCE.exists():
        print(f"conformance data not present at {CONFORMANCE}; nothing to do", file=sys.stderr)
        return 0
    from backbone.errors import ValidationError
    from backbone.io.graphml import load_graphml
    from backbone.io.nodelink import load_node_link, load_traffic_matrix_csv

    teal = CONFORMANCE / "teal"
    # ---------------------------------------------------------------- B4 with real matrices
    b4 = load_node_link(teal / "topologies" / "B4.json", allow_missing_coordinates=True)
    rows = []
    tms = sorted((teal / "traffic-matrices").glob("B4.json_real_*.csv"),
                 key=lambda p: int(p.name.split("_")[2]))
    for tm in tms:
        net = b4.copy_with(demands=load_traffic_matrix_csv(tm, b4))
        r = run_case(net, tm.name.split(".json_")[1].replace("_1.0.tm.csv", ""), throughput=True)
        rows.append(r)
        print(f"  B4 {r['network']}: mlu {r['mlu_path']:.4f}", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    print(f"\nB4 (Teal: {len(b4.sites)} sites, {len(b4.links)} links), {len(tms)} real traffic matrices; "
          "min-MLU k=4 vs edge bound vs ECMP; max-throughput at MLU <= 1\n")
    stats = pd.DataFrame({
        "min": df.min(numeric_only=True), "median": df.median(numeric_only=True), "max": df.max(numeric_only=True)})
    show = ["demands", "mlu_path", "mlu_edge", "gap", "mlu_ecmp", "carried_pct", "path_s", "edge_s"]
    print("figure | min | median | max")
    print("---|---|---|---")
    for k in show:
        print(f"{k} | {stats.loc[k, 'min']:.6g} | {stats.loc[k, 'median']:.6g} | {stats.loc[k, 'max']:.6g}")
    ratio = df["mlu_ecmp"] / df["mlu_path"]
    print(f"ECMP MLU / TE MLU: median {ratio.median():.3f}, max {ratio.max():.3f}; "
          f"path k=4 equals the edge bound (gap < 1e-6) on {(df['gap'] < 1e-6).sum()} of {len(df)} matrices; "
          f"checker failures: {int(df['checker_failures'].sum())}")

    # ---------------------------------------------------------------- Teal UsCarrier / Kdl, gravity demand
    rows = []
    cases = [("UsCarrier", None), ("Kdl", 3000)]
    for name, n_pairs in cases:
        if name == "Kdl" and args.skip_kdl:
            continue
        net = load_node_link(teal / "topologies" / f"{name}.json", allow_missing_coordinates=True)
        net = net.copy_with(demands=gravity_demands(net, n_pairs=n_pairs))
        print(f"  {name}: {len(net.sites)} sites, {len(net.demands)} demands", file=sys.stderr, flush=True)
        rows.append(run_case(net, name, edge=name != "Kdl"))  # Kdl edge LP: ~740 sources x 2L arcs, skipped
    print("\nTeal topologies, gravity demand by degree (10 % of capacity); min-MLU k=4 vs edge bound vs ECMP\n")
    cols = [("network", "network", "s"), ("sites", "sites", "d"), ("links", "links", "d"),
            ("demands", "demands", ",d"), ("MLU path k=4", "mlu_path", ".4f"), ("MLU edge", "mlu_edge", ".4f"),
            ("gap", "gap", ".2%"), ("MLU ECMP", "mlu_ecmp", ".4f"), ("path s", "path_s", ".1f"),
            ("edge s", "edge_s", ".1f"), ("checker failures", "checker_failures", "d")]
    _print(rows, cols)

    # ---------------------------------------------------------------- Topology Zoo
    rows = []
    nets = []
    for f in sorted((CONFORMANCE / "topologyzoo" / "graphml").glob("*.graphml")):
        try:
            nets.append((f.stem, load_graphml(f)))
        except ValidationError:  # nodes without coordinates: out of scope here
            continue
    nets.sort(key=lambda x: -len(x[1].sites))
    if args.zoo_limit:
        nets = nets[: args.zoo_limit]
    for name, net in nets:
        if len(net.sites) < 3 or len(net.links) == 0:
            continue
        rows.append(run_case(net.copy_with(demands=gravity_demands(net)), name))
    df = pd.DataFrame(rows)
    print(f"\nTopology Zoo, {len(df)} networks with coordinates, gravity all-pairs demand; min-MLU k=4 vs edge "
          "bound vs ECMP (10 largest shown)\n")
    _print(rows[:10], cols)
    ratio = df["mlu_ecmp"] / df["mlu_path"]
    print(f"\nall {len(df)}: gap path k=4 vs edge bound median {df['gap'].median():.3%}, max {df['gap'].max():.3%}; "
          f"k=4 optimal (gap < 1e-6) on {(df['gap'] < 1e-6).sum()}; ECMP / TE MLU median {ratio.median():.2f}, "
          f"max {ratio.max():.2f}; total time path {df['path_s'].sum():.1f} s, edge {df['edge_s'].sum():.1f} s; "
          f"checker failures {int(df['checker_failures'].sum())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
