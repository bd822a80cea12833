"""The ``design`` planning task, and the backbone's own upgrade question on the design core.

:func:`run_design_task` serves both modes of ``backbone design``: an SNDlib network with a model
code (solved by :func:`backbone.solver.design.solve_design`, written in SNDlib's solution format), or any
backbone scenario, where :func:`design_upgrades` buys module upgrades so all demand fits within a
utilisation ceiling in the normal state and in every single link / SRLG failure state (edge-based
routing, every path admissible; :mod:`backbone.solver.upgrades` is the latency-aware variant over TE's
candidate paths).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.solver.backends import BackendName
from backbone.solver.design import DesignInstance, DesignSolution, ProgressFn, link_loads, solve_design

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------- the backbone's upgrade question
class CandidateLink(BaseModel):
    """A new link the design may build (modules only; no capacity today)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    site_a: str
    site_b: str
    id: str | None = None
    module_gbps: float = Field(400.0, gt=0)
    module_cost_usd: float = Field(ge=0)
    max_modules: int = Field(16, ge=1)


FailureSets = Literal["none", "link", "srlg"] | Sequence[Sequence[str]]


def failure_states(net: Network, failure_sets: FailureSets) -> tuple[list[str], list[list[str]]]:
    """(names, failed link ids) per state, the normal state first.

    ``"none"``: the normal state only; ``"link"``: every single link; ``"srlg"``: every SRLG
    (its member links fail together); or explicit lists of link ids.
    """
    names: list[str] = ["NOS"]
    sets: list[list[str]] = [[]]
    if isinstance(failure_sets, str):
        if failure_sets == "link":
            names += list(net.links.index)
            sets += [[lk] for lk in net.links.index]
        elif failure_sets == "srlg":
            for sid, members in net.srlgs["links"].items():
                if members:
                    names.append(str(sid))
                    sets.append(list(members))
        elif failure_sets != "none":
            raise ValidationError(f"unknown survivability {failure_sets!r}; choose none, link or srlg")
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


def instance_from_network(net: Network, failure_sets: FailureSets = "none", ceiling: float = 0.8,
                          candidates: Sequence[CandidateLink] = ()) -> DesignInstance:
    """The upgrade design instance of a backbone :class:`Network`.

    Links are full duplex (bidirected: each direction has the link's capacity); demands are
    directed. Keeping every load within ``ceiling`` of capacity is modelled by scaling capacity:
    pre-installed ``ceiling x capacity_gbps``, modules ``ceiling x module_gbps`` at
    ``module_cost_usd`` each, at most ``floor((max_capacity_gbps - capacity_gbps) / module_gbps)``
    per link. Candidate links join with no capacity and their own module.

    Raises
    ------
    ValidationError
        For a ceiling outside (0, 1] or candidate links with unknown sites.
    """
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
        """JSON-ready summary (what ``backbone design --json`` prints)."""
        return {"mode": "upgrade", "status": self.status, "cost_usd": _finite(self.cost_usd),
                "lower_bound_usd": _finite(self.lower_bound_usd), "gap": self.gap,
                "survivability": self.survivability, "ceiling": self.ceiling, "states": len(self.instance.states),
                "upgrades": [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in r.items()}
                             for r in self.upgrades.to_dict("records")],
                "lp_bound_usd": _finite(self.solution.lp_bound), "heuristic_cost_usd": _finite(self.solution.heuristic_cost),
                "solve_seconds": round(self.solution.seconds, 3), "backend": self.solution.backend,
                "notes": self.solution.notes, "map": self.map}


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def design_upgrades(net: Network, failure_sets: FailureSets = "none", utilisation_ceiling: float = 0.8,
                    time_limit: float = 60.0, backend: str = "highs", candidates: Sequence[CandidateLink] = (),
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
    >>> res = design_upgrades(net, "link", 0.8, time_limit=30)  # doctest: +SKIP
    >>> res.upgrades[["link", "modules", "added_gbps", "cost_usd"]]  # doctest: +SKIP
    """
    label = failure_sets if isinstance(failure_sets, str) else "custom"
    inst = instance_from_network(net, failure_sets, utilisation_ceiling, candidates)
    sol = solve_design(inst, time_limit=time_limit, backend=backend, mip_gap=mip_gap, progress=progress)
    counts = np.zeros(len(inst.modules)) if sol.counts is None else sol.counts
    mods = inst.modules.assign(count=counts)
    mods = mods[mods["count"] > 0]
    n_old = len(net.links)
    ceiling = utilisation_ceiling
    upgrades = pd.DataFrame({
        "link": inst.links.index[mods["link"].to_numpy(int)], "modules": mods["count"].round().astype(int).to_numpy(),
        "added_gbps": mods["count"].to_numpy() * mods["capacity"].to_numpy() / ceiling,
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
                        {"link_values": link_map, "failed_links": []}, sol, inst, ceiling, label)


# ---------------------------------------------------------------------- the planning-service task
class DesignOptions(BaseModel):
    """Options of the ``design`` task.

    SNDlib mode (``model`` given): solve the SNDlib model on the scenario's own data (modules,
    pre-installed capacity, routing and setup costs are carried in the scenario, see
    :func:`backbone.io.sndlib.sndlib_from_network`; nothing is read from a file) and write
    ``design.sol.txt`` (SNDlib native solution format). Otherwise: plan the backbone's upgrades
    (``survivability``, ``ceiling``, ``candidate_links``). A model file is read by the caller
    (the CLI's ``--model-file``) and passed on as its code.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    model: str | None = Field(None, max_length=32, description="SNDlib model code, e.g. U-U-M-N-C-A-N-N")
    survivability: Literal["none", "link", "srlg"] = Field(
        "none", validation_alias=AliasChoices("survivability", "survive"),
        description="Failures to survive with rerouting (also accepted as 'survive', the CLI flag)")
    ceiling: float = Field(0.8, gt=0, le=1, description="utilisation ceiling (upgrade mode; the intact state)")
    failure_ceiling: float = Field(1.0, gt=0, le=1, description="utilisation ceiling in failure states (routing "
                                                                "'paths')")
    routing: Literal["auto", "paths", "edge"] = Field(
        "auto", description="Upgrade mode: 'paths' -- the survivable design over TE's latency-admissible candidate "
                            "paths, upgrades and the scenario's candidate routes jointly, every failure state "
                            "(backbone.solver.survive); 'edge' -- multicommodity flow, every path admissible, "
                            "candidate_links as new links (SNDlib-style). 'auto': edge for SNDlib network files, "
                            "else paths.")
    candidate_links: list[CandidateLink] = Field(default_factory=list,
                                                 description="New links for routing 'edge' (routing 'paths' builds "
                                                             "from the scenario's candidates table)")
    max_iterations: int = Field(6, ge=1, le=50, description="Routing 'paths': most design iterations")
    time_limit: float = Field(60.0, gt=0, le=86_400, validation_alias=AliasChoices("time_limit", "time_limit_s"),
                              description="Seconds (also accepted as 'time_limit_s', as in the other tasks)")
    backend: BackendName = "highs"
    mip_gap: float = Field(1e-4, ge=0, lt=1)
    cuts: bool = True
    verify: bool = False

    @field_validator("model")
    @classmethod
    def _known_model(cls, code: str | None) -> str | None:
        from backbone.io.sndlib import parse_model_code

        if code is not None:
            try:
                parse_model_code(code)
            except ValidationError as exc:
                raise ValueError("; ".join(p.message for p in exc.problems)) from None
        return code


def run_design_task(net: Network, opts: DesignOptions, out_dir: Path | None, progress: ProgressFn) -> Any:
    """Planning-service entry point for ``design`` (see :class:`DesignOptions`)."""
    from backbone.solver.planning import TaskResult

    if opts.model:
        summary, files = _run_sndlib(net, opts, out_dir, progress)
    elif _routing(net, opts) == "paths":
        from backbone.solver.survive import design_survivable

        if opts.candidate_links:
            raise ValidationError(Problem("candidate_links need routing 'edge'; routing 'paths' builds the scenario's "
                                          "candidates table", table="options", field="candidate_links"))
        sres = design_survivable(net, opts.survivability, opts.ceiling, opts.failure_ceiling,
                                 time_limit_s=opts.time_limit, backend=opts.backend, mip_gap=max(opts.mip_gap, 1e-4),
                                 max_iterations=opts.max_iterations, progress=progress)
        summary, files = sres.summary(), []
        summary["survive"] = opts.survivability
        if opts.verify and opts.survivability != "none":
            from backbone.solver.checks.survivability import check_survivability

            summary["verification"] = check_survivability(
                sres.network_after, opts.survivability, [r["scenario"] for r in sres.not_survivable],
                backend=opts.backend).to_dict()
        if out_dir is not None:
            from backbone.io import save_scenario

            up = sres.upgrades.assign(protects=sres.upgrades["protects"].map(lambda x: ";".join(x)))
            up.to_csv(out_dir / "design_upgrades.csv", index=False)
            save_scenario(sres.network_after, out_dir / "scenario_after")
            files += ["design_upgrades.csv", "scenario_after/"]
    else:
        res = design_upgrades(net, opts.survivability, opts.ceiling, opts.time_limit, opts.backend,
                              opts.candidate_links, opts.mip_gap, progress)
        summary, files = res.summary(), []
        if opts.verify:
            summary["verification"] = _verify(res.instance, res.solution, opts.time_limit)
        if out_dir is not None:
            res.upgrades.to_csv(out_dir / "design_upgrades.csv", index=False)
            files.append("design_upgrades.csv")
    return TaskResult("design", summary, files)


run_design_task.options_model = DesignOptions  # type: ignore[attr-defined]


def _routing(net: Network, opts: DesignOptions) -> str:
    if opts.routing != "auto":
        return opts.routing
    return "edge" if (net.meta.get("sndlib") or opts.candidate_links) else "paths"


def _verify(inst: DesignInstance, sol: DesignSolution, time_limit: float = 120.0) -> dict[str, Any]:
    from backbone.solver.checks.design import check_design, configurations_from_counts

    if sol.counts is None:
        return {"ok": False, "message": "no design to verify"}
    check = check_design(inst, configurations_from_counts(inst, sol.counts), time_limit=time_limit,
                         reported_cost=sol.cost, reported_optimal=sol.status == "optimal")
    return check.to_dict()


def _run_sndlib(net: Network, opts: DesignOptions, out_dir: Path | None, progress: ProgressFn,
                ) -> tuple[dict[str, Any], list[str]]:
    from backbone.io.sndlib import parse_model_code, sndlib_from_network
    from backbone.solver.sndlib import build_instance, link_configurations, write_solution

    snd = sndlib_from_network(net)
    model = parse_model_code(opts.model or "")
    inst = build_instance(snd, model)
    sol = solve_design(inst, opts.time_limit, opts.backend, opts.mip_gap, cuts=opts.cuts, progress=progress)
    links = link_configurations(snd, inst, sol.counts)
    k = snd.gbps_per_unit
    pre = inst.links["preinstalled"]
    added = {cfg["id"]: (cfg["capacity"] - float(pre.loc[cfg["id"]])) * k for cfg in links}
    summary: dict[str, Any] = {
        "mode": "sndlib", "network": snd.name, "model": model.code, "status": sol.status,
        "cost": _finite(sol.cost), "lower_bound": _finite(sol.lower_bound), "gap": sol.gap,
        "lp_bound": _finite(sol.lp_bound), "heuristic_cost": _finite(sol.heuristic_cost),
        "mip_status": sol.mip_status, "solve_seconds": round(sol.seconds, 3), "backend": sol.backend,
        "size": sol.stats, "links": links, "notes": sol.notes,
        "map": {"link_values": {"added_gbps": added,
                                "capacity_gbps": {c["id"]: c["capacity"] * k for c in links}}, "failed_links": []},
    }
    if opts.verify:
        summary["verification"] = _verify(inst, sol, opts.time_limit)
    files: list[str] = []
    if out_dir is not None and sol.counts is not None:
        write_solution(out_dir / "design.sol.txt", snd, model, inst, sol)
        files.append("design.sol.txt")
    return summary, files
