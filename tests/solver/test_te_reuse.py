"""The ``te`` command's impact and bound reuse the routing (issue #32): same numbers as computed from scratch.

* The impact of an overloaded state re-solves max-throughput on the routing's own model
  (:func:`backbone.solver.te.resolve_te`) and each lexicographic stage leaves out the classes after it: its
  unmet traffic per class must equal an independent lexicographic max-throughput (scipy's ``linprog`` over every
  class at every stage, the same candidate paths).
* The MLU lower bound the routing reports must stay a bound: at most the optimum over every admissible path
  (brute force: all loopless paths of the small networks).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from backbone.model import Network
from backbone.schema import TRAFFIC_CLASSES
from backbone.solver.failures.impact import assess_state
from backbone.solver.tasks.te import add_bound_and_impact
from backbone.solver.te import TEOptions, resolve_te, solve_te
from backbone.solver.te.formulations import build_formulation
from backbone.solver.te.instance import build_instance
from tests.nets import ALL_PATHS_K, make_network, random_connected

K = 3
DEMAND_MODEL_CLASSES = ("training", "inference", "replication", "bulk")
"""The four classes of the synthetic demand model (:mod:`backbone.demand`) the random networks draw from: the seeds'
instances stay what they were when these were all of :data:`backbone.schema.TRAFFIC_CLASSES` (the workload classes
joined it later)."""


def classed_net(seed: int, tight: float, slo: bool = True) -> Network:
    """A random meshed network with all-pairs demand over the four traffic classes (some with SLOs)."""
    rng = np.random.default_rng(seed)
    sites, edges = random_connected(rng, 7, 11)
    links = [{"id": f"l{j}", "site_a": f"s{a}", "site_b": f"s{b}", "capacity_gbps": float(rng.integers(40, 160)),
              "latency_ms": float(rng.integers(1, 6))} for j, (a, b) in enumerate(edges)]
    demands = []
    for i in range(7):
        for j in range(7):
            if i != j and rng.random() < 0.8:
                cls = DEMAND_MODEL_CLASSES[int(rng.integers(0, len(DEMAND_MODEL_CLASSES)))]
                d = {"id": f"d{i}-{j}", "src": f"s{i}", "dst": f"s{j}", "traffic_class": cls,
                     "demand_gbps": float(rng.uniform(1, 40)) * tight}
                if slo and cls == "inference" and rng.random() < 0.6:
                    d["slo_rtt_ms"] = 2.0 * float(rng.integers(4, 12))
                demands.append(d)
    return make_network(sites, links, demands, name=f"classed-{seed}")


def lexicographic_unmet(net: Network, k_paths: int) -> dict[str, float]:
    """Unmet Gbps per class of lexicographic max-throughput at 100 %: scipy ``linprog``, every class in every stage."""
    inst = build_instance(net)
    form = build_formulation(inst, "path", k_paths=k_paths)
    lp = form.lp
    a = lp.A.tocsr()
    lo, up = lp.col_lower.copy(), lp.col_upper.copy()
    mlu = lp.variables["mlu"].slice
    lo[mlu], up[mlu] = 0.0, 1.0
    unmet = lp.variables["unmet"].slice
    n_unmet = unmet.stop - unmet.start
    ranks = inst.class_rank[form.lp_demands]
    h = inst.demand_gbps[form.lp_demands]
    eq = lp.row_lower == lp.row_upper
    ub_rows = [a[~eq & np.isfinite(lp.row_upper)], -a[~eq & np.isfinite(lp.row_lower)]]
    ub_rhs = [lp.row_upper[~eq & np.isfinite(lp.row_upper)], -lp.row_lower[~eq & np.isfinite(lp.row_lower)]]
    out: dict[str, float] = {}
    holds: list[tuple[np.ndarray, float]] = []
    for r, cls in enumerate(TRAFFIC_CLASSES):
        members = ranks == r
        if not (members & (h > 0)).any():
            continue
        c = np.zeros(lp.n_cols)
        c[unmet.start:unmet.stop] = members.astype(float)
        rows = [*ub_rows, *[np.concatenate([np.zeros(unmet.start), m, np.zeros(lp.n_cols - unmet.stop)])[None, :]
                            for m, _ in holds]]
        rhs = [*ub_rhs, *[np.array([v]) for _, v in holds]]
        res = linprog(c, A_ub=sp.vstack([sp.csr_matrix(x) for x in rows]), b_ub=np.concatenate(rhs),
                      A_eq=a[eq], b_eq=lp.row_lower[eq], bounds=np.column_stack([lo, up]), method="highs")
        assert res.status == 0, res.message
        holds.append((members.astype(float), float(res.fun) + 1e-7 * max(1.0, float(h[members].sum()))))
        out[cls] = float(res.fun)
    assert n_unmet == len(h)
    outside = np.ones(inst.n_demands, bool)  # no admissible path (SLO) or cut apart: unmet whatever the routing
    outside[form.lp_demands] = False
    for r, cls in enumerate(TRAFFIC_CLASSES):
        left = float(inst.demand_gbps[outside & (inst.class_rank == r)].sum())
        if left > 0:
            out[cls] = out.get(cls, 0.0) + left
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_reused_impact_equals_from_scratch(seed: int) -> None:
    net = classed_net(seed, tight=4.0)
    routing = solve_te(net, TEOptions(objective="min-mlu", k_paths=K, method="exact"))
    assert routing.mlu > 1.0  # overloaded: the impact needs its max-throughput
    again = resolve_te(routing, "max-throughput", utilisation_ceiling=1.0)
    assert again is not None and again.summary.model_reused and again.summary.paths_seconds == 0.0
    reused = assess_state(net, K, routing=routing)
    scratch = assess_state(net, K)
    reference = lexicographic_unmet(net, K)
    assert reused.solves == ("min-mlu", "max-throughput")
    for cls, v in reference.items():
        assert reused.unmet_by_class()[cls] == pytest.approx(v, abs=1e-5 * max(1.0, v))
        assert scratch.unmet_by_class()[cls] == pytest.approx(v, abs=1e-5 * max(1.0, v))
    slo = reused.unmet_by_reason().get("no_path_within_slo", 0.0)
    assert slo == pytest.approx(scratch.unmet_by_reason().get("no_path_within_slo", 0.0))


def test_te_task_impact_reuses_the_routing_model() -> None:
    net = classed_net(5, tight=4.0)
    opts = TEOptions(k_paths=K, method="exact")
    routing = solve_te(net, opts)
    import time

    routing = add_bound_and_impact(net, opts, routing, time.perf_counter())
    impact = routing.summary.impact
    import pickle

    # from scratch over the same candidate paths: the same routing without its kept model (it is never pickled),
    # so the impact is built and solved anew (assess_state without a routing would route by ``auto``, which
    # escalates to column generation for these SLO demands: other paths, another lexicographic optimum)
    bare = pickle.loads(pickle.dumps(solve_te(net, opts)))
    assert bare.model is None
    scratch = assess_state(net, K, routing=bare).summary()
    assert impact is not None
    assert impact.unmet_gbps == pytest.approx(scratch.unmet_gbps, rel=1e-6, abs=1e-6)
    assert impact.unmet_by_class == pytest.approx(scratch.unmet_by_class, rel=1e-6, abs=1e-6)


def test_model_is_not_pickled() -> None:
    import pickle

    routing = solve_te(classed_net(0, tight=1.0), TEOptions(objective="min-mlu", k_paths=K, method="exact"))
    assert routing.model is not None
    back = pickle.loads(pickle.dumps(routing))
    assert back.model is None and resolve_te(back, "max-throughput") is None
    assert back.summary == routing.summary


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("slo", [False, True])
def test_reported_bound_is_a_bound(seed: int, slo: bool) -> None:
    net = classed_net(seed, tight=2.0, slo=slo)
    best = solve_te(net, TEOptions(objective="min-mlu", k_paths=ALL_PATHS_K, method="exact")).mlu  # every loopless path: the optimum
    for method in ("auto", "exact", "colgen"):
        r = solve_te(net, TEOptions(objective="min-mlu", k_paths=K, method=method))
        lb = r.summary.lower_bound
        assert lb is not None and lb <= best * (1 + 1e-6) + 1e-9, (method, lb, best)
        assert r.mlu >= best * (1 - 1e-6) - 1e-9


@pytest.mark.parametrize("seed", [0, 1])
def test_lexicographic_holds_each_class_at_its_optimum(seed: int) -> None:
    """Each stage holds its class's own unmet (not the stage objective, which adds held penalties): path LP and
    column generation both give the lexicographic optimum per class."""
    net = classed_net(seed, tight=4.0, slo=False)
    exact = solve_te(net, TEOptions(objective="max-throughput", k_paths=K, method="exact", utilisation_ceiling=1.0))
    colgen = solve_te(net, TEOptions(objective="max-throughput", k_paths=K, method="colgen", utilisation_ceiling=1.0))
    for r, reference in ((exact, lexicographic_unmet(net, K)), (colgen, lexicographic_unmet(net, ALL_PATHS_K))):
        got = r.demands.groupby("traffic_class")["unmet_gbps"].sum()
        for cls, v in reference.items():
            assert float(got.get(cls, 0.0)) == pytest.approx(v, abs=1e-5 * max(1.0, v)), (r.summary.method, cls)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_colgen_impact_seeded_with_the_routing_columns(seed: int) -> None:
    """A column-generation routing lends its columns to the impact's max-throughput: the same unmet per class as
    the lexicographic optimum over every path."""
    net = classed_net(seed, tight=4.0, slo=False)
    routing = solve_te(net, TEOptions(objective="min-mlu", k_paths=K, method="colgen"))
    assert routing.model is not None and routing.model.columns is not None and routing.mlu > 1.0
    reused = assess_state(net, K, routing=routing)
    reference = lexicographic_unmet(net, ALL_PATHS_K)
    for cls, v in reference.items():
        assert reused.unmet_by_class()[cls] == pytest.approx(v, abs=1e-5 * max(1.0, v)), cls


def test_first_stage_sifts_from_the_routing_columns() -> None:
    """The first max-throughput stage's working set holds the min-MLU routing's flow-carrying columns when the routing
    was solved on the same program, and only each demand's first candidate otherwise (no routing kept, or columns
    added to the program since: its flows name other columns)."""
    from backbone.solver.te.objectives import Sifting, routed_flow, run_objective

    inst = build_instance(classed_net(1, tight=4.0))
    form = build_formulation(inst, "path", k_paths=K)
    n = len(form.lp_demands)
    assert routed_flow(form.lp, form, n) is None  # no routing solved yet: the shortcut must not apply
    cold = Sifting(form.lp, routed_flow(form.lp, form, n)).start(None)
    assert np.array_equal(cold, Sifting(form.lp).first)
    form.routed = run_objective(form, inst, "min-mlu").solution
    flow = routed_flow(form.lp, form, n)
    assert flow is not None and len(flow) == form.n_paths
    warm = Sifting(form.lp, flow).start(None)
    assert warm[flow > 0].all() and (warm & ~cold).any()  # the routing spreads over more than the first paths
    grown = form.lp.copy()
    grown.add_columns("flow", 1, coefficients={"demand": sp.csr_matrix(([1.0], ([0], [0])), shape=(n, 1))})
    assert routed_flow(grown, form, n) is None  # another program: its flows would name other columns
    reference = lexicographic_unmet(classed_net(1, tight=4.0), K)  # and the stages still reach the optimum
    out = run_objective(form, inst, "max-throughput", utilisation_ceiling=1.0)
    unmet = out.solution.values("unmet").to_numpy()
    ranks = inst.class_rank[form.lp_demands]
    for r, cls in enumerate(TRAFFIC_CLASSES):
        if cls in reference:
            want = reference[cls] - float(inst.demand_gbps[(inst.class_rank == r)].sum() -
                                          inst.demand_gbps[form.lp_demands][ranks == r].sum())
            assert float(unmet[ranks == r].sum()) == pytest.approx(want, abs=1e-5 * max(1.0, want)), cls


def test_primal_simplex_reaches_the_same_optimum() -> None:
    """``lp_method="primal-simplex"`` (sifting's later rounds) solves to the optimum dual simplex finds, cold and from
    the basis of a program with fewer columns open."""
    from backbone.solver.core.problem import solve
    from backbone.solver.te.objectives import stage_program

    form = build_formulation(build_instance(classed_net(2, tight=4.0)), "path", k_paths=K)
    defaults = {b: form.lp.bounds(b) for b in form.lp.variables}
    lp = stage_program(form.lp.copy(), "stage", {"unmet": 1.0}, {"mlu": (0.0, 1.0)}, defaults)
    dual = solve(lp, lp_method="simplex")
    lower, upper = defaults["flow"]
    few = np.zeros(form.n_paths, bool)
    few[::2] = True
    narrow = solve(stage_program(form.lp.copy(), "stage", {"unmet": 1.0},
                                 {"mlu": (0.0, 1.0), "flow": (lower, np.where(few, upper, 0.0))}, defaults),
                   lp_method="simplex")
    for warm in (None, narrow):
        primal = solve(lp, lp_method="primal-simplex", warm_start=warm)
        assert primal.status.value == "optimal"
        assert primal.objective == pytest.approx(dual.objective, rel=1e-7, abs=1e-6)
    assert narrow.objective >= dual.objective - 1e-6
