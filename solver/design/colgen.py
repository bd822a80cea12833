"""The design LP over every latency-admissible path, by column generation: a true lower bound, and its paths.

The upgrade and new-route design (:mod:`backbone.solver.design.survivable.model`) routes each commodity (demands
with one source, destination and SLO) over a set of paths per state. Its LP relaxation over **every** candidate
route and **every** latency-admissible path bounds the cost of every design that carries the routable demand
within the utilisation ceilings, whatever paths and routes it uses::

    min   sum_l module_cost_l y_l + sum_c fixed_c b_c + M sum_{s,d} u_{s,d}
    s.t.  sum_{p in P_s(d)} f_{s,p} + u_{s,d} = h_d                       (demand; dual pi_{s,d})
          sum_p A_s[p,a] f_{s,p} - t_s m_l(a) y_l(a) <= t_s cap_l(a)       (capacity; dual mu_{s,a} <= 0)
          y_c - Y_c b_c <= 0,  0 <= y_l <= Y_l,  0 <= b_c <= 1,  f, u >= 0

with ``P_s(d)`` every loopless path of the network with every candidate built and state ``s``'s links failed whose
one-way latency is within the commodity's SLO (TE's admissibility rule), ``u`` unmet routable demand at the
penalty ``M`` (:data:`~backbone.solver.design.upgrades.families.UNMET_PENALTY_USD_PER_GBPS`; a commodity with no
admissible path even with every candidate built is left out, its demand excused). A design that carries all
routable demand is a point of this LP at its own cost (``u = 0``, modules and builds integral), so the LP
optimum is a lower bound on its cost; one that leaves ``U`` Gbps unmet costs at least the LP optimum less
``M U``.

Column generation solves the LP without listing ``P_s(d)``: a restricted master over a pool of paths (the
design's ``k`` candidate paths to start), then *pricing*: with arc prices ``w_{s,a} = -mu_{s,a} >= 0`` a path
``p`` of ``d`` has reduced cost ``rc_p = w_s(p) - pi_{s,d}``; the latency-limited shortest path
(:func:`backbone.solver.te.rcsp.latency_limited_paths`, exact) finds the least ``w_s(p)`` among admissible paths
below the cutoff ``pi_{s,d}``; those found join the pool. When none is found the master is optimal over every
admissible path and its objective is the bound. Stopped earlier (time limit), the bound is the Lagrangian bound
of the last master's duals (Lübbecke and Desrosiers, "Selected topics in column generation", 2005)::

    LB = z_master + sum_{s,d} h_d min(0, min_{p in P_s(d)} rc_p)

valid because ``sum_p f_{s,p} <= h_d`` in every feasible point, and every other column is in the master.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.deadline import Deadline, TimeLimitReached
from backbone.solver.core.problem import Solution, Status, solve
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.core.sparse import selector
from backbone.solver.design.summary import DesignBound
from backbone.solver.design.survivable.model import Commodities, StateBlock, build_mip
from backbone.solver.design.upgrades.families import UNMET_PENALTY_USD_PER_GBPS

logger = logging.getLogger(__name__)

__all__ = ["PATH_LP_COVERS", "PathLPBound", "path_lp_bound"]

REDUCED_COST_TOL = 1e-7
"""A column prices out when ``rc_p < -REDUCED_COST_TOL * max(1, pi_{s,d})``."""

MAX_ROUNDS = 200
"""Most master / pricing rounds (each adds at least one path; the time limit usually ends it first)."""

MIN_SOLVE_S = 1.0
"""Least time limit given to a master LP."""

PATH_LP_COVERS = ("every design that builds any of the candidate routes and upgrades links in whole modules, "
                  "routes each demand over any latency-admissible path (within its SLO) and carries the routable "
                  "demand of the intact state and of every failure state of the kind within the utilisation "
                  "ceilings (relaxed: the LP over the states given, modules and builds continuous)")
"""What the column-generation bound covers, in one sentence (``bound.covers``)."""


@dataclass(frozen=True)
class Prices:
    """The last master's duals and what pricing proved about them, per state ``s``: arc prices
    ``w[s, a] = -mu_{s,a} >= 0``, commodity duals ``pi[s, d]``, a lower bound ``least_rc[s, d]`` on each
    commodity's least reduced cost over its admissible paths (so ``pi + least_rc`` bounds its least ``w``-length
    from below), and the master's routable unmet demand ``unmet_gbps`` (Gbps, all states)."""

    w: np.ndarray
    pi: np.ndarray
    least_rc: np.ndarray
    unmet_gbps: float


@dataclass
class PathLPBound:
    """The LP relaxation over every admissible path and every candidate, and how far column generation got.

    Attributes
    ----------
    lp_usd
        The bound on designs that carry all routable demand: the master's optimum when ``status`` is
        ``optimal`` (no admissible path prices out), else the best Lagrangian bound (None when no master
        finished). It includes ``M`` times the unmet demand no design can carry (see :meth:`bound_usd`).
    status
        ``optimal`` (column generation converged), ``time_limit`` (stopped by ``time_limit_s``; the bound is
        Lagrangian) or ``skipped`` (time limit 0).
    rounds, paths_added, seconds, note, model
        Master / pricing rounds, paths pricing added to the pool, wall time, what stopped it, the last master's
        size.
    blocks
        The states' path pools at the end (the design's paths plus every path pricing added).
    """

    lp_usd: float | None
    status: str
    rounds: int
    paths_added: int
    seconds: float
    note: str
    states: int
    blocks: list[StateBlock] = field(default_factory=list, repr=False)
    model: dict[str, int] = field(default_factory=dict)
    prices: Prices | None = field(default=None, repr=False)

    def bound_usd(self, unmet_gbps: float = 0.0) -> float | None:
        """The lower bound on the cost of a design that leaves at most ``unmet_gbps`` of routable demand unmet
        (``lp_usd - M unmet_gbps``, at least 0): every such design is an LP point of cost at most its own plus
        ``M unmet_gbps``."""
        if self.lp_usd is None:
            return None
        return max(0.0, self.lp_usd - UNMET_PENALTY_USD_PER_GBPS * max(0.0, unmet_gbps))

    def record(self, unmet_gbps: float = 0.0) -> DesignBound:
        """The design's ``bound`` record, the survivable design's keys: ``bound_usd, status, states, seconds,
        note, covers, model, method, rounds, paths_added``."""
        return DesignBound(bound_usd=self.bound_usd(unmet_gbps), status=self.status, states=self.states,
                           seconds=round(self.seconds, 3), note=self.note, covers=PATH_LP_COVERS, model=self.model,
                           method="column generation over every latency-admissible path (latency SLOs kept)",
                           rounds=self.rounds, paths_added=self.paths_added)


def path_lp_bound(base: Network, full: Network, blocks: Sequence[StateBlock], comm: Commodities,
                  time_limit_s: float, backend: str = "highs", progress: ProgressFn | None = None,
                  fixed_modules: np.ndarray | None = None) -> PathLPBound:
    """Solve the LP relaxation (module doc) over the states of ``blocks`` by column generation.

    Parameters
    ----------
    base
        The network the design changes (its ``candidates`` may be built).
    full
        ``base`` with every candidate built (:func:`backbone.solver.design.survivable.model.full_network`).
    blocks
        One :class:`StateBlock` per state (intact first): its failed links, ceiling, which commodities have an
        admissible path, and the paths the master starts from.
    comm
        The demands grouped into commodities.
    time_limit_s
        Seconds for every master and pricing round together (0: skipped, no bound).
    backend
        LP backend.
    progress
        ``callable(fraction, message)``.
    fixed_modules
        Modules per link of ``full`` to hold fixed (builds follow): the LP then finds the least unmet demand of
        that design over every admissible path (``M`` times it, plus the design's cost), and its ``prices`` give
        the metric inequality the design violates when it leaves demand unmet
        (:mod:`backbone.solver.design.benders`).

    Returns
    -------
    PathLPBound

    Example
    -------
    >>> b = path_lp_bound(net, full, [state_block(net, full, "intact", (), 4, 0.8)], comm, 30.0)  # doctest: +SKIP
    """
    progress = progress or no_progress
    t0 = time.perf_counter()
    pool = list(blocks)
    if time_limit_s <= 0:
        return PathLPBound(None, "skipped", 0, 0, 0.0, "bound_time_limit_s is 0: no lower bound computed", len(pool),
                           pool)
    deadline = Deadline(t0 + time_limit_s)
    best: float | None = None
    prices: Prices | None = None
    rounds = added = 0
    note = f"stopped by bound_time_limit_s {time_limit_s:g} before pricing proved the LP optimal"
    model: dict[str, int] = {}
    while rounds < MAX_ROUNDS and deadline.remaining() > 0:
        sol, model = _master(base, full, pool, comm, max(MIN_SOLVE_S, deadline.remaining()), backend, fixed_modules)
        if sol is None:
            break
        rounds += 1
        try:
            grown, found, prices = _price(full, pool, comm, sol, deadline)
        except TimeLimitReached:
            break
        lagrangian = float(sol.objective) + float(sum(comm.gbps @ np.minimum(r, 0.0) for r in prices.least_rc))
        best = lagrangian if best is None else max(best, lagrangian)
        if found == 0:  # exact pricing: no admissible path prices out, the master is the LP over every path
            return PathLPBound(float(sol.objective), "optimal", rounds, added, time.perf_counter() - t0, "",
                               len(pool), pool, model, prices)
        pool = grown
        added += found
        progress(min(0.9, 0.05 * rounds), f"path LP bound: round {rounds}, {added:,} paths priced in")
        logger.info("design path LP round %d: %.6g, %d paths added, Lagrangian bound %.6g", rounds, sol.objective,
                    found, lagrangian)
    if best is None:
        note = f"no master LP finished within bound_time_limit_s {time_limit_s:g}"
    return PathLPBound(best, "time_limit", rounds, added, time.perf_counter() - t0, note, len(pool), pool, model,
                       prices)


def _master(base: Network, full: Network, pool: Sequence[StateBlock], comm: Commodities, time_limit_s: float,
            backend: str, fixed_modules: np.ndarray | None) -> tuple[Solution | None, dict[str, int]]:
    """The restricted master over the pool (the design's program with modules and builds continuous, or held at
    ``fixed_modules``)."""
    lp, _ = build_mip(base, full, list(pool), comm, integer=False)
    if fixed_modules is not None:
        lp.set_bounds("modules", lower=fixed_modules, upper=fixed_modules)
        built = (fixed_modules[full.links.index.get_indexer(lp.variables["build"].index)] > 0.5).astype(float)
        lp.set_bounds("build", lower=built, upper=built)
    sol = solve(lp, backend=backend, time_limit_s=time_limit_s)
    if sol.status != Status.OPTIMAL or sol.row_duals is None:
        logger.info("design path LP: master %s after %.1f s", sol.status.value, sol.solve_seconds)
        return None, lp.stats()
    return sol, lp.stats()


def _price(full: Network, pool: Sequence[StateBlock], comm: Commodities, sol: Solution, deadline: Deadline
           ) -> tuple[list[StateBlock], int, Prices]:
    """One pricing round over every state: the grown pool, the paths added and the master's prices."""
    S, D, L = len(pool), len(comm.gbps), len(full.links)
    pi = sol.duals("demand").to_numpy().reshape(S, D)
    w = np.maximum(-sol.duals("capacity").to_numpy().reshape(S, 2 * L), 0.0)
    least_rc = np.zeros((S, D))
    grown: list[StateBlock] = []
    found = 0
    for s, block in enumerate(pool):
        var_demand, incidence, least_rc[s] = price_state(full, block, comm, w[s], pi[s], deadline)
        found += len(var_demand)
        grown.append(StateBlock(block.scenario, block.failed, np.concatenate([block.var_demand, var_demand]),
                                sp.vstack([block.incidence, incidence], format="csr"), block.has_path, block.ceiling))
    routable = np.stack([comm.has_path(b.has_path) for b in pool])
    unmet = float(np.where(routable, np.maximum(sol.values("unmet").to_numpy().reshape(S, D), 0.0), 0.0).sum())
    return grown, found, Prices(w, pi, least_rc, unmet)


def price_state(full: Network, block: StateBlock, comm: Commodities, w: np.ndarray, pi: np.ndarray,
                deadline: Deadline | None = None) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray]:
    """Pricing of one state: the commodity and the arc incidence (rows over the ``2L`` arcs) of every path with
    negative reduced cost ``w(p) - pi_d`` among the latency-admissible paths of the state's surviving arcs (the
    cheapest per commodity), and per commodity a lower bound on its least reduced cost (0 where it has no
    admissible path: its demand is excused and fixed unmet).

    Parameters
    ----------
    full
        The network with every candidate built.
    block
        The state (its failed links and which commodities have an admissible path).
    w, pi
        Arc prices (``2L``, ``>= 0``) and commodity duals (``D``) of the state.
    deadline
        Checked by the latency-limited search.
    """
    from backbone.solver.te.rcsp import latency_limited_paths

    L = len(full.links)
    up = ~full.links.index.isin(block.failed)
    alive = np.flatnonzero(np.concatenate([up, up]))
    ends = full.link_endpoints()
    tail = np.concatenate([ends[0], ends[1]])[alive]
    head = np.concatenate([ends[1], ends[0]])[alive]
    latency = np.tile(full.links["latency_ms"].to_numpy(float), 2)[alive]
    d = full.demands
    first = comm.first
    tol = REDUCED_COST_TOL * np.maximum(1.0, np.abs(pi))
    routable = comm.has_path(block.has_path) & (comm.gbps > 0)
    least_rc = np.where(routable, -pi, 0.0)  # w >= 0: no path costs less than 0
    ask = np.flatnonzero(routable & (pi > tol))
    least_rc[routable & (pi <= tol)] = np.minimum(0.0, -pi[routable & (pi <= tol)])
    site = full.sites.index
    src = site.get_indexer(d["src"].to_numpy()[first[ask]])
    dst = site.get_indexer(d["dst"].to_numpy()[first[ask]])
    limit = d["slo_rtt_ms"].to_numpy(float)[first[ask]] / 2.0
    limit = np.where(np.isfinite(limit), limit, np.inf)
    out = latency_limited_paths(tail, head, w[alive], latency, len(site), src, dst, limit, pi[ask] - tol[ask],
                                deadline)
    hit = np.isfinite(out.length)
    least_rc[ask] = np.where(hit, out.length - pi[ask], -tol[ask])  # a miss proves rc >= -tol for every path
    arcs = [alive[a] for a, h in zip(out.arcs, hit, strict=True) if h]
    rows = np.repeat(np.arange(len(arcs)), [len(a) for a in arcs])
    cols = np.concatenate(arcs) if arcs else np.zeros(0, np.int64)
    incidence = selector(rows, len(arcs), 2 * L, cols=cols)
    return ask[hit], incidence, least_rc
