"""SNDlib design instances and solution files: an SNDlib network under a model as a
:class:`~backbone.solver.design.DesignInstance`, link configurations, flow decomposition and the writer of
SNDlib native solution files.

Parsing lives in the model layer, :mod:`backbone.io.sndlib`: network files (:func:`parse_sndlib`), model
codes and files (:class:`SndlibModel`, :func:`parse_model_code`, :func:`parse_model_file`) and solution
files (:func:`parse_solution`). They are re-exported here for existing callers. Model positions outside
:data:`~backbone.io.sndlib.model.SUPPORTED` are rejected with a :class:`~backbone.errors.ValidationError`
naming the position.

Semantics: an undirected demand is one commodity routed either way; with undirected links
(the only link model SNDlib allows with undirected demands) routing it ``s -> t`` loses nothing,
since capacity is shared by both directions. Under survivability U every single link failure is
a state with its own routing; the routing cost of a link is ``rc x`` its largest flow over the
states (SNDlib's solution-format notes). The objective adds module costs x counts, the cost of
pre-installed capacity (a constant), routing cost, and setup costs under fixed charge.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError
from backbone.io.sndlib import (
    SUPPORTED,
    SndlibModel,
    SndlibNetwork,
    SndlibSolution,
    load_model,
    parse_model_code,
    parse_model_file,
    parse_sndlib,
    parse_solution,
)
from backbone.solver.core.sparse import selector
from backbone.solver.design import DesignInstance, DesignSolution
from backbone.solver.design.summary import LinkConfiguration, ModuleCount

__all__ = [
    "SUPPORTED",
    "SndlibModel",
    "SndlibNetwork",
    "SndlibSolution",
    "build_instance",
    "decompose_flows",
    "link_configurations",
    "load_instance",
    "load_model",
    "parse_model_code",
    "parse_model_file",
    "parse_sndlib",
    "parse_solution",
    "write_solution",
]

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------- instance
def build_instance(snd: SndlibNetwork, model: SndlibModel) -> DesignInstance:
    """The :class:`DesignInstance` of an SNDlib network under a model.

    ``UNLIMITED`` module capacities (pure fixed-charge links) become the total demand volume,
    which no single link ever needs to exceed.

    Raises
    ------
    ValidationError
        When the model has unsupported positions, or undirected demands are combined with a
        directed/bidirected link model (SNDlib forbids it).
    """
    problems = model.unsupported()
    if model.demand == "U" and model.link != "U":
        problems.append(Problem("undirected demands need the undirected link model (SNDlib rule)", table="model",
                                field="LINK_MODEL"))
    if problems:
        raise ValidationError(problems)
    nodes = pd.Index(snd.nodes.index, name="node")
    pos = pd.Series(np.arange(len(nodes)), index=nodes)
    links = pd.DataFrame({
        "a": pos.loc[snd.links["source"]].to_numpy(), "b": pos.loc[snd.links["target"]].to_numpy(),
        "preinstalled": snd.links["preinstalled_capacity"].to_numpy(float),
        "preinstalled_cost": snd.links["preinstalled_cost"].to_numpy(float),
        "routing_cost": snd.links["routing_cost"].to_numpy(float),
        "setup_cost": snd.links["setup_cost"].to_numpy(float) if model.fixed_charge == "Y" else 0.0,
    }, index=pd.Index(snd.links.index, name="link"))
    volume = snd.demand_units
    link_pos = pd.Series(np.arange(len(links)), index=links.index)
    cap = snd.modules["capacity"].to_numpy(float)
    cap = np.where(np.isfinite(cap), cap, max(float(volume.sum()), 1.0))
    modules = pd.DataFrame({"link": link_pos.loc[snd.modules["link"]].to_numpy(), "capacity": cap,
                            "cost": snd.modules["cost"].to_numpy(float), "max_count": math.inf})
    demands = pd.DataFrame({"s": pos.loc[snd.demands["source"]].to_numpy(), "t": pos.loc[snd.demands["target"]].to_numpy(),
                            "volume": volume}, index=pd.Index(snd.demands.index, name="demand"))
    states: tuple[tuple[int, ...], ...] = ((),)
    names: tuple[str, ...] = ("NOS",)
    if model.survivability == "U":
        states += tuple((i,) for i in range(len(links)))
        names += tuple(links.index)
    return DesignInstance(f"{snd.name}:{model.code}", nodes, links, modules, demands, link_model=model.link,  # type: ignore[arg-type]
                          capacity_model=model.capacity, fixed_charge=model.fixed_charge == "Y",  # type: ignore[arg-type]
                          states=states, state_names=names)


def load_instance(network: str | Path, model: str | Path) -> tuple[SndlibNetwork, SndlibModel, DesignInstance]:
    """Parse a network file and a model (code or file) and build the instance."""
    snd = parse_sndlib(network)
    mdl = load_model(model)
    return snd, mdl, build_instance(snd, mdl)


# ---------------------------------------------------------------------- link configurations
def link_configurations(snd: SndlibNetwork, inst: DesignInstance,
                        counts: np.ndarray | None) -> list[LinkConfiguration]:
    """Per link: its modules (capacity, count) and total capacity, with pre-installed capacity listed as a module of
    count 1 (as the SNDlib solution format counts it)."""
    counts = np.zeros(len(inst.modules)) if counts is None else counts
    mods = inst.modules.assign(count=counts)
    used = mods[mods["count"] > 0]
    pre = inst.links["preinstalled"].to_numpy(float)
    out = []
    grouped = {int(k): g for k, g in used.groupby("link")}
    for i, lid in enumerate(inst.links.index):
        entries = [ModuleCount(capacity=float(pre[i]), count=1.0)] if pre[i] > 0 else []
        g = grouped.get(i)
        if g is not None:
            for capacity, count in g.groupby("capacity")["count"].sum().items():
                entries.append(ModuleCount(capacity=float(capacity), count=float(count)))
        total = sum(e.capacity * e.count for e in entries)
        out.append(LinkConfiguration(id=str(lid), modules=entries, capacity=float(total)))
    return out


# ---------------------------------------------------------------------- solution files
def decompose_flows(inst: DesignInstance, sources: np.ndarray, flows: np.ndarray,
                    state: int = 0) -> dict[str, list[tuple[float, list[int]]]]:
    """Per demand, paths (flow in capacity units, link positions) of one state's aggregated flow.

    Peels shortest (hop) paths from each source's arc flow towards its targets: post-processing
    of a solution, one BFS per path.
    """
    from scipy.sparse.csgraph import breadth_first_order

    tail, head, arc_link = inst.arcs()
    n = len(inst.nodes)
    s_arr, t_arr = inst.demands["s"].to_numpy(int), inst.demands["t"].to_numpy(int)
    vol = inst.demands["volume"].to_numpy(float)
    out: dict[str, list[tuple[float, list[int]]]] = {str(d): [] for d in inst.demands.index}
    eps = 1e-7 * max(1.0, float(vol.max(initial=1.0)))
    for k, src in enumerate(sources):
        residual = flows[state, k].copy()
        for j in np.flatnonzero((s_arr == src) & (vol > 0)):
            need = vol[j]
            while need > eps:
                pos = residual > eps
                g = _arc_graph(tail[pos], head[pos], np.flatnonzero(pos), n)
                _, pred = breadth_first_order(g[0], int(src), directed=True, return_predecessors=True)
                if pred[t_arr[j]] < 0 and t_arr[j] != src:
                    logger.warning("flow decomposition: demand %s short by %.6g", inst.demands.index[j], need)
                    break
                path_arcs = []
                v = int(t_arr[j])
                while v != src:
                    u = int(pred[v])
                    path_arcs.append(g[1][(u, v)])
                    v = u
                path_arcs.reverse()
                amount = min(need, float(residual[path_arcs].min()))
                residual[path_arcs] -= amount
                need -= amount
                out[str(inst.demands.index[j])].append((amount, [int(arc_link[a]) for a in path_arcs]))
    return out


def _arc_graph(tail: np.ndarray, head: np.ndarray, arc_ids: np.ndarray, n: int) -> tuple[Any, dict[tuple[int, int], int]]:
    first: dict[tuple[int, int], int] = {}
    for u, v, a in zip(tail.tolist(), head.tolist(), arc_ids.tolist(), strict=True):
        first.setdefault((u, v), a)
    keys = list(first)
    rows = np.array([k[0] for k in keys], int)
    cols = np.array([k[1] for k in keys], int)
    return selector(rows, n, n, cols=cols), first


def write_solution(path: str | Path, snd: SndlibNetwork, model: SndlibModel, inst: DesignInstance,
                   sol: DesignSolution) -> Path:
    """Write a design in SNDlib native solution format (:func:`solution_text`) to ``path`` atomically."""
    from backbone.artifacts import write_text_atomic

    return write_text_atomic(path, solution_text(snd, model, inst, sol))


def solution_text(snd: SndlibNetwork, model: SndlibModel, inst: DesignInstance, sol: DesignSolution) -> str:
    """A design in SNDlib native solution format (link configurations + routings).

    Path flows are in each demand's routing unit. Under survivability U a ``ROUTINGS <link>``
    section is written for every failure state, listing the demands whose routing uses the
    failed link in the normal state (as the format asks: the complete routing of affected demands).
    """
    lines = ["?SNDlib native format; type: solution; version: 1.0",
             f"# network {snd.name}, model {model.code}, cost {sol.cost:.6f}, lower bound {sol.lower_bound:.6f}", "",
             "LINK-CONFIGURATIONS ("]
    for cfg in link_configurations(snd, inst, sol.counts):
        mods = " ".join(f"{_num(e.capacity)} {_num(e.count)}" for e in cfg.modules)
        lines.append(f"  {cfg.id} ( {mods} )" if mods else f"  {cfg.id} ( )")
    lines.append(")")
    if sol.flows is not None:
        unit = snd.demands["routing_unit"].reindex(inst.demands.index).to_numpy(float)
        link_ids = list(inst.links.index)
        nos = decompose_flows(inst, sol.sources, sol.flows, 0)
        for s, name in enumerate(inst.state_names):
            paths = nos if s == 0 else decompose_flows(inst, sol.sources, sol.flows, s)
            failed = set(inst.states[s])
            affected = [d for d in paths if s == 0 or any(failed & set(pl) for _, pl in nos[d])]
            lines += ["", f"ROUTINGS {name} ("]
            for d in affected:
                j = inst.demands.index.get_loc(d)
                lines.append(f"  {d} (")
                for amount, pl in paths[d]:
                    lines.append(f"    {_num(amount / unit[j])} ( {' '.join(link_ids[i] for i in pl)} )")
                lines.append("  )")
            lines.append(")")
    return "\n".join(lines) + "\n"


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.6f}".rstrip("0")
