"""SNDlib network models (the 8-letter codes and model files), instances and solution files.

Model code, position by position: 1 demand model ``U``/``D``; 2 link model ``U``/``B``/``D``;
3 link capacity model ``M`` modular / ``S`` single modular / ``E`` explicit / ``L`` linear;
4 fixed charge ``N``/``Y``; 5 routing ``C`` continuous / ``I`` integer / ``S`` single path;
6 admissible paths ``A`` all / ``E`` explicit list; 7 hop limits ``N`` ignored / ``Y``;
8 survivability ``N`` none / ``P`` 1+1 / ``S`` shared path / ``U`` unrestricted reconfiguration.

Supported here (:data:`SUPPORTED`): demand U/D, link U/B/D, capacity M/E/L, fixed charge N/Y,
continuous routing over all paths without hop limits, survivability N and U. Other codes are
rejected with a :class:`~backbone.errors.ValidationError` naming the position.

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
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from backbone.solver.design import DesignInstance, DesignSolution

from backbone.errors import Problem, ValidationError
from backbone.io.sndlib import SndlibNetwork, parse_sndlib

logger = logging.getLogger(__name__)

POSITIONS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("demand", "DEMAND_MODEL", {"U": "UNDIRECTED", "D": "DIRECTED"}),
    ("link", "LINK_MODEL", {"U": "UNDIRECTED", "B": "BIDIRECTED", "D": "DIRECTED"}),
    ("capacity", "LINK_CAPACITY_MODEL", {"M": "MODULAR_LINK_CAPACITIES", "S": "SINGLE_MODULAR_CAPACITIES",
                                         "E": "EXPLICIT_LINK_CAPACITIES", "L": "LINEAR_LINK_CAPACITIES"}),
    ("fixed_charge", "FIXED_CHARGE_MODEL", {"N": "NO", "Y": "YES"}),
    ("routing", "ROUTING_MODEL", {"C": "CONTINUOUS", "I": "INTEGER", "S": "SINGLE_PATH"}),
    ("paths", "ADMISSIBLE_PATH_MODEL", {"A": "ALL_PATHS", "E": "EXPLICIT_LIST"}),
    ("hop_limits", "HOP_LIMIT_MODEL", {"N": "IGNORE_HOP_LIMITS", "Y": "INDIVIDUAL_HOP_LIMITS"}),
    ("survivability", "SURVIVABILITY_MODEL", {"N": "NO_SURVIVABILITY", "P": "ONE_PLUS_ONE_PROTECTION",
                                              "S": "SHARED_PATH_PROTECTION", "U": "UNRESTRICTED_FLOW_RECONFIGURATION"}),
)
"""(attribute, model-file key, code letter -> model-file value) per code position."""

ALIASES: dict[str, str] = {"SINGLE_MODULAR_LINK_CAPACITIES": "SINGLE_MODULAR_CAPACITIES"}
"""Other spellings seen for model-file values."""

SUPPORTED: dict[str, str] = {"demand": "UD", "link": "UBD", "capacity": "MEL", "fixed_charge": "NY",
                             "routing": "C", "paths": "A", "hop_limits": "N", "survivability": "NU"}
"""Code letters this module can solve, per position."""


@dataclass(frozen=True)
class SndlibModel:
    """One SNDlib network model (see the module docstring for the letters)."""

    demand: str = "U"
    link: str = "U"
    capacity: str = "M"
    fixed_charge: str = "N"
    routing: str = "C"
    paths: str = "A"
    hop_limits: str = "N"
    survivability: str = "N"

    @property
    def code(self) -> str:
        """The 8-letter code, dash-separated (``U-U-M-N-C-A-N-N``)."""
        return "-".join(getattr(self, attr) for attr, _, _ in POSITIONS)

    def unsupported(self) -> list[Problem]:
        """A problem per position this module cannot solve."""
        return [Problem(f"model position {i + 1} ({key}) = {getattr(self, attr)!r} is not supported "
                        f"(supported: {', '.join(SUPPORTED[attr])})", table="model", field=key)
                for i, (attr, key, _) in enumerate(POSITIONS) if getattr(self, attr) not in SUPPORTED[attr]]

    def to_text(self) -> str:
        """The model in SNDlib native model-file format."""
        lines = ["?SNDlib native format; type: model; version: 1.0", f"# model {self.code}", ""]
        lines += [f"{key} = {values[getattr(self, attr)]}" for attr, key, values in POSITIONS]
        lines += ["NODE_MODEL = NO_NODE_HARDWARE", "OBJECTIVE_MODEL = MINIMIZE_TOTAL_COST"]
        return "\n".join(lines) + "\n"


def parse_model_code(code: str) -> SndlibModel:
    """``"U-U-M-N-C-A-N-N"`` (dashes optional) -> :class:`SndlibModel`.

    Raises
    ------
    ValidationError
        For a wrong length or an unknown letter (naming the position).
    """
    letters = code.replace("-", "").strip().upper()
    if len(letters) != len(POSITIONS):
        raise ValidationError(Problem(f"model code {code!r} must have {len(POSITIONS)} letters (e.g. U-U-M-N-C-A-N-N)",
                                      table="model", field="code"))
    problems = [Problem(f"position {i + 1} ({key}): {ch!r} is not one of {', '.join(values)}", table="model",
                        field=key)
                for i, ((_, key, values), ch) in enumerate(zip(POSITIONS, letters, strict=True)) if ch not in values]
    if problems:
        raise ValidationError(problems)
    return SndlibModel(**{attr: ch for (attr, _, _), ch in zip(POSITIONS, letters, strict=True)})


def parse_model_file(path: str | Path, text: str | None = None) -> SndlibModel:
    """Read an SNDlib native model file (``KEY = VALUE`` lines).

    Raises
    ------
    ValidationError
        For unknown keys or values (file, ``line N``, key) and missing keys.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="replace") if text is None else text
    by_key = {key: (attr, {v: k for k, v in values.items()}) for attr, key, values in POSITIONS}
    found: dict[str, str] = {}
    problems: list[Problem] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("?"):
            continue
        m = re.fullmatch(r"([A-Z_]+)\s*=\s*([A-Z_0-9]+)", line)
        if not m:
            problems.append(Problem("expected 'KEY = VALUE'", file=str(p), record=f"line {n}"))
            continue
        key, value = m.groups()
        if key in ("NODE_MODEL", "OBJECTIVE_MODEL"):
            continue
        if key not in by_key:
            problems.append(Problem("unknown key (expected one of "
                                    f"{', '.join(by_key)}, NODE_MODEL, OBJECTIVE_MODEL)", file=str(p),
                                    record=f"line {n}"))
            continue
        attr, letters = by_key[key]
        value = ALIASES.get(value, value)
        if value not in letters:
            problems.append(Problem(f"unknown value (expected one of {', '.join(letters)})", file=str(p),
                                    record=f"line {n}", field=key))
            continue
        found[attr] = letters[value]
    for attr, key, _ in POSITIONS:
        if attr not in found and not any(p.field == key for p in problems):
            problems.append(Problem("missing", file=str(p), field=key))
    if problems:
        raise ValidationError(problems)
    return SndlibModel(**found)


def load_model(model: str | Path) -> SndlibModel:
    """A model from a code (``U-U-M-N-C-A-N-N``) or a model-file path."""
    text = str(model)
    if Path(text).suffix.lower() == ".txt" or Path(text).exists():
        return parse_model_file(text)
    return parse_model_code(text)


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
def link_configurations(snd: SndlibNetwork, inst: DesignInstance, counts: np.ndarray | None) -> list[dict[str, Any]]:
    """Per link: ``{"id", "modules": [{"capacity", "count"}], "capacity"}`` with pre-installed
    capacity listed as a module of count 1 (as the SNDlib solution format counts it)."""
    counts = np.zeros(len(inst.modules)) if counts is None else counts
    mods = inst.modules.assign(count=counts)
    used = mods[mods["count"] > 0]
    pre = inst.links["preinstalled"].to_numpy(float)
    out = []
    grouped = {int(k): g for k, g in used.groupby("link")}
    for i, lid in enumerate(inst.links.index):
        entries = [{"capacity": float(pre[i]), "count": 1.0}] if pre[i] > 0 else []
        g = grouped.get(i)
        if g is not None:
            for capacity, count in g.groupby("capacity")["count"].sum().items():
                entries.append({"capacity": float(capacity), "count": float(count)})
        total = sum(e["capacity"] * e["count"] for e in entries)
        out.append({"id": str(lid), "modules": entries, "capacity": float(total)})
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
    import scipy.sparse as sp

    first: dict[tuple[int, int], int] = {}
    for u, v, a in zip(tail.tolist(), head.tolist(), arc_ids.tolist(), strict=True):
        first.setdefault((u, v), a)
    keys = list(first)
    rows = np.array([k[0] for k in keys], int)
    cols = np.array([k[1] for k in keys], int)
    return sp.csr_matrix((np.ones(len(keys)), (rows, cols)), shape=(n, n)), first


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
        mods = " ".join(f"{_num(e['capacity'])} {_num(e['count'])}" for e in cfg["modules"])
        lines.append(f"  {cfg['id']} ( {mods} )" if mods else f"  {cfg['id']} ( )")
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


@dataclass(frozen=True)
class SndlibSolution:
    """A parsed solution file: ``configurations`` {link: [(capacity, count)]} and ``routings``
    {state: {demand: [(flow, [link ids])]}}."""

    configurations: dict[str, list[tuple[float, float]]]
    routings: dict[str, dict[str, list[tuple[float, list[str]]]]]

    def capacities(self) -> dict[str, float]:
        """Installed capacity per link (pre-installed included)."""
        return {lk: sum(c * n for c, n in mods) for lk, mods in self.configurations.items()}


def parse_solution(path: str | Path, text: str | None = None) -> SndlibSolution:
    """Read an SNDlib native solution file.

    Raises
    ------
    ValidationError
        For malformed content (file and line).
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="replace") if text is None else text
    toks: list[tuple[str, int]] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if raw.lstrip().startswith("?"):
            continue
        toks += [(m.group(0), n) for m in re.finditer(r"\(|\)|[^\s()]+", raw.split("#", 1)[0])]
    i = 0
    configs: dict[str, list[tuple[float, float]]] = {}
    routings: dict[str, dict[str, list[tuple[float, list[str]]]]] = {}

    def fail(msg: str, line: int) -> ValidationError:
        return ValidationError(Problem(msg, file=str(p), record=f"line {line}"))

    def group(j: int) -> tuple[list[str], int]:
        if j >= len(toks) or toks[j][0] != "(":
            raise fail("expected '('", toks[min(j, len(toks) - 1)][1] if toks else 0)
        out: list[str] = []
        j += 1
        while j < len(toks) and toks[j][0] != ")":
            out.append(toks[j][0])
            j += 1
        if j >= len(toks):
            raise fail("unclosed '('", toks[-1][1])
        return out, j + 1

    try:
        while i < len(toks):
            word, line = toks[i]
            if word in ("LINK-CONFIGURATIONS", "LINK_CONFIGURATIONS"):
                i += 2
                while toks[i][0] != ")":
                    lid = toks[i][0]
                    vals, i = group(i + 1)
                    nums = [float(v) for v in vals]
                    configs[lid] = list(zip(nums[0::2], nums[1::2], strict=False))
                i += 1
            elif word in ("ROUTINGS", "ROUTING"):
                state = toks[i + 1][0]
                i += 3
                routing: dict[str, list[tuple[float, list[str]]]] = {}
                while toks[i][0] != ")":
                    did = toks[i][0]
                    i += 2
                    paths = []
                    while toks[i][0] != ")":
                        amount = float(toks[i][0])
                        links, i = group(i + 1)
                        paths.append((amount, links))
                    routing[did] = paths
                    i += 1
                routings[state] = routing
                i += 1
            else:
                raise fail(f"unexpected {word!r}", line)
    except (IndexError, ValueError) as exc:
        raise fail(f"malformed solution file ({exc})", toks[min(i, len(toks) - 1)][1] if toks else 0) from None
    return SndlibSolution(configs, routings)
