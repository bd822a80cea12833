"""Solve the placement program and turn the solution into planner tables and a JSON summary.

Result tables (also the checker's input, :mod:`backbone.solver.checks.placement`):

* ``sites``: every candidate site, considered -> chosen: GPUs before / added / after, blocks, MW
  before / built / after, capex, opex, GPUs used at peak, training GPUs.
* ``flows``: per period and route: metro, class, serving site, access site, links (travel order from
  the access site), GPUs, Gbps, RTT.
* ``assignments``: flows summed over paths: period, metro, class, site, GPUs, RTT (worst route used),
  share of the unit's demand in that period.
* ``metros``: per unit: peak demand, served at peak, unserved, access site, serving sites.
* ``existing``: the scenario's demands as routed jointly: demand, src, dst, links, Gbps.
* ``links``: per link: placement Gbps and scenario Gbps (worst period, worst direction), utilisation.
* ``training``: job, site, GPUs.
* ``n_plus_one``: per candidate site (``failed``): GPUs of served demand the survivors cannot
  re-serve within SLO if it is lost (``shortfall_gpus``, 0 when covered) and the units concerned.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from backbone.errors import SolverError
from backbone.model import Network
from backbone.solver.backends import get_backend
from backbone.solver.core.problem import Solution, Status, solve
from backbone.solver.paths.candidates import PathSet
from backbone.solver.placement.formulation import PlacementModel, build_placement
from backbone.solver.placement.inputs import PlacementInputs, build_inputs
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.placement.rounding import round_relaxation
from backbone.solver.placement.work_result import (
    replica_table,
    training_table,
    workload_arc_gbps,
    workload_flows,
)

logger = logging.getLogger(__name__)

TOL = 1e-6
"""Values below this (GPUs, Gbps) are zero in the tables."""

MAX_REASONS = 15
"""Per kind of reason (bottleneck links, scenario demands), list at most this many."""

SHORTFALL_TOL = 1e-4
"""Unserved GPUs + unplaced jobs + unrouted Gbps above this mean the plan does not serve everything."""


@dataclass
class PlacementResult:
    """A solved placement: status, figures, tables and the planner-facing infeasibility reasons."""

    status: str
    objective: float
    gap: float | None
    lp_bound: float | None
    solve_seconds: float
    backend: str
    tables: dict[str, pd.DataFrame]
    totals: dict[str, float]
    infeasibility: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def fully_served(self) -> bool:
        """Whether all inference demand, training jobs, N+1 backups and scenario demands are served."""
        return _shortfall(self.totals) <= SHORTFALL_TOL


def solve_placement(net: Network, opts: PlaceOptions,
                    progress: Callable[[float, str], None] | None = None) -> PlacementResult:
    """Build, solve and report the placement.

    Parameters
    ----------
    net
        The network (metros carry the demand; candidate sites the supply).
    opts
        Placement options.
    progress
        ``progress(fraction, message)`` callback.

    Returns
    -------
    PlacementResult
        With ``infeasibility`` reasons when min-cost cannot serve everything.

    Raises
    ------
    ValidationError
        Bad options (unknown sites, ...) or no candidate site.
    SolverError
        When the backend fails or finds no plan within the time limit.
    """
    progress = progress or (lambda f, m: None)
    progress(0.02, "deriving latency, candidate sites and routes")
    inp = build_inputs(net, opts)
    progress(0.15, f"building the model ({len(inp.units)} demand units, {len(inp.sites)} sites, "
                   f"{len(inp.routes)} routes, {inp.n_periods} period(s))")
    model = build_placement(inp)
    stats = model.lp.stats()
    logger.info("placement model: %s", stats)
    lp_bound = None
    limit = opts.time_limit_s
    rounded: tuple[PlacementModel, Solution] | None = None
    t_lp = 0.0
    if opts.lp_bound:
        progress(0.2, "solving the LP relaxation")
        relaxed = solve(model.lp.relaxed(), backend=opts.backend, time_limit_s=limit, mip_gap=opts.mip_gap)
        t_lp = relaxed.solve_seconds
        if relaxed.status == Status.OPTIMAL:
            lp_bound = relaxed.objective
            progress(0.25, "rounding the LP relaxation into a starting plan")
            rounded = round_relaxation(inp, relaxed, opts)
    progress(0.3, f"solving the MIP with {opts.backend} (limit {limit:.0f} s)")
    takes_start = bool(getattr(get_backend(opts.backend), "supports_start", False))
    start = rounded[1].x if takes_start and rounded is not None and rounded[1].status.has_solution else None
    # HiGHS maps a start through its presolve wrongly on this program (the start's objective in the reduced space
    # is not the start's, and the start is lost): a started MIP is solved without presolve
    sol = solve(model.lp, backend=opts.backend, time_limit_s=limit, mip_gap=opts.mip_gap, start=start,
                presolve=start is None)
    seconds = sol.solve_seconds + t_lp + (rounded[1].solve_seconds if rounded else 0.0)
    status, gap = sol.status, sol.gap
    if rounded is not None and rounded[1].status.has_solution and (
            not sol.status.has_solution or rounded[1].objective < sol.objective - 1e-9 * abs(sol.objective)):
        # the MIP stopped (time limit) with a worse plan than the rounded relaxation: keep the better
        bounds = [b for b in (sol.bound, lp_bound) if b is not None and np.isfinite(b)]
        model, sol = rounded
        bound = max(bounds) if bounds else None
        gap = None if bound is None else abs(sol.objective - bound) / max(abs(sol.objective), 1e-9)
        status = Status.OPTIMAL if gap is not None and gap <= opts.mip_gap else Status.FEASIBLE
        logger.info("placement: the rounded LP relaxation beats the MIP incumbent (gap %s)", gap)
    if not sol.status.has_solution:
        raise SolverError(f"placement: no plan found by {sol.backend} ({sol.status.value}: {sol.message})")
    progress(0.85, "writing tables")
    tables = result_tables(model, sol)
    totals = _totals(model, sol, tables)
    reasons: list[str] = []
    if opts.objective == "min-cost" and _shortfall(totals) > SHORTFALL_TOL:
        progress(0.9, "diagnosing unserved demand")
        reasons = diagnose(inp, tables)
    return PlacementResult(status.value, float(sol.objective), gap, lp_bound, float(seconds),
                           sol.backend, tables, totals, reasons, list(inp.notes), stats)


def _shortfall(totals: dict[str, float]) -> float:
    return (totals["unserved_gpus"] + totals["n1_unserved_gpus"] + totals["training_unplaced"]
            + totals["existing_unrouted_gbps"])


# ---------------------------------------------------------------------- tables
def result_tables(model: PlacementModel, sol: Solution) -> dict[str, pd.DataFrame]:
    """The planner tables of a solved placement (see the module docstring)."""
    inp = model.inputs
    opts = inp.opts
    T, R = inp.n_periods, len(inp.routes)
    units, sites, routes = inp.units, inp.sites, inp.routes
    serve = sol.values("serve").to_numpy().reshape(T, R)
    blocks = np.round(sol.values("blocks").to_numpy())
    power = np.maximum(sol.values("power").to_numpy(), 0.0)
    build = np.round(sol.values("build").to_numpy())
    train = np.round(sol.values("train").to_numpy())

    tt, rr = np.nonzero(serve > TOL)
    r_unit, r_site = routes["unit"].to_numpy()[rr], routes["site"].to_numpy()[rr]
    gpus = serve[tt, rr]
    flows = pd.DataFrame({
        "period": tt, "metro": units["metro"].to_numpy()[r_unit], "class": units["klass"].to_numpy()[r_unit],
        "site": sites.index.to_numpy()[r_site], "access_site": units["access_site"].to_numpy()[r_unit],
        "links": _links_text(inp.route_pathset, routes["path"].to_numpy()[rr]), "gpus": gpus, "gbps": gpus * opts.gbps_per_gpu,
        "rtt_ms": routes["rtt_ms"].to_numpy()[rr],
    })
    demand_t = units["demand_gpus"].to_numpy()[r_unit] * inp.factors[r_unit, tt]
    flows["_demand"] = demand_t
    robust = inp.pairs["robust"].to_numpy(bool) if "robust" in inp.pairs else np.ones(len(inp.pairs), bool)
    flows["_robust"] = robust[routes["pair"].to_numpy()[rr]]
    assignments = (flows.groupby(["period", "metro", "class", "site"], sort=True)
                   .agg(gpus=("gpus", "sum"), rtt_ms=("rtt_ms", "max"), demand=("_demand", "first"),
                        slo_survives_failures=("_robust", "all")).reset_index())
    assignments["share"] = assignments["gpus"] / assignments["demand"].where(assignments["demand"] > 0, 1.0)
    assignments = assignments.drop(columns="demand")
    flows = flows.drop(columns=["_demand", "_robust"])

    # sites: considered -> chosen
    B = opts.block
    mw_per_gpu = opts.kw_per_gpu / 1000.0
    train_gpus = inp.work.option_gpus @ train
    used = np.zeros((T, len(sites)))
    np.add.at(used, (tt, r_site), gpus)
    g0 = sites["gpus_installed"].to_numpy(dtype=float)
    added = blocks * B + 0.0
    site_t = pd.DataFrame({
        "name": sites["name"], "region": sites["region"], "country": sites["country"],
        "gpus_before": g0, "gpus_added": added, "gpus_after": g0 + added, "gpus_max": sites["gpus_cap"],
        "blocks": blocks.astype(int), "built": build > 0.5,
        "gpus_used_peak": (used.max(axis=0) if T else 0.0) + train_gpus, "training_gpus": train_gpus,
        "mw_before": sites["power_base_mw"], "mw_built": power, "mw_after": sites["power_base_mw"] + power,
        "mw_needed": (g0 + added) * mw_per_gpu, "power_max_mw": sites["power_cap_mw"],
        "capex_usd": added * sites["capex_per_gpu_usd"] + power * sites["capex_per_mw_usd"]
        + build * opts.site_fixed_cost_usd,
        "opex_usd": added * sites["opex_per_gpu_usd"],
    }, index=sites.index)
    site_t.index.name = "site"

    # metros (units): peak demand vs served at the unit's peak period
    K = len(units)
    peak = units["peak_period"].to_numpy()
    served_t = np.zeros((T, K))
    np.add.at(served_t, (tt, r_unit), gpus)
    unserved = sol.values("unserved").to_numpy().reshape(T, K)
    serving = flows.groupby(["metro", "class"])["site"].agg(lambda s: ";".join(sorted(set(s))))
    metros = pd.DataFrame({
        "metro": units["metro"], "class": units["klass"], "slo_rtt_ms": units["slo_rtt_ms"],
        "demand_gpus": units["demand_gpus"], "served_gpus": served_t[peak, np.arange(K)] if K else 0.0,
        "unserved_gpus": np.maximum(unserved[peak, np.arange(K)], 0.0) if K else 0.0,
        "access_site": units["access_site"], "access_km": units["access_km"], "peak_period": peak,
    }, index=units.index)
    metros["sites"] = [serving.get((m, c), "") for m, c in zip(metros["metro"], metros["class"], strict=True)]

    # existing demands as routed
    ex = sol.values("existing").to_numpy() if len(inp.existing_paths) else np.zeros(0)
    keep = ex > TOL
    ep = inp.existing_paths[keep]
    existing = pd.DataFrame({
        "demand": inp.existing.index.to_numpy()[ep["demand"].to_numpy()],
        "src": inp.existing["src"].to_numpy()[ep["demand"].to_numpy()],
        "dst": inp.existing["dst"].to_numpy()[ep["demand"].to_numpy()],
        "links": _links_text(inp.existing_pathset, np.flatnonzero(keep)), "gbps": ex[keep],
    })

    # link loads (worst period, worst direction)
    net = inp.net
    L = len(net.links)
    place_link = (serve @ inp.route_links) * opts.gbps_per_gpu if R else np.zeros((T, L))  # T x L
    exist_arc = inp.existing_arcs.T @ ex if len(ex) else np.zeros(2 * L)
    work_arc = workload_arc_gbps(inp.work, sol)
    load_arc = exist_arc + work_arc
    both = np.concatenate([place_link + load_arc[None, :L], place_link + load_arc[None, L:]], axis=0)
    cap = net.links["capacity_gbps"].to_numpy(dtype=float)
    links = pd.DataFrame({
        "placement_gbps": place_link.max(axis=0) if T else 0.0,
        "existing_gbps": np.maximum(exist_arc[:L], exist_arc[L:]),
        "workload_gbps": np.maximum(work_arc[:L], work_arc[L:]),
        "load_gbps": both.max(axis=0), "capacity_gbps": cap,
    }, index=net.links.index)
    links["utilisation"] = links["load_gbps"] / cap

    if "backup_unserved" in model.lp.variables:
        v = sol.values("backup_unserved").clip(lower=0.0)
        v = v[v > TOL]
        fail = v.index.get_level_values("failed")
        short = pd.Series(v.to_numpy(), index=fail).groupby(level=0).sum().reindex(sites.index, fill_value=0.0)
        names = pd.Series(v.index.get_level_values("unit").astype(str), index=fail, dtype=object)
        joined = {f: ";".join(g) for f, g in names.groupby(level=0)} if len(names) else {}
        n1 = pd.DataFrame({"shortfall_gpus": short.to_numpy(dtype=float),
                           "units": [joined.get(f, "") for f in sites.index]}, index=sites.index)
    else:
        n1 = pd.DataFrame({"shortfall_gpus": [], "units": []}, index=pd.Index([], name="failed"))
    n1.index.name = "failed"

    return {"sites": site_t, "flows": flows, "assignments": assignments, "metros": metros,
            "existing": existing, "links": links, "training": training_table(inp.work, inp.sites, sol, inp.sites["cost_per_block_usd"].to_numpy(dtype=float) / opts.block), "n_plus_one": n1,
            "replicas": replica_table(inp.work, inp.sites.index, sol),
            "workload_flows": workload_flows(inp.work, inp.sites.index, sol)}


def _links_text(ps: PathSet | None, paths: np.ndarray) -> list[str]:
    """';'-joined link ids in travel order of each path (-1: the empty local route)."""
    if ps is None:
        return ["" for _ in paths]
    return ["" if p < 0 else ";".join(ps.path_links(int(p))) for p in paths]  # used paths only


def _totals(model: PlacementModel, sol: Solution, tables: dict[str, pd.DataFrame]) -> dict[str, float]:
    inp = model.inputs
    s = tables["sites"]
    m = tables["metros"]
    demand = float(m["demand_gpus"].sum())
    served_avg = float(tables["flows"]["gpus"].sum()) / inp.n_periods
    demand_avg = float((inp.units["demand_gpus"].to_numpy()[:, None] * inp.factors).sum()) / inp.n_periods
    n1 = float(tables["n_plus_one"]["shortfall_gpus"].max()) if len(tables["n_plus_one"]) else 0.0
    storage = float(tables["replicas"]["cost_usd"].sum()) if len(tables.get("replicas", ())) else 0.0
    capex, opex = float(s["capex_usd"].sum()) + storage, float(s["opex_usd"].sum())
    return {
        "cost_usd": capex + opex, "capex_usd": capex, "opex_usd": opex, "storage_capex_usd": storage,
        "gpus_before": float(s["gpus_before"].sum()), "gpus_added": float(s["gpus_added"].sum()),
        "gpus_after": float(s["gpus_after"].sum()), "mw_built": float(s["mw_built"].sum()),
        "demand_gpus_peak": demand, "served_gpus_peak": float(m["served_gpus"].sum()),
        "served_share": served_avg / demand_avg if demand_avg > 0 else 1.0,
        "unserved_gpus": float(sol.values("unserved").clip(lower=0).max()) if len(m) else 0.0,
        "n1_unserved_gpus": max(n1, 0.0),
        "training_unplaced": float(sol.values("train_unplaced").sum()),
        "existing_unrouted_gbps": float(sol.values("existing_unrouted").clip(lower=0).sum()),
        "max_link_utilisation": float(tables["links"]["utilisation"].max()) if len(tables["links"]) else 0.0,
    }


# ---------------------------------------------------------------------- infeasibility, in planner's terms
def diagnose(inp: PlacementInputs, tables: dict[str, pd.DataFrame]) -> list[str]:
    """Why demand cannot all be served: structural reasons first, then the limits an elastic
    re-solve (LP relaxation with priced excess GPUs, MW and Gbps) had to stretch."""
    opts = inp.opts
    has_pair = np.bincount(inp.pairs["unit"].to_numpy(), minlength=len(inp.units)) > 0
    reasons = _structural_reasons(inp, has_pair) + _n_plus_one_reasons(tables)
    model = build_placement(inp, elastic=True)
    sol = solve(model.lp.relaxed(), backend=opts.backend, time_limit_s=opts.time_limit_s, mip_gap=opts.mip_gap)
    if not sol.status.has_solution:
        reasons.append(f"diagnostic re-solve failed ({sol.status.value})")
        return reasons
    reasons += _site_limit_reasons(inp, sol)
    if "extra_gbps" in model.lp.variables:
        reasons += _link_reasons(inp, sol)
    reasons += _unserved_reasons(inp, sol, has_pair)
    if "existing_unrouted" in model.lp.variables:
        reasons += _existing_reasons(inp, sol)
    if not reasons:
        reasons.append("demand could not be fully served within the time limit (no single limit identified)")
    return reasons


def _structural_reasons(inp: PlacementInputs, has_pair: np.ndarray) -> list[str]:
    """Metros no allowed site can serve within their SLO, and training jobs no allowed site can host."""
    reasons: list[str] = []
    units = inp.units
    rtt = inp.rtt_ms
    for pos in np.flatnonzero(~has_pair):
        u = units.iloc[pos]
        r = rtt.loc[u["metro"], inp.sites.index]
        nearest = r.idxmin() if np.isfinite(r.min()) else None
        where = f"; nearest candidate site {nearest} at {r.min():.1f} ms" if nearest is not None else ""
        blocked = ""
        if nearest is not None and r.min() <= u["slo_rtt_ms"]:
            blocked = " (residency rules exclude every site within the SLO)"
        reasons.append(f"metro {u['metro']}: {u['demand_gpus']:,.0f} {u['klass']} GPUs cannot be served within "
                       f"{u['slo_rtt_ms']:.0f} ms RTT from any allowed site{where}{blocked}")
    reasons += list(inp.work.unplaceable.values())
    return reasons


def _n_plus_one_reasons(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The sites whose loss leaves demand without a surviving site within its SLO (N+1), largest first."""
    reasons: list[str] = []
    n1 = tables.get("n_plus_one")
    if n1 is None or not len(n1):
        return reasons
    short = n1[n1["shortfall_gpus"] > 1e-3].sort_values("shortfall_gpus", ascending=False)
    for failed, row in short.iloc[:MAX_REASONS].iterrows():
        units_left = row["units"].split(";")
        more = f" and {len(units_left) - 5} more" if len(units_left) > 5 else ""
        reasons.append(f"N+1: losing site {failed} leaves {row['shortfall_gpus']:,.0f} GPUs of demand without "
                       f"a surviving site within SLO ({', '.join(units_left[:5])}{more})")
    if len(short) > MAX_REASONS:
        reasons.append(f"... and {len(short) - MAX_REASONS} more sites whose loss is not covered")
    return reasons


def _site_limit_reasons(inp: PlacementInputs, sol: Solution) -> list[str]:
    """Sites at their power cap or GPU maximum in the elastic re-solve ``sol``."""
    reasons: list[str] = []
    extra_g = sol.values("extra_gpus")
    extra_mw = sol.values("extra_mw")
    for sid in inp.sites.index:
        g, mw = float(extra_g[sid]), float(extra_mw[sid])
        power_limited = bool(inp.sites.at[sid, "power_limited"])
        if mw > 1e-4 or (g > 1e-3 and power_limited):
            reasons.append(f"site {sid} is at its power cap ({inp.sites.at[sid, 'power_cap_mw']:,.1f} MW): "
                           f"about {mw:,.1f} MW more would be needed")
        if g > 1e-3 and not power_limited:
            reasons.append(f"site {sid} is at its GPU maximum ({inp.sites.at[sid, 'gpus_cap']:,.0f}): "
                           f"about {g:,.0f} more GPUs would be needed there")
    return reasons


def _link_reasons(inp: PlacementInputs, sol: Solution) -> list[str]:
    """Link directions the elastic re-solve ``sol`` had to stretch, largest first."""
    reasons: list[str] = []
    extra_l = sol.values("extra_gbps")
    extra_l = extra_l[extra_l > 1e-3].sort_values(ascending=False)
    links = inp.net.links
    if len(extra_l) > MAX_REASONS:
        reasons.append(f"{len(extra_l)} link directions are bottlenecks; the {MAX_REASONS} largest:")
    for (lid, d), v in extra_l.iloc[:MAX_REASONS].items():
        a, b = links.at[lid, "site_a"], links.at[lid, "site_b"]
        a, b = (a, b) if d == "ab" else (b, a)
        reasons.append(f"link {lid} ({a} -> {b}, {links.at[lid, 'capacity_gbps']:,.0f} Gbps) is a bottleneck: "
                       f"about {v:,.0f} Gbps more would be needed")
    return reasons


def _unserved_reasons(inp: PlacementInputs, sol: Solution, has_pair: np.ndarray) -> list[str]:
    """Demand units left unserved even with every limit stretched (those with an allowed site)."""
    reasons: list[str] = []
    units = inp.units
    left = sol.values("unserved").groupby(level="unit").max()
    for uid, v in left[left > 1e-3].items():
        if has_pair[units.index.get_loc(uid)]:
            reasons.append(f"{uid}: {v:,.0f} GPUs remain unserved even with limits stretched")
    return reasons


def _existing_reasons(inp: PlacementInputs, sol: Solution) -> list[str]:
    """The scenario's own demands left unrouted in the elastic re-solve ``sol``, with why."""
    reasons: list[str] = []
    ex = sol.values("existing_unrouted")
    ex = ex[ex > 1e-3].sort_values(ascending=False)
    n_paths = np.bincount(inp.existing_paths["demand"].to_numpy(), minlength=len(inp.existing))
    has_path = pd.Series(n_paths > 0, index=inp.existing.index)
    for did, v in ex.iloc[:MAX_REASONS].items():
        slo = inp.existing.at[did, "slo_rtt_ms"]
        why = (f"has no path within its {slo:.0f} ms RTT SLO" if not has_path[did]
               else "does not fit the links (with the placement traffic)")
        reasons.append(f"scenario demand {did} ({inp.existing.at[did, 'src']} -> {inp.existing.at[did, 'dst']}): "
                       f"{v:,.1f} Gbps unrouted: {why}")
    if len(ex) > MAX_REASONS:
        reasons.append(f"... and {len(ex) - MAX_REASONS} more scenario demands ({ex.iloc[MAX_REASONS:].sum():,.0f} Gbps)")
    return reasons
