"""Upgrades routed over every path: the backbone's own upgrade question on the design core (edge-based routing).

:func:`design_upgrades` buys module upgrades so all demand fits within a utilisation ceiling in the normal state
and in every single link / SRLG failure state (edge-based routing, every path admissible;
:mod:`backbone.solver.design.upgrades.paths` is the latency-aware variant over TE's candidate paths). The ``design`` planning
task (:mod:`backbone.solver.tasks.design`) runs it for ``routing="edge"``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.serialize import finite_or_none
from backbone.solver.design import DesignInstance, DesignSolution, ProgressFn, link_loads, solve_design
from backbone.solver.design.options import CandidateLink
from backbone.solver.design.summary import UpgradeDesignSummary

logger = logging.getLogger(__name__)

__all__ = ["CandidateLink", "DesignResult", "FailureSets", "design_upgrades", "failure_states",
           "instance_from_network"]


# ---------------------------------------------------------------------- the backbone's upgrade question
FailureSets = Literal["none", "link", "srlg", "srlg,link"] | Sequence[Sequence[str]]


def failure_states(net: Network, failure_sets: FailureSets) -> tuple[list[str], list[list[str]]]:
    """(names, failed link ids) per state, the normal state first.

    ``"none"``: the normal state only; ``"link"``: every single link; ``"srlg"``: every SRLG
    (its member links fail together; a link in no SRLG fails as its own group); ``"srlg,link"``: both; or
    explicit lists of link ids. The single-failure sets are the failure sweep's
    (:func:`backbone.solver.failures.scenarios.enumerate_scenarios`), named by their failed elements.
    """
    names: list[str] = ["NOS"]
    sets: list[list[str]] = [[]]
    if isinstance(failure_sets, str):
        if failure_sets in ("link", "srlg", "srlg,link"):
            from backbone.solver.failures.scenarios import enumerate_scenarios

            states = [s for s in enumerate_scenarios(net, failure_sets, max_scenarios=10**9) if s.links]  # type: ignore[arg-type]
            names += ["+".join(s.failed) for s in states]
            sets += [list(s.links) for s in states]
        elif failure_sets != "none":
            raise ValidationError(f"unknown survivability {failure_sets!r}; choose none, link, srlg or srlg,link")
        return names, sets
    known = set(net.links.index)
    for i, fs in enumerate(failure_sets):
        ids = [str(x) for x in fs]
        if not ids:
            continue
        bad = [x for x in ids if x not in known]
        if bad:
            raise ValidationError(f"failure set {i}: unknown link(s) {', '.join(bad)}")
        names.append("+".join(ids))
        sets.append(ids)
    return names, sets


def instance_from_network(net: Network, failure_sets: FailureSets = "none", utilisation_ceiling: float = 0.8,
                          candidates: Sequence[CandidateLink] = ()) -> DesignInstance:
    """The upgrade design instance of a backbone :class:`Network`.

    Links are full duplex (bidirected: each direction has the link's capacity); demands are
    directed. Keeping every load within ``utilisation_ceiling`` of capacity is modelled by scaling capacity:
    pre-installed ``ceiling x capacity_gbps``, modules ``ceiling x module_gbps`` at
    ``module_cost_usd`` each, at most ``floor((max_capacity_gbps - capacity_gbps) / module_gbps)``
    per link. Candidate links join with no capacity and their own module.

    Raises
    ------
    ValidationError
        For a ceiling outside (0, 1] or candidate links with unknown sites.
    """
    ceiling = float(utilisation_ceiling)
    if not 0 < ceiling <= 1:
        raise ValidationError(f"utilisation ceiling must be in (0, 1], got {ceiling}")
    sites = pd.Index(net.sites.index, name="node")
    pos = pd.Series(np.arange(len(sites)), index=sites)
    bad = [c for c in candidates if c.site_a not in pos.index or c.site_b not in pos.index or c.site_a == c.site_b]
    if bad:
        raise ValidationError([Problem(f"candidate link {c.site_a}-{c.site_b}: unknown sites or a self-loop",
                                       table="options", field="candidate_links") for c in bad])
    lk = net.links
    cand_ids = [c.id or f"new:{c.site_a}-{c.site_b}" for c in candidates]
    ids = pd.Index([*lk.index, *cand_ids], name="link")
    if ids.has_duplicates:
        raise ValidationError(f"candidate link ids clash: {', '.join(ids[ids.duplicated()])}")
    n_old = len(lk)
    a = np.r_[pos.loc[lk["site_a"]].to_numpy(), pos.loc[[c.site_a for c in candidates]].to_numpy()].astype(int)
    b = np.r_[pos.loc[lk["site_b"]].to_numpy(), pos.loc[[c.site_b for c in candidates]].to_numpy()].astype(int)
    cap = lk["capacity_gbps"].to_numpy(float)
    links = pd.DataFrame({"a": a, "b": b, "preinstalled": np.r_[ceiling * cap, np.zeros(len(candidates))],
                          "preinstalled_cost": 0.0,
                          "routing_cost": np.r_[lk["routing_cost_per_gbps"].to_numpy(float), np.zeros(len(candidates))],
                          "setup_cost": 0.0}, index=ids)
    module_gbps = np.r_[lk["module_gbps"].to_numpy(float), [c.module_gbps for c in candidates]]
    max_count = np.r_[np.floor((lk["max_capacity_gbps"].to_numpy(float) - cap) / lk["module_gbps"].to_numpy(float)
                               + 1e-9).clip(min=0), [c.max_modules for c in candidates]]
    modules = pd.DataFrame({"link": np.arange(len(ids)), "capacity": ceiling * module_gbps,
                            "cost": np.r_[lk["module_cost_usd"].to_numpy(float), [c.module_cost_usd for c in candidates]],
                            "max_count": max_count})
    modules = modules[modules["max_count"] > 0].reset_index(drop=True)
    dem = net.demands
    demands = pd.DataFrame({"s": pos.loc[dem["src"]].to_numpy(), "t": pos.loc[dem["dst"]].to_numpy(),
                            "volume": dem["demand_gbps"].to_numpy(float)}, index=pd.Index(dem.index, name="demand"))
    names, sets = failure_states(net, failure_sets)
    link_pos = pd.Series(np.arange(n_old), index=lk.index)
    states = tuple(tuple(int(i) for i in link_pos.loc[s]) for s in sets)
    return DesignInstance(net.name, sites, links, modules, demands, link_model="B", capacity_model="M",
                          states=states, state_names=tuple(names))


@dataclass
class DesignResult:
    """Upgrades of a backbone network.

    Attributes
    ----------
    upgrades
        One row per upgraded (or new) link: ``link``, ``modules``, ``added_gbps``, ``cost_usd``,
        ``new`` (a candidate link).
    """

    status: str
    cost_usd: float
    lower_bound_usd: float
    gap: float | None
    upgrades: pd.DataFrame
    map: dict[str, Any]
    solution: DesignSolution
    instance: DesignInstance
    ceiling: float
    survivability: str

    def summary(self) -> dict[str, Any]:
        """The summary's JSON document (:meth:`typed_summary` dumped)."""
        return self.typed_summary().document()

    def typed_summary(self) -> UpgradeDesignSummary:
        """The :class:`~backbone.solver.design.summary.UpgradeDesignSummary` (what ``backbone design --json``
        prints)."""
        return UpgradeDesignSummary(
            status=self.status, cost_usd=finite_or_none(self.cost_usd),
            lower_bound_usd=finite_or_none(self.lower_bound_usd), gap=self.gap,
            survivability=self.survivability, ceiling=self.ceiling, states=len(self.instance.states),
            upgrades=[{k: (v.item() if isinstance(v, np.generic) else v) for k, v in r.items()}
                      for r in self.upgrades.to_dict("records")],
            lp_bound_usd=finite_or_none(self.solution.lp_bound),
            heuristic_cost_usd=finite_or_none(self.solution.heuristic_cost),
            solve_seconds=round(self.solution.seconds, 3), backend=self.solution.backend,
            notes=self.solution.notes, map=self.map)


def design_upgrades(net: Network, failure_sets: FailureSets = "none", utilisation_ceiling: float = 0.8,
                    time_limit_s: float = 60.0, backend: str = "highs", candidates: Sequence[CandidateLink] = (),
                    mip_gap: float = 1e-4, progress: ProgressFn | None = None) -> DesignResult:
    """Cheapest module upgrades so all demand fits within ``utilisation_ceiling`` of capacity in
    the normal state and in every failure state (single link / SRLG failures with rerouting).

    Routing is edge-based (aggregated per source; every path admissible, latency SLOs are not
    constraints here). Upgrades come in whole modules (``links.module_gbps`` at
    ``module_cost_usd``, up to ``max_capacity_gbps``).

    Raises
    ------
    InfeasibleError
        When some demand cannot be carried even with every allowed upgrade (the reasons name
        the states and demands without a path, when that is the cause).

    Example
    -------
    >>> res = design_upgrades(net, "link", 0.8, time_limit_s=30)  # doctest: +SKIP
    >>> res.upgrades[["link", "modules", "added_gbps", "cost_usd"]]  # doctest: +SKIP
    """
    label = failure_sets if isinstance(failure_sets, str) else "custom"
    inst = instance_from_network(net, failure_sets, utilisation_ceiling, candidates)
    sol = solve_design(inst, time_limit_s=time_limit_s, backend=backend, mip_gap=mip_gap, progress=progress)
    counts = np.zeros(len(inst.modules)) if sol.counts is None else sol.counts
    mods = inst.modules.assign(count=counts)
    mods = mods[mods["count"] > 0]
    n_old = len(net.links)
    upgrades = pd.DataFrame({
        "link": inst.links.index[mods["link"].to_numpy(int)], "modules": mods["count"].round().astype(int).to_numpy(),
        "added_gbps": mods["count"].to_numpy() * mods["capacity"].to_numpy() / utilisation_ceiling,
        "cost_usd": mods["count"].to_numpy() * mods["cost"].to_numpy(), "new": mods["link"].to_numpy(int) >= n_old,
    })
    added = upgrades[~upgrades["new"]].set_index("link")["added_gbps"]
    added_all = added.reindex(net.links.index).fillna(0.0)
    total_cap = net.links["capacity_gbps"] + added_all
    util: dict[str, float] = {}
    if sol.flows is not None:
        load = link_loads(inst, sol.flows)[0][:n_old]
        util = {str(k): round(float(v), 6) for k, v in zip(net.links.index, load / total_cap.to_numpy(), strict=True)}
    link_map = {"added_gbps": {str(k): float(v) for k, v in added_all.items()}, "utilisation": util}
    return DesignResult(sol.status, sol.cost, sol.lower_bound, sol.gap, upgrades,
                        {"link_values": link_map, "failed_links": []}, sol, inst, utilisation_ceiling,
                        label)
