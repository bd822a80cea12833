"""Independent check of a network design: does the installed capacity carry every demand (in
every network state), and what does the design really cost?

It reads only the instance (the problem) and the link configurations (the answer, as the SNDlib
solution format lists them: per link ``(capacity, count)`` pairs with pre-installed capacity as
a module of count 1), and builds its own flow LP on that fixed capacity (one commodity per source node, every
network state, no module variables or cut-set rows: exact for whether the capacity carries the demand and for
the least routing cost) from the instance's arrays, solved with ``scipy.optimize.linprog``, not through the
solver seam and not from :mod:`backbone.solver.design`'s program. The objective is recomputed from the
link list (module costs, setup, pre-installed cost) plus the minimum routing cost on the design.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from backbone.model import Network
from backbone.serialize import finite_or_none
from backbone.solver.checks import CheckReport, Violation
from backbone.solver.checks.records import DesignCheckRecord
from backbone.solver.design import DesignInstance

logger = logging.getLogger(__name__)

TOL = 1e-6


@dataclass
class DesignCheck:
    """Recomputed costs and the check report."""

    report: CheckReport
    capacity_cost: float = 0.0
    setup_cost: float = 0.0
    preinstalled_cost: float = 0.0
    routing_cost: float = math.nan
    unserved: dict[str, float] = field(default_factory=dict)  # state -> total unserved volume

    @property
    def ok(self) -> bool:
        return self.report.ok

    @property
    def total_cost(self) -> float:
        """SNDlib objective of the design with its cheapest routing."""
        return self.capacity_cost + self.setup_cost + self.preinstalled_cost + self.routing_cost

    def record(self) -> DesignCheckRecord:
        """The check's typed record (a design summary's ``verification``): the report's plus the costs
        recomputed (None when not finite)."""
        return DesignCheckRecord(**dict(self.report.record()), capacity_cost=self.capacity_cost,
                                 setup_cost=self.setup_cost, preinstalled_cost=self.preinstalled_cost,
                                 routing_cost=finite_or_none(self.routing_cost),
                                 total_cost=finite_or_none(self.total_cost), unserved=self.unserved)

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON document (:meth:`record`, dumped): for a caller at the file or API edge."""
        return self.record().document()


Configurations = Mapping[str, Sequence[tuple[float, float]]]


def configurations_from_counts(inst: DesignInstance, counts: np.ndarray) -> dict[str, list[tuple[float, float]]]:
    """Link configurations (pre-installed first) from per-module counts of ``inst``."""
    out: dict[str, list[tuple[float, float]]] = {}
    pre = inst.links["preinstalled"].to_numpy(float)
    link = inst.modules["link"].to_numpy(int)
    cap = inst.modules["capacity"].to_numpy(float)
    for i, lid in enumerate(inst.links.index):
        entries = [(float(pre[i]), 1.0)] if pre[i] > 0 else []
        entries += [(float(cap[m]), float(counts[m])) for m in np.flatnonzero((link == i) & (counts > 0))]
        out[str(lid)] = entries
    return out


def installed_capacity(inst: DesignInstance, configurations: Configurations, report: CheckReport) -> tuple[
        np.ndarray, float, float]:
    """(capacity per link, module cost, setup cost) from the link list, reporting entries that
    are not installable on their link."""
    pre = inst.links["preinstalled"].to_numpy(float)
    mod_link = inst.modules["link"].to_numpy(int)
    mod_cap = inst.modules["capacity"].to_numpy(float)
    mod_cost = inst.modules["cost"].to_numpy(float)
    setup = inst.links["setup_cost"].to_numpy(float)
    capacity = np.zeros(inst.n_links)
    cost = setup_cost = 0.0
    unknown = set(configurations) - {str(x) for x in inst.links.index}
    for lid in sorted(unknown):
        report.add(Violation("links", "links", lid, "configuration for a link the instance does not have"))
    for i, lid in enumerate(inst.links.index):
        entries = [(float(c), float(n)) for c, n in configurations.get(str(lid), [])]
        capacity[i] = sum(c * n for c, n in entries)
        if pre[i] > 0:  # pre-installed capacity is listed as one module
            for j, (c, n) in enumerate(entries):
                if math.isclose(c, pre[i], rel_tol=1e-9) and n >= 1 - TOL:
                    entries[j] = (c, n - 1)
                    break
            else:
                report.add(Violation("preinstalled", "links", str(lid), "pre-installed capacity missing",
                                     value=0.0, limit=float(pre[i])))
                capacity[i] += pre[i]
        n_modules = 0.0
        for c, n in entries:
            if n <= TOL:
                continue
            match = np.flatnonzero((mod_link == i) & np.isclose(mod_cap, c, rtol=1e-9))
            if not len(match):
                report.add(Violation("module", "links", str(lid), f"capacity {c:g} is not installable here", value=c))
                continue
            if inst.capacity_model != "L" and abs(n - round(n)) > TOL:
                report.add(Violation("integrality", "links", str(lid), f"{n:g} modules of {c:g}", value=n))
            mmax = inst.modules["max_count"].to_numpy(float)[match[0]]
            if n > mmax + TOL:
                report.add(Violation("max_count", "links", str(lid), f"{n:g} modules of {c:g}", value=n, limit=mmax))
            cost += n * float(mod_cost[match].min())
            n_modules += n
        if inst.capacity_model == "E" and n_modules > 1 + TOL:
            report.add(Violation("explicit", "links", str(lid), "more than one explicit capacity", value=n_modules,
                                 limit=1.0))
        if inst.fixed_charge and pre[i] <= 0 and n_modules > TOL:
            setup_cost += float(setup[i])
    report.checked += ["link configurations"]
    return capacity, cost, setup_cost


def check_design(inst: DesignInstance, configurations: Configurations, time_limit_s: float = 120.0,
                 reported_cost: float | None = None, reported_optimal: bool = False) -> DesignCheck:
    """Check a design against its instance with an independent flow LP, and its reported cost.

    Parameters
    ----------
    time_limit_s
        Seconds for each of the check's flow LPs.
    reported_cost
        The objective the solver reported for this design: it must not be below what the design
        really costs (module, setup and pre-installed costs plus its cheapest routing), and when
        ``reported_optimal`` it must equal it (within ``OBJECTIVE_RTOL``).

    Returns
    -------
    DesignCheck
        ``ok`` when every link entry is installable, every demand is carried in every state and
        the reported cost is the design's; the costs recomputed from the link list and the
        cheapest routing on it.
    """
    result = _check_design(inst, configurations, time_limit_s)
    if reported_cost is not None and math.isfinite(result.total_cost):
        result.report.checked.append("reported objective")
        real = result.total_cost
        tol = OBJECTIVE_RTOL * max(1.0, abs(real))
        if reported_cost < real - tol:
            result.report.add(Violation("objective", "design", inst.name, f"reported cost {reported_cost:,.6f} is "
                                        f"below what the design costs, {real:,.6f}", value=reported_cost, limit=real))
        elif reported_optimal and reported_cost > real + tol:
            result.report.add(Violation("objective", "design", inst.name, f"reported optimal cost {reported_cost:,.6f}"
                                        f" but the same design routes for {real:,.6f}", value=reported_cost,
                                        limit=real))
    return result


OBJECTIVE_RTOL = 1e-6
"""Relative tolerance between a reported and a recomputed design cost."""


def _check_design(inst: DesignInstance, configurations: Configurations, time_limit_s: float) -> DesignCheck:
    from scipy.optimize import linprog

    report = CheckReport(f"design {inst.name}")
    capacity, cap_cost, setup_cost = installed_capacity(inst, configurations, report)
    result = DesignCheck(report, cap_cost, setup_cost, float(inst.links["preinstalled_cost"].sum()))
    if inst.fixed_charge:
        pre = inst.links["preinstalled"].to_numpy(float) > 0
        result.setup_cost += float(inst.links["setup_cost"].to_numpy(float)[pre].sum())
    dem = inst.demands[inst.demands["volume"] > 0]
    if len(dem) == 0:
        result.routing_cost = 0.0
        return result
    a, b = inst.links["a"].to_numpy(int), inst.links["b"].to_numpy(int)
    n_links, n_nodes = inst.n_links, len(inst.nodes)
    if inst.link_model == "D":
        tail, head, arc_link = a, b, np.arange(n_links)
    else:
        tail, head, arc_link = np.r_[a, b], np.r_[b, a], np.r_[np.arange(n_links), np.arange(n_links)]
    n_arcs, n_dem, n_states = len(tail), len(dem), len(inst.states)
    arcs = np.arange(n_arcs)
    inc = sp.coo_matrix((np.r_[np.ones(n_arcs), -np.ones(n_arcs)], (np.r_[tail, head], np.r_[arcs, arcs])),
                        shape=(n_nodes, n_arcs)).tocsr()
    s, t, vol = dem["s"].to_numpy(int), dem["t"].to_numpy(int), dem["volume"].to_numpy(float)
    sources, commodity = np.unique(s, return_inverse=True)
    n_dem = len(sources)  # commodities: one per source
    rhs_one = np.zeros((n_dem, n_nodes))
    np.add.at(rhs_one, (commodity, s), vol)
    np.add.at(rhs_one, (commodity, t), -vol)
    n_x = n_states * n_dem * n_arcs
    eq = sp.kron(sp.identity(n_states * n_dem), inc, format="csr")
    eq_rhs = np.tile(rhs_one.ravel(), n_states)
    # capacity rows: link (U: both arcs), arc (B), arc (D)
    if inst.link_model == "U":
        cap_pat = sp.coo_matrix((np.ones(n_arcs), (arc_link, np.arange(n_arcs))), shape=(n_links, n_arcs)).tocsr()
        cap_rhs = capacity
    else:
        cap_pat = sp.identity(n_arcs, format="csr")
        cap_rhs = capacity[arc_link]
    ub_rows = sp.kron(sp.identity(n_states), sp.kron(np.ones((1, n_dem)), cap_pat), format="csr")
    ub_rhs = np.tile(cap_rhs, n_states)
    bounds_x = np.full((n_states, n_dem, n_arcs), np.inf)
    for k, failed in enumerate(inst.states):
        if failed:
            bounds_x[k][:, np.isin(arc_link, failed)] = 0.0
    rc = inst.links["routing_cost"].to_numpy(float)
    coupled = n_states > 1 and bool((rc > 0).any())
    c = np.zeros(n_x) if coupled else np.tile(rc[arc_link], n_states * n_dem)
    upper = list(bounds_x.ravel())
    if coupled:  # r_l >= flow on l in every state; cost rc r
        flow_pat = sp.coo_matrix((np.ones(n_arcs), (arc_link, np.arange(n_arcs))), shape=(n_links, n_arcs)).tocsr()
        rows = sp.kron(sp.identity(n_states), sp.kron(np.ones((1, n_dem)), flow_pat), format="csr")
        r_part = -sp.vstack([sp.identity(n_links)] * n_states, format="csr")
        ub_rows = sp.vstack([sp.hstack([ub_rows, sp.csr_matrix((ub_rows.shape[0], n_links))]),
                             sp.hstack([rows, r_part])], format="csr")
        ub_rhs = np.r_[ub_rhs, np.zeros(n_states * n_links)]
        eq = sp.hstack([eq, sp.csr_matrix((eq.shape[0], n_links))], format="csr")
        c = np.r_[c, rc]
        upper += [np.inf] * n_links
    res = linprog(c, A_ub=ub_rows, b_ub=ub_rhs, A_eq=eq, b_eq=eq_rhs, bounds=list(zip([0.0] * len(c), upper,
                  strict=True)), method="highs", options={"time_limit": float(time_limit_s)})
    report.checked += ["demand carried in every state", "routing cost"]
    if res.status == 0:
        result.routing_cost = float(res.fun)
        result.unserved = dict.fromkeys(inst.state_names, 0.0)
        return result
    if res.status != 2:
        report.add(Violation("solver", "design", inst.name, f"check LP did not finish: {res.message}"))
        return result
    # infeasible: find how much each state cannot carry (min unserved, per state)
    for k, name in enumerate(inst.state_names):
        short = _unserved(inc, cap_pat, cap_rhs, rhs_one, bounds_x[k], vol, commodity, s, t, time_limit_s)
        result.unserved[name] = short
        if short > TOL * max(1.0, float(vol.sum())):
            report.add(Violation("demand", "states", name, f"{short:g} units of demand cannot be carried",
                                 value=short, limit=0.0))
    return result


def _unserved(inc: sp.csr_matrix, cap_pat: sp.csr_matrix, cap_rhs: np.ndarray, rhs_one: np.ndarray,
              upper: np.ndarray, vol: np.ndarray, commodity: np.ndarray, s: np.ndarray, t: np.ndarray,
              time_limit_s: float) -> float:
    """Minimum total unserved volume in one state: for each source commodity ``k``,
    ``Inc x_k + sum_{d in k} u_d (e_s(d) - e_t(d)) = sum_{d in k} vol_d (e_s(d) - e_t(d))``, ``0 <= u_d <= vol_d``."""
    from scipy.optimize import linprog

    n_com, n_nodes = rhs_one.shape
    n_dem = len(vol)
    n_arcs = inc.shape[1]
    eq_x = sp.kron(sp.identity(n_com), inc, format="csr")
    rows = np.r_[commodity * n_nodes + s, commodity * n_nodes + t]
    u_part = sp.csr_matrix((np.r_[np.ones(n_dem), -np.ones(n_dem)], (rows, np.r_[np.arange(n_dem), np.arange(n_dem)])),
                           shape=(n_com * n_nodes, n_dem))
    a_eq = sp.hstack([eq_x, u_part], format="csr")
    a_ub = sp.hstack([sp.kron(np.ones((1, n_com)), cap_pat), sp.csr_matrix((cap_pat.shape[0], n_dem))], format="csr")
    c = np.r_[np.zeros(n_com * n_arcs), np.ones(n_dem)]
    bounds = list(zip(np.zeros(len(c)), np.r_[upper.ravel(), vol], strict=True))
    res = linprog(c, A_ub=a_ub, b_ub=cap_rhs, A_eq=a_eq, b_eq=rhs_one.ravel(), bounds=bounds, method="highs",
                  options={"time_limit": float(time_limit_s)})
    return float(res.fun) if res.status == 0 else float(vol.sum())


def check_intact_design(before: Network, after: Network, cost_usd: float, lower_bound_usd: float | None,
                        utilisation_ceiling: float, routing: Any, rel_tol: float = 1e-6) -> CheckReport:
    """Independent check of an intact-state design (``backbone design`` with ``survive`` none).

    It reads the network before and after the design, the claimed cost and bound, and a routing of ``after`` (a
    TE result, the witness): not the design's program.

    * ``cost`` -- recomputed from the tables: per existing link the capacity added is a whole number of its
      modules within ``max_capacity_gbps``, each at ``module_cost_usd``; per built candidate route its fixed cost
      plus its modules; the sum is the claimed cost, and the claimed lower bound is not above it;
    * ``routing`` -- :func:`backbone.solver.checks.te.check_te` confirms the witness on ``after`` (paths are
      walks over existing links, SLOs met, loads recomputed from the splits);
    * ``ceiling`` -- its utilisation is within ``utilisation_ceiling`` on every link, and it leaves no demand
      unmet for want of capacity (demand with no admissible path is unmet for that reason, checked by
      ``check_te``'s reasons).
    """
    from backbone.solver.checks.te import check_te

    report = CheckReport("intact design")
    _check_build_cost(before, after, cost_usd, lower_bound_usd, report, rel_tol)
    witness = check_te(after, routing)
    report.checked += [f"routing {c}" for c in witness.checked]
    for v in witness.violations:
        report.add(v)
    report.checked.append("ceiling")
    links, demands = routing.links, routing.demands
    over = links.index[links["utilisation"].to_numpy(float) > utilisation_ceiling * (1 + rel_tol) + rel_tol]
    for lid in over:
        report.add(Violation("ceiling", "links", str(lid), f"utilisation {links.at[lid, 'utilisation']:.4f} is above "
                             f"the ceiling {utilisation_ceiling:g}", float(links.at[lid, "utilisation"]),
                             utilisation_ceiling))
    short = demands.index[(demands["reason"] == "capacity") & (demands["unmet_gbps"] > rel_tol)]
    for did in short:
        report.add(Violation("ceiling", "demands", str(did), f"{demands.at[did, 'unmet_gbps']:,.3f} Gbps unmet for "
                             "want of capacity", float(demands.at[did, "unmet_gbps"]), 0.0))
    report.counts.update({"links": len(links), "demands": len(demands)})
    return report


def _check_build_cost(before: Network, after: Network, cost_usd: float, lower_bound_usd: float | None,
                      report: CheckReport, rel_tol: float) -> None:
    """The design's cost from the two networks' tables (see :func:`check_intact_design`)."""
    report.checked.append("cost")
    old, new, cands = before.links, after.links, before.candidates
    missing = old.index.difference(new.index)
    for lid in missing:
        report.add(Violation("cost", "links", str(lid), "link of the network before is missing after the design"))
    kept = old.index.intersection(new.index)
    added = new.loc[kept, "capacity_gbps"].to_numpy(float) - old.loc[kept, "capacity_gbps"].to_numpy(float)
    modules = added / old.loc[kept, "module_gbps"].to_numpy(float)
    bad = (np.abs(modules - np.round(modules)) > 1e-6) | (modules < -1e-9) | (
        new.loc[kept, "capacity_gbps"].to_numpy(float) > old.loc[kept, "max_capacity_gbps"].to_numpy(float) + 1e-6)
    for lid, m in zip(kept[bad], modules[bad], strict=True):
        report.add(Violation("cost", "links", str(lid), f"{m:g} modules added: not a whole number within "
                             "max_capacity_gbps", float(m)))
    total = float(np.round(modules) @ old.loc[kept, "module_cost_usd"].to_numpy(float))
    built = new.index.difference(old.index)
    for lid in built:
        if lid not in cands.index:
            report.add(Violation("cost", "links", str(lid), "new link is not a candidate route"))
            continue
        m = float(new.at[lid, "capacity_gbps"]) / float(cands.at[lid, "module_gbps"])
        if abs(m - round(m)) > 1e-6 or not 1 <= round(m) <= int(cands.at[lid, "max_modules"]):
            report.add(Violation("cost", "candidates", str(lid), f"{m:g} modules: not a whole number in "
                                 "[1, max_modules]", m))
        total += float(cands.at[lid, "fixed_cost_usd"]) + round(m) * float(cands.at[lid, "module_cost_usd"])
    if abs(total - cost_usd) > rel_tol * max(1.0, total):
        report.add(Violation("cost", "design", "cost_usd", f"claimed cost {cost_usd:,.2f} USD, recomputed "
                             f"{total:,.2f} USD", cost_usd, total))
    if lower_bound_usd is not None and lower_bound_usd > cost_usd * (1 + rel_tol) + rel_tol:
        report.add(Violation("cost", "design", "lower_bound_usd", f"lower bound {lower_bound_usd:,.2f} USD is above "
                             f"the cost {cost_usd:,.2f} USD", lower_bound_usd, cost_usd))
    report.counts.update({"links_upgraded": int((np.round(modules) > 0).sum()), "routes_built": len(built)})
