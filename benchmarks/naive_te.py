"""A naive min-MLU TE, written the way research code usually does it (the benchmark's reference).

* candidate paths: ``networkx.shortest_simple_paths`` per demand pair (Yen's algorithm), first k,
  dropping those over the demand's SLO (as ``solve_te`` does);
* model: PuLP, one variable and one constraint at a time in Python loops over demands, paths and
  links (``lpSum`` per row);
* solver: CBC through PuLP (writes an MPS/LP file and calls the binary).

It solves the same LP as ``backbone.solve_te(net, objective="min-mlu", formulation="path", k_paths=k)``: path flows, demand rows,
per-arc capacity rows ``load <= u * cap``, minimise ``u``. Used by ``bench_te.py`` only.

Run alone: ``python benchmarks/naive_te.py N_SITES [K]`` prints a JSON line.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import time
from typing import Any

from backbone.model import Network


def naive_min_mlu(net: Network, k: int = 4, time_limit: float = 600.0) -> dict[str, Any]:
    """Min-MLU over k shortest paths, research-code style. Returns figures and timings."""
    import networkx as nx
    import pulp

    t0 = time.perf_counter()
    g = nx.Graph()
    for link_id, row in net.links.iterrows():  # simple graph: keep the lowest-latency parallel link
        a, b = row["site_a"], row["site_b"]
        if not g.has_edge(a, b) or g[a][b]["latency_ms"] > row["latency_ms"]:
            g.add_edge(a, b, latency_ms=row["latency_ms"], capacity=row["capacity_gbps"], id=link_id)
    paths: dict[str, list[list[str]]] = {}
    for d_id, d in net.demands.iterrows():
        if d["demand_gbps"] <= 0 or not nx.has_path(g, d["src"], d["dst"]):
            continue
        cand = itertools.islice(nx.shortest_simple_paths(g, d["src"], d["dst"], weight="latency_ms"), k)
        slo = d["slo_rtt_ms"]
        admissible = [p for p in cand if math.isnan(slo) or 2 * nx.path_weight(g, p, "latency_ms") <= slo + 1e-9]
        if admissible:  # the same SLO rule as solve_te: paths over slo_rtt_ms / 2 one way are not candidates
            paths[d_id] = admissible
    t1 = time.perf_counter()

    prob = pulp.LpProblem("min_mlu", pulp.LpMinimize)
    u = pulp.LpVariable("u", lowBound=0)
    prob += u
    flow: dict[tuple[str, int], pulp.LpVariable] = {}
    arc_terms: dict[tuple[str, str], list[pulp.LpVariable]] = {}
    for d_id, plist in paths.items():
        for i, p in enumerate(plist):
            v = pulp.LpVariable(f"f_{d_id}_{i}", lowBound=0)
            flow[d_id, i] = v
            for a, b in zip(p[:-1], p[1:], strict=True):
                arc_terms.setdefault((a, b), []).append(v)
        prob += pulp.lpSum(flow[d_id, i] for i in range(len(plist))) == net.demands.at[d_id, "demand_gbps"], f"dem_{d_id}"
    for (a, b), terms in arc_terms.items():
        prob += pulp.lpSum(terms) <= g[a][b]["capacity"] * u, f"cap_{a}_{b}"
    t2 = time.perf_counter()
    status = prob.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit))
    t3 = time.perf_counter()
    return {"status": pulp.LpStatus[status], "mlu": pulp.value(u), "paths_seconds": t1 - t0,
            "build_seconds": t2 - t1, "solve_seconds": t3 - t2, "total_seconds": t3 - t0,
            "variables": len(flow) + 1, "rows": len(paths) + len(arc_terms)}


if __name__ == "__main__":
    from benchmarks.synthetic import synthetic_backbone

    n = int(sys.argv[1])
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    print(json.dumps({"sites": n, **naive_min_mlu(synthetic_backbone(n), k)}))
