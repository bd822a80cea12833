"""The intact-state design (``backbone design`` with ``survive`` none): its true lower bound and a design priced
over every admissible path.

The problem as stated: the cheapest link upgrades (whole modules, up to each link's ``max_capacity_gbps``) and
candidate routes (fixed cost plus modules) such that the intact network carries every demand that has a
latency-admissible path with every candidate built, within ``utilisation_ceiling``, routing each demand over
any admissible path (latency within its SLO). Demands with no admissible path even with every candidate built
are excused (no design can carry them).

1. **Bound.** The LP relaxation over every candidate and every admissible path
   (:func:`backbone.solver.design.colgen.path_lp_bound`, column generation with latency-limited pricing), started
   from TE's ``k`` candidate paths on the network with and without every candidate built. It keeps the SLOs, so
   it is positive whenever the intact network cannot carry its demand within the ceiling.
2. **Design.** The design MIP (:func:`backbone.solver.design.survivable.model.solve_mip`, every candidate open)
   over the paths column generation ended with (price and branch). Its optimum is restricted to those paths,
   and is reported as the *restricted optimum* with that restriction beside it; the gap shown is to the true
   bound of step 1.

TE on the built network routes it: every path the design uses is admissible there, and TE's default
(``method`` auto) prices over every admissible path when its ``k`` paths leave a gap.
"""

from __future__ import annotations

import time

from backbone.model import Network
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.design.benders import MetricCutBound, metric_cut_bound
from backbone.solver.design.colgen import PathLPBound, path_lp_bound
from backbone.solver.design.summary import DesignBound, DesignIteration, RestrictedOptimum, design_gap
from backbone.solver.design.survivable.iterate import SurvivableDesign
from backbone.solver.design.survivable.model import (
    Commodities,
    MipDesign,
    apply_design,
    full_network,
    solve_mip,
    state_block,
    upgrade_table,
)
from backbone.solver.design.survivable.options import SurviveOptions
from backbone.solver.failures.impact import survive_tolerance_gbps

__all__ = ["design_intact"]


def design_intact(net: Network, options: SurviveOptions | None = None, *,
                  progress: ProgressFn | None = None) -> SurvivableDesign:
    """Cheapest upgrades and new routes so the intact network carries its routable demand within
    ``utilisation_ceiling`` over admissible paths, with a true lower bound (module doc).

    Parameters
    ----------
    net
        The network (its ``candidates`` table lists the routes that may be built).
    options
        ``utilisation_ceiling``, ``k_paths`` (the starting paths), ``backend``, ``time_limit_s`` (the MIP),
        ``bound_time_limit_s`` (column generation), ``mip_gap``, ``candidates``; ``survive`` must be ``none``.

    Returns
    -------
    SurvivableDesign
        With ``failure_kind`` none, ``bound`` the column-generation bound and ``restricted_optimum`` the MIP's
        optimum among designs that route over the paths it was given.

    Raises
    ------
    ValueError
        When ``options.survive`` is not ``none`` (failure states: :func:`design_survivable`).
    SolverError
        When the MIP finds no solution within its time limit.

    Example
    -------
    >>> d = design_intact(net, SurviveOptions(survive="none"))  # doctest: +SKIP
    >>> d.lower_bound_usd <= d.cost_usd
    True
    """
    progress = progress or no_progress
    t0 = time.perf_counter()
    opts = options if options is not None else SurviveOptions.model_validate({"survive": "none"})
    if opts.survive != "none":
        raise ValueError(f"design_intact designs the intact state only; survive {opts.survive!r} needs "
                         "design_survivable")
    base = net if opts.candidates else net.drop_candidates(net.candidates.index)
    full = full_network(base)
    comm = Commodities.of_network(full)
    progress(0.02, f"paths: {opts.k_paths} per demand, with and without every candidate route")
    seed = state_block(base, full, "intact", (), opts.k_paths, opts.utilisation_ceiling, comm)
    progress(0.05, "lower bound: the LP over every candidate and every admissible path (column generation)")
    deadline = time.perf_counter() + opts.bound_time_limit_s
    tol = survive_tolerance_gbps(net)
    lp = path_lp_bound(base, full, [seed], comm, opts.bound_time_limit_s, opts.backend, progress)
    blocks = lp.blocks or [seed]
    cut: MetricCutBound | None = None
    if lp.prices is not None and deadline - time.perf_counter() > 1.0:
        progress(0.5, "integer bound: metric inequalities over every admissible path, whole modules and routes")
        cut = metric_cut_bound(base, full, blocks, comm, lp.prices, deadline - time.perf_counter(), tol,
                               opts.backend, opts.mip_gap, progress)
        blocks = cut.blocks or blocks
    n_paths = len(blocks[0].var_demand)
    progress(0.9, f"design: the MIP over every candidate route and {n_paths:,} paths")
    mip = solve_mip(base, full, blocks, opts.time_limit_s, opts.backend, opts.mip_gap, tol, comm)
    return _result(net, base, full, opts, mip, lp, cut, n_paths, time.perf_counter() - t0)


def _result(net: Network, base: Network, full: Network, opts: SurviveOptions, mip: MipDesign, lp: PathLPBound,
            cut: MetricCutBound | None, n_paths: int, seconds: float) -> SurvivableDesign:
    """The :class:`SurvivableDesign` of the intact design: cost, true bound and gap, restricted optimum."""
    cost = float(mip.cost_usd)
    unmet = float(mip.unmet_gbps.sum())  # routable demand the design leaves unmet (0 unless capacity runs out)
    bound = bound_record(lp, cut, unmet, survive_tolerance_gbps(net))
    bound_usd = bound.bound_usd
    if bound_usd is not None and cost < bound_usd <= cost * (1 + 1e-7) + 1e-6:
        bound_usd = cost  # LP tolerance
        bound = DesignBound.model_validate({**bound.given(), "bound_usd": cost})
    gap = design_gap(cost, bound_usd)
    status = "optimal" if gap is not None and gap <= max(opts.mip_gap, 1e-6) else "feasible"
    n_cands = int((~full.links.index.isin(base.links.index)).sum())
    restriction = (f"designs that route over the {n_paths:,} paths column generation ended with "
                   f"({opts.k_paths} shortest admissible paths per demand with and without the candidates, the rest "
                   "priced in), " + (f"every one of the {n_cands} candidate routes open" if n_cands else
                                      "no candidate route in the scenario"))
    restricted_bound = mip.bound_usd
    after, _, _ = apply_design(net, full, mip)
    upgrades = upgrade_table(base, full, mip, ["intact"])
    upgrades["protects"] = [["intact"] for _ in range(len(upgrades))]  # the one state: all of it is for it
    iteration = DesignIteration(iteration=1, working_states=0, added=0, violated=0, cost_usd=cost,
                                restricted_bound_usd=restricted_bound, mip_status=mip.solver_status,
                                mip_seconds=round(mip.seconds, 3), path_rounds=lp.rounds, paths=n_paths,
                                unmet_gbps=round(unmet, 3), sweep_seconds=0.0, model=mip.stats)
    restricted = RestrictedOptimum(cost_usd=cost, bound_usd=restricted_bound,
                                   gap=design_gap(cost, restricted_bound),
                                   status=mip.solver_status, restriction=restriction)
    return SurvivableDesign(
        status=status, failure_kind="none", cost_usd=cost, lower_bound_usd=bound_usd, gap=gap,
        upgrades=upgrades, network_after=after, iterations=[iteration],
        states_examined=0, working_set=[], records_after=[], not_survivable=[], violated=[],
        ceiling=opts.utilisation_ceiling, failure_ceiling=opts.failure_utilisation_ceiling, converged=True,
        seconds=seconds, model=mip.stats, bound=bound, restricted_optimum=restricted)


def bound_record(lp: PathLPBound, cut: MetricCutBound | None, unmet_gbps: float, tol_gbps: float) -> DesignBound:
    """The design's ``bound``: the better of the LP relaxation's and the metric-inequality MIP's bound, with how
    each was proven. A design leaving more than ``tol_gbps`` of routable demand unmet is bounded by the LP alone
    (less the penalty of what it leaves: :meth:`PathLPBound.bound_usd`); the cut MIP bounds designs that carry it."""
    lp_record = lp.record(unmet_gbps if unmet_gbps > tol_gbps else 0.0)
    lp_usd = lp_record.bound_usd
    integer_usd = cut.bound_usd if cut is not None and unmet_gbps <= tol_gbps else None
    parts = [f"LP {money_text(lp_usd)} ({lp.rounds} column-generation rounds, {lp.paths_added:,} paths priced in"
             + (f"; {lp.note}" if lp.note else "") + ")"]
    if cut is not None:
        parts.append(f"whole modules and routes {money_text(integer_usd)} ({cut.rounds} cut MIPs, {cut.cuts} metric "
                     "inequalities; " + CUT_STATUS_TEXT[cut.status] + ")")
    return DesignBound.model_validate({
        **lp_record.given(), "covers": INTACT_COVERS,
        "bound_usd": integer_usd if integer_usd is not None and (lp_usd is None or integer_usd > lp_usd) else lp_usd,
        "seconds": round(lp.seconds + (cut.seconds if cut is not None else 0.0), 3),
        "note": "best of " + " and ".join(parts), "lp_bound_usd": lp_usd, "integer_bound_usd": integer_usd,
        "cut_rounds": cut.rounds if cut is not None else 0, "cuts": cut.cuts if cut is not None else 0,
        "cut_status": cut.status if cut is not None else "skipped"})


INTACT_COVERS = ("every design that upgrades links and builds any of the candidate routes in whole modules, routes each "
                 "demand over any latency-admissible path (within its SLO) and carries the intact state's routable "
                 "demand within the utilisation ceiling (demand with no admissible path even with every candidate "
                 "built is excused)")
"""What the intact design's bound covers, in one sentence (``bound.covers``)."""

CUT_STATUS_TEXT = {
    "optimal": "a cut-MIP design carries the demand over admissible paths: the bound is the optimum",
    "time_limit": "stopped by bound_time_limit_s",
    "stalled": "a check stopped before it proved its design short",
    "infeasible": "no design carries all routable demand, so this bound does not apply",
}
"""What the metric-inequality loop's status means, in the bound's note."""


def money_text(usd: float | None) -> str:
    """``12.3 M USD`` (or ``75,789 USD`` below 0.1 M; ``-`` for None)."""
    if usd is None:
        return "-"
    return f"{usd / 1e6:,.1f} M USD" if abs(usd) >= 1e5 else f"{usd:,.0f} USD"
