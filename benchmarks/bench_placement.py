"""Placement scaling: time and MIP gap as metros and sites grow (synthetic backbones), plus the
shipped global scenario when present.

Synthetic instances: :func:`benchmarks.synthetic.synthetic_backbone` (sites on real metro anchors,
~30 % datacenters with GPUs installed at 20-60 % of their maximum, power for 1.2 kW/GPU today)
plus ``n_metros`` demand metros scattered around the sites, with inference demand totalling
``DEMAND_FRACTION`` of the datacenters' maximum GPUs (so building and power are needed), and the
synthetic scenario's own site-to-site demands routed jointly.

Columns: ``solve_s`` is the solver time (LP relaxation + rounded plan + MIP, each with the time
limit); ``total_s`` adds paths, model building, tables and diagnosis; ``check_s`` is the
independent checker; ``gap_%`` is the MIP gap of the reported plan to the best proven bound.

Usage::

    python benchmarks/bench_placement.py            # synthetic series + shipped scenario
    python benchmarks/bench_placement.py --quick    # the two smallest sizes only
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

import numpy as np
import pandas as pd

from backbone.model import Network
from backbone.solver.checks.placement import check_placement
from backbone.solver.placement import PlaceOptions, solve_placement

DEMAND_FRACTION = 0.5
"""Inference demand (GPUs) as a fraction of the datacenters' maximum GPUs."""
SCENARIO_LOAD = 0.03
"""The synthetic scenario's own demand as a fraction of total link capacity."""
SIZES: tuple[tuple[int, int], ...] = ((20, 25), (40, 50), (80, 100), (120, 200))
"""(sites, metros) of the synthetic series."""


def synthetic_placement_network(n_sites: int, n_metros: int, seed: int = 0) -> Network:
    """A synthetic backbone with demand metros (deterministic for a seed)."""
    from benchmarks.synthetic import synthetic_backbone

    net = synthetic_backbone(n_sites, seed=seed)
    # the scenario's own site-to-site traffic at SCENARIO_LOAD of capacity, routed with the placement
    net = synthetic_backbone(n_sites, seed=seed,
                             total_demand_gbps=SCENARIO_LOAD * float(net.links["capacity_gbps"].sum()))
    rng = np.random.default_rng(seed + 1)
    s = net.sites
    at = rng.integers(0, len(s), n_metros)
    lon = np.clip(s["lon"].to_numpy()[at] + rng.normal(0, 0.8, n_metros), -179.9, 179.9)
    lat = np.clip(s["lat"].to_numpy()[at] + rng.normal(0, 0.6, n_metros), -85, 85)
    weight = rng.lognormal(0, 0.8, n_metros)
    total = DEMAND_FRACTION * float(s["gpus_max"].sum())
    metros = pd.DataFrame({
        "name": [f"m{i:03d}" for i in range(n_metros)], "lon": lon, "lat": lat,
        "region": s["region"].to_numpy()[at], "country": "",
        "inference_gpus": np.round(total * weight / weight.sum()), "interactive_share": rng.uniform(0.4, 0.8, n_metros),
    }, index=pd.Index([f"m{i:03d}" for i in range(n_metros)], name="id"))
    tables = net.tables() | {"metros": metros}
    return Network.from_tables(tables, name=f"synthetic-{n_sites}-{n_metros}", meta=net.meta)


def run_case(net: Network, label: str, time_limit: float, **options: Any) -> dict[str, Any]:
    """Solve one case, verify it independently, return a table row."""
    opts = PlaceOptions(time_limit_s=time_limit, allow_partial=True, **options)
    t0 = time.perf_counter()
    r = solve_placement(net, opts)
    wall = time.perf_counter() - t0
    t1 = time.perf_counter()
    rep = check_placement(net, opts, r.tables, expect_full=r.fully_served)
    check_s = time.perf_counter() - t1
    return {
        "case": label, "solver": opts.backend, "sites": len(net.sites), "metros": len(net.metros), "rows": r.stats["rows"],
        "cols": r.stats["cols"], "int": r.stats["integer_cols"], "status": r.status,
        "gap_%": None if r.gap is None else round(100 * r.gap, 4), "solve_s": round(r.solve_seconds, 2),
        "total_s": round(wall, 2), "check_s": round(check_s, 2), "served_%": round(100 * r.totals["served_share"], 2),
        "gpus_added": int(r.totals["gpus_added"]), "cost_musd": round(r.totals["cost_usd"] / 1e6, 1),
        "checker": "ok" if rep.ok else f"{len(rep.violations)} violations",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two smallest synthetic sizes only")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--no-global", action="store_true", help="skip the shipped scenario")
    parser.add_argument("--global-only", action="store_true", help="only the shipped scenario")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    rows = []
    sizes = () if args.global_only else SIZES[:2] if args.quick else SIZES
    for n_sites, n_metros in sizes:
        net = synthetic_placement_network(n_sites, n_metros)
        rows.append(run_case(net, "synthetic", args.time_limit, residency=[]))
        print(pd.DataFrame(rows[-1:]).to_string(index=False, header=False), flush=True)
    for n_sites, n_metros in sizes[:2]:
        net = synthetic_placement_network(n_sites, n_metros)
        rows.append(run_case(net, "synthetic n+1 24h", args.time_limit, residency=[], n_plus_one=True, periods=24))
        print(pd.DataFrame(rows[-1:]).to_string(index=False, header=False), flush=True)
    if not args.no_global:
        try:
            from backbone.io import load_scenario

            glob = load_scenario(None)
        except Exception as exc:  # the shipped scenario may be absent in a partial checkout
            print(f"shipped scenario not available: {exc}")
        else:
            cases: list[tuple[str, float, dict[str, Any]]] = [
                     ("global", 30.0, {}),
                     ("global n+1", args.time_limit, {"n_plus_one": True}),
                     ("global 24h", args.time_limit, {"periods": 24}),
                     ("global n+1 24h", args.time_limit, {"n_plus_one": True, "periods": 24})]
            for label, limit, extra in cases:
                rows.append(run_case(glob, label, limit, **extra))
                print(pd.DataFrame(rows[-1:]).to_string(index=False, header=False), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
