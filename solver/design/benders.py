"""An integer lower bound on the design over every admissible path: metric inequalities (Benders cuts).

The LP relaxation (:mod:`backbone.solver.design.colgen`) pays for a fraction of a module or of a route's fixed
cost; whole modules and whole routes cost more. This module keeps them whole and relaxes the routing instead.

**Metric inequalities.** For arc prices ``w >= 0`` of state ``s`` and ``SP_d(w)`` the least ``w``-length of an
admissible path of commodity ``d`` (within its SLO), every design that carries the routable demand ``h`` within the
ceiling ``t_s`` satisfies (route it, price every arc, and no path is shorter than ``SP_d``)::

    sum_d h_d SP_d(w)  <=  sum_a w_a x_a  <=  sum_a w_a t_s (cap_l(a) + m_l(a) y_l(a))

so ``sum_l (sum_{a of l} w_a t_s m_l) y_l >= sum_d h_d SP_d(w) - sum_a w_a t_s cap_l(a)`` is valid for every such
design, whatever paths it routes over (Iri 1971; Onaga and Kakusho 1971: with every ``w`` these cuts describe
exactly the capacities that can carry the demand). The prices are column generation's duals, and
``SP_d(w) >= pi_d + least_rc_d`` (:class:`~backbone.solver.design.colgen.Prices`, exact pricing: no admissible
path is shorter), so the right-hand side is bounded from below without listing paths.

**The cut MIP.** ``min sum_l module_cost_l y_l + sum_c fixed_c b_c`` over integer modules ``y`` and builds ``b``
(``y_c <= Y_c b_c``) subject to the cuts found so far: a relaxation of the design problem (the cuts are necessary
conditions), so its dual bound is a lower bound on every design. Its solution ``y*`` is then checked over every
admissible path (:func:`~backbone.solver.design.colgen.path_lp_bound` with the modules fixed): when it carries the
demand, ``y*`` is an optimal design and the bound is tight; otherwise the check's duals give a metric inequality
``y*`` violates, which joins the MIP (Benders decomposition; Costa, "A survey on Benders decomposition applied to
fixed-charge network design problems", 2005).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.problem import LinearProgram, Status, solve
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.core.sparse import selector
from backbone.solver.design.colgen import Prices, path_lp_bound
from backbone.solver.design.survivable.model import Commodities, StateBlock, link_modules

logger = logging.getLogger(__name__)

__all__ = ["MetricCutBound", "MetricCuts", "cut_mip", "metric_cut_bound", "metric_cuts"]

MIN_SOLVE_S = 1.0
"""Least time limit given to a cut MIP or a check."""


@dataclass(frozen=True)
class MetricCuts:
    """Metric inequalities ``coef @ y >= rhs``: one row per cut, one column per link of the full network."""

    coef: np.ndarray
    rhs: np.ndarray

    def __add__(self, other: MetricCuts) -> MetricCuts:
        return MetricCuts(np.vstack([self.coef, other.coef]), np.concatenate([self.rhs, other.rhs]))


def metric_cuts(full: Network, n_old: int, blocks: Sequence[StateBlock], comm: Commodities,
                prices: Prices) -> MetricCuts:
    """One metric inequality per state from column generation's ``prices`` (module doc)::

        sum_l (sum_{a of l} w_{s,a} t_s m_l) y_l >= sum_d h_d (pi_{s,d} + min(0, least_rc_{s,d})) - sum_a w_{s,a} t_s cap_l(a)

    over the routable commodities of the state (those with an admissible path with every candidate built)."""
    L = len(full.links)
    _, cap, mod, _, _ = link_modules(full.links, n_old)
    arc_link = np.concatenate([np.arange(L), np.arange(L)])
    t = np.array([b.ceiling for b in blocks])
    routable = np.stack([comm.has_path(b.has_path) for b in blocks]) & (comm.gbps > 0)[None, :]
    coef = np.stack([np.bincount(arc_link, weights=prices.w[s] * t[s] * mod[arc_link], minlength=L)
                     for s in range(len(blocks))])
    sp_lower = np.where(routable, prices.pi + np.minimum(prices.least_rc, 0.0), 0.0)
    rhs = sp_lower @ comm.gbps - (prices.w * t[:, None]) @ cap[arc_link]
    scale = np.maximum(np.abs(coef).max(axis=1, initial=0.0), np.abs(rhs))  # duals scale with the unmet penalty
    scale = np.where(scale > 0, scale, 1.0)
    return MetricCuts(coef / scale[:, None], rhs / scale)


@dataclass
class MetricCutBound:
    """What the cut loop proved.

    Attributes
    ----------
    bound_usd
        The best dual bound of a cut MIP (None when none finished): a lower bound on every design.
    rounds
        Cut MIPs solved; ``cuts`` the metric inequalities they held at the end.
    design_modules
        Modules per link of the full network of a cut-MIP solution that the check found carries the demand (then
        optimal, within the MIP gap), else None.
    blocks
        The path pools grown by the checks (they route ``design_modules`` when it is set).
    status, seconds
        ``optimal`` (a cut-MIP solution carried the demand), ``time_limit`` (the time ran out first),
        ``stalled`` (a check's cut did not cut its design off: its column generation had not converged),
        ``infeasible`` (the cuts admit no design: none carries all routable demand).
    """

    bound_usd: float | None
    rounds: int
    cuts: int
    design_modules: np.ndarray | None
    status: str
    seconds: float
    blocks: list[StateBlock] = field(default_factory=list, repr=False)


def cut_mip(base: Network, full: Network, cuts: MetricCuts) -> LinearProgram:
    """The cut MIP (module doc): integer modules and builds, the build rows and the metric inequalities."""
    links = full.links
    L, n_old = len(links), len(base.links)
    is_cand, _, _, cost, y_max = link_modules(links, n_old)
    fixed = base.candidates["fixed_cost_usd"].reindex(links.index[is_cand]).fillna(0.0).to_numpy(float) \
        if is_cand.any() else np.zeros(0)
    with_fixed = np.flatnonzero(fixed > 0)
    cpos = np.flatnonzero(is_cand)[with_fixed]
    lp = LinearProgram(f"design-metric-cuts-{base.name}")
    lp.add_variables("modules", links.index, cost=cost, lower=0.0, upper=y_max, integer=True)
    lp.add_variables("build", links.index[cpos], cost=fixed[with_fixed], lower=0.0, upper=1.0, integer=True)
    if len(cpos):
        n = len(cpos)
        lp.add_constraints("build", {"modules": selector(np.arange(n), n, L, cols=cpos),
                                     "build": sp.csr_matrix(sp.diags(-y_max[cpos]))}, upper=0.0,
                           index=links.index[cpos])
    lp.add_constraints("metric", {"modules": sp.csr_matrix(cuts.coef)}, lower=cuts.rhs)
    return lp


def metric_cut_bound(base: Network, full: Network, blocks: Sequence[StateBlock], comm: Commodities, prices: Prices,
                     time_limit_s: float, tol_gbps: float, backend: str = "highs", mip_gap: float = 1e-4,
                     progress: ProgressFn | None = None) -> MetricCutBound:
    """The cut loop (module doc), from the cut of ``prices`` (column generation's duals), within ``time_limit_s``.

    Parameters
    ----------
    base, full
        The network the design changes, and it with every candidate built.
    blocks
        The states' path pools (grown by each check).
    comm
        The commodities.
    prices
        The duals the first cut comes from (the LP relaxation's).
    time_limit_s
        Seconds for the whole loop.
    tol_gbps
        Unmet demand treated as round-off when checking a design.
    backend, mip_gap
        MIP and LP backend, and the cut MIP's relative gap.
    progress
        ``callable(fraction, message)``.

    Returns
    -------
    MetricCutBound
    """
    progress = progress or no_progress
    t0 = time.perf_counter()
    deadline = t0 + time_limit_s
    n_old = len(base.links)
    pool = list(blocks)
    cuts = metric_cuts(full, n_old, pool, comm, prices)
    best: float | None = None
    seen: set[bytes] = set()
    rounds, status = 0, "time_limit"
    while deadline - time.perf_counter() > MIN_SOLVE_S:
        sol = solve(cut_mip(base, full, cuts), backend=backend, time_limit_s=deadline - time.perf_counter(),
                    mip_gap=mip_gap)
        if sol.bound is not None and np.isfinite(sol.bound):
            best = float(sol.bound) if best is None else max(best, float(sol.bound))
        if sol.status == Status.INFEASIBLE:  # the cuts alone rule out every design: none carries the demand
            status = "infeasible"
            break
        if not sol.status.has_solution:
            break
        rounds += 1
        y = np.round(sol.values("modules").to_numpy())
        key = y.astype(np.int64).tobytes()
        if key in seen:
            status = "stalled"
            break
        seen.add(key)
        progress(min(0.9, 0.5 + 0.02 * rounds), f"integer bound: cut round {rounds}, bound {best or 0:,.0f} USD")
        check = path_lp_bound(base, full, pool, comm, deadline - time.perf_counter(), backend, fixed_modules=y)
        pool = check.blocks or pool
        if check.prices is None:
            break
        logger.info("metric cuts round %d: bound %.6g, design %.6g leaves %.3f Gbps unmet", rounds, best or 0.0,
                    sol.objective, check.prices.unmet_gbps)
        if check.prices.unmet_gbps <= tol_gbps:
            return MetricCutBound(best, rounds, len(cuts.rhs), y, "optimal", time.perf_counter() - t0, pool)
        cuts = cuts + metric_cuts(full, n_old, pool, comm, check.prices)
    return MetricCutBound(best, rounds, len(cuts.rhs), None, status, time.perf_counter() - t0, pool)
