"""SNDlib networks as backbone scenarios and back: the backbone tables of an :class:`SndlibNetwork`
(:func:`to_tables`, :func:`load_sndlib`), the design data kept in ``meta["sndlib"]`` and the
:class:`SndlibNetwork` rebuilt from a scenario alone (:func:`sndlib_from_network`). The mapping rules
are in the :mod:`backbone.io.sndlib` docstring.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError
from backbone.io.sndlib.network import UNIT_TO_GBPS, SndlibNetwork, parse_sndlib
from backbone.model import Network

logger = logging.getLogger(__name__)

PLANAR_BOX = (0.0, 45.0, 10.0)
"""(lon0, lat0, size_deg): planar coordinates are scaled into this box."""


# ---------------------------------------------------------------------- mapping to a Network
def region_of(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Planning region from position (the rule in the :mod:`backbone.io.sndlib` docstring), vectorized."""
    lon, lat = np.asarray(lon, float), np.asarray(lat, float)
    americas = np.where(lat >= 13, "NA", "LATAM")
    emea = np.where((lat >= 35) | ((lon >= 34) & (lat >= 12)), "EMEA", "AFRICA")
    return np.where(lon < -30, americas, np.where(lon < 60, emea, "APAC"))


def node_positions(snd: SndlibNetwork) -> tuple[np.ndarray, np.ndarray, str]:
    """(lon, lat, kind): geographic coordinates as given, or planar ones rescaled (see the :mod:`backbone.io.sndlib` docstring)."""
    x, y = snd.nodes["x"].to_numpy(float), snd.nodes["y"].to_numpy(float)
    if len(x) and (np.abs(x).max() <= 180) and (np.abs(y).max() <= 90):
        return x, y, "geographic"
    lon0, lat0, size = PLANAR_BOX
    span = max(float(np.ptp(x)), float(np.ptp(y)), 1e-9)
    return lon0 + (x - x.min()) / span * size, lat0 + (y - y.min()) / span * size, "planar-rescaled"


def to_tables(snd: SndlibNetwork) -> dict[str, pd.DataFrame]:
    """The backbone tables (sites, links, demands) for an SNDlib network (rules in the :mod:`backbone.io.sndlib` docstring)."""
    k = snd.gbps_per_unit
    lon, lat, _ = node_positions(snd)
    sites = pd.DataFrame({"id": snd.nodes.index, "name": snd.nodes.index, "lon": np.round(lon, 6),
                          "lat": np.round(lat, 6), "region": region_of(lon, lat), "kind": "pop"})
    total_demand = float(snd.demand_units.sum()) if len(snd.demands) else 1.0
    mods = snd.modules.copy()
    finite = mods[np.isfinite(mods["capacity"].to_numpy(float))].copy()
    finite["per_unit"] = finite["cost"] / finite["capacity"]
    cheapest = finite.sort_values(["per_unit", "capacity"], kind="stable").groupby("link").first()
    largest = finite.groupby("link")["capacity"].max()
    links = snd.links
    pre = links["preinstalled_capacity"].astype(float)
    fallback = largest.reindex(links.index).fillna(max(total_demand, 1.0))
    cap_units = pre.where(pre > 0, fallback)
    module_units = cheapest["capacity"].reindex(links.index).fillna(cap_units)
    module_cost = cheapest["cost"].reindex(links.index).fillna(0.0)
    max_units = cap_units + np.ceil(total_demand / module_units) * module_units
    out_links = pd.DataFrame({
        "id": links.index, "name": links.index, "site_a": links["source"], "site_b": links["target"],
        "capacity_gbps": cap_units.to_numpy() * k, "module_gbps": module_units.to_numpy() * k,
        "module_cost_usd": module_cost.to_numpy(), "max_capacity_gbps": max_units.to_numpy() * k,
        "routing_cost_per_gbps": links["routing_cost"].to_numpy(float) / k,
        "preinstalled_cost_usd": links["preinstalled_cost"].to_numpy(float),
        "sndlib_preinstalled_gbps": pre.to_numpy() * k,
    })
    demands = pd.DataFrame({"id": snd.demands.index, "src": snd.demands["source"], "dst": snd.demands["target"],
                            "demand_gbps": snd.demand_units * k, "traffic_class": "bulk"})
    return {"sites": sites, "links": out_links.reset_index(drop=True), "demands": demands.reset_index(drop=True)}


def load_sndlib(path: str | Path) -> Network:
    """Load an SNDlib native network file as a :class:`Network` (mapping rules: the :mod:`backbone.io.sndlib` docstring).

    Raises
    ------
    ValidationError
        Listing every problem, each with file, ``line N (record)`` and field.

    Example
    -------
    >>> net = load_sndlib("polska.txt")  # doctest: +SKIP
    >>> net.links[["capacity_gbps", "module_gbps", "module_cost_usd"]].head()  # doctest: +SKIP
    """
    from backbone.validate import build_network

    snd = parse_sndlib(path)
    _, _, coords = node_positions(snd)
    meta = {"description": f"SNDlib network {snd.name}", "source": "sndlib",
            "sources": [{"file": Path(snd.file).name, "format": "sndlib"}],
            "sndlib": {"meta": snd.meta, "gbps_per_unit": snd.gbps_per_unit, "coordinates": coords,
                       "admissible_paths": len(snd.paths), **design_meta(snd)}}
    tables = to_tables(snd)
    files = {t: snd.file for t in ("sites", "links", "demands")}
    net = build_network(tables, name=snd.name, meta=meta, files=files)
    logger.info("loaded SNDlib %s: %d nodes, %d links, %d demands (%s coordinates)", snd.name, len(net.sites),
                len(net.links), len(net.demands), coords)
    return net


# ---------------------------------------------------------------------- design data kept in the scenario
def design_meta(snd: SndlibNetwork) -> dict[str, Any]:
    """``{"links": ..., "demands": ...}``: the SNDlib data the backbone tables do not hold (the :mod:`backbone.io.sndlib` docstring).

    Capacities are in SNDlib units; an ``UNLIMITED`` module capacity is ``None`` (JSON null).
    """
    mods: dict[str, list[list[float | None]]] = {str(lk): [] for lk in snd.links.index}
    for lk, cap, cost in zip(snd.modules["link"], snd.modules["capacity"].to_numpy(float),
                             snd.modules["cost"].to_numpy(float), strict=True):
        mods[str(lk)].append([None if math.isinf(cap) else float(cap), float(cost)])
    links = {str(lk): {"preinstalled": float(pre), "setup_cost": float(setup), "modules": mods[str(lk)]}
             for lk, pre, setup in zip(snd.links.index, snd.links["preinstalled_capacity"].to_numpy(float),
                                       snd.links["setup_cost"].to_numpy(float), strict=True)}
    demands = {str(d): {"routing_unit": float(r)} for d, r in zip(snd.demands.index,
                                                                   snd.demands["routing_unit"].to_numpy(float),
                                                                   strict=True)}
    return {"links": links, "demands": demands}


def _number(value: Any, problems: list[Problem], record: str, field: str, positive: bool = False) -> float:
    """A finite number >= 0 (> 0 when ``positive``) from scenario meta, or NaN and a problem."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and \
        (value > 0 if positive else value >= 0)
    if not ok:
        problems.append(Problem(f"must be a finite number {'> 0' if positive else '>= 0'}", file="scenario",
                                table="meta", record=record, field=field))
        return math.nan
    return float(value)


def sndlib_from_network(net: Network) -> SndlibNetwork:
    """The :class:`SndlibNetwork` of a scenario, from its tables and ``meta["sndlib"]`` only.

    Capacity units follow ``meta["sndlib"]["meta"]["unit"]`` (as :attr:`SndlibNetwork.gbps_per_unit`).
    Links: ``site_a -> site_b``, routing cost ``routing_cost_per_gbps x gbps_per_unit``,
    pre-installed cost ``preinstalled_cost_usd``; pre-installed capacity, setup cost and the
    module list from ``meta["sndlib"]["links"][id]`` (a link it does not list: pre-installed
    ``capacity_gbps``, no setup cost and one module of ``module_gbps`` at ``module_cost_usd``).
    Demands: ``demand_gbps / gbps_per_unit`` capacity units, in the routing unit of
    ``meta["sndlib"]["demands"][id]`` (default 1). Any scenario works, SNDlib or not.

    Raises
    ------
    ValidationError
        For malformed ``meta.sndlib`` entries (naming ``meta.sndlib...`` and the record), and
        entries naming links or demands the scenario does not have.
    """
    raw = net.meta.get("sndlib") or {}
    problems: list[Problem] = []
    if not isinstance(raw, dict):
        raise ValidationError(Problem("must be an object", file="scenario", table="meta", field="sndlib"))
    link_meta = raw.get("links") or {}
    demand_meta = raw.get("demands") or {}
    for name, value in (("links", link_meta), ("demands", demand_meta)):
        if not isinstance(value, dict):
            problems.append(Problem("must be an object keyed by id", file="scenario", table="meta",
                                    field=f"sndlib.{name}"))
    snd_meta = raw.get("meta") or {}
    if not isinstance(snd_meta, dict):
        problems.append(Problem("must be an object", file="scenario", table="meta", field="sndlib.meta"))
    if problems:
        raise ValidationError(problems)
    plain_meta = {str(a): str(b) for a, b in snd_meta.items()}
    k = UNIT_TO_GBPS.get(plain_meta.get("unit", "").strip().upper(), 1.0)  # as SndlibNetwork.gbps_per_unit
    for name, value, known in (("links", link_meta, net.links.index), ("demands", demand_meta, net.demands.index)):
        unknown = sorted(set(value) - set(map(str, known)))
        problems += [Problem(f"no {name[:-1]} {u!r} in the scenario", file="scenario", table="meta", record=u,
                             field=f"sndlib.{name}") for u in unknown[:20]]
    lk = net.links
    rows: list[dict[str, Any]] = []
    mods: list[dict[str, Any]] = []
    for i, lid in enumerate(lk.index):
        entry = link_meta.get(str(lid))
        row = {"id": str(lid), "source": str(lk["site_a"].iat[i]), "target": str(lk["site_b"].iat[i]),
               "preinstalled_cost": float(lk["preinstalled_cost_usd"].iat[i]),
               "routing_cost": float(lk["routing_cost_per_gbps"].iat[i]) * k, "line": 0}
        if entry is None:
            row.update(preinstalled_capacity=float(lk["capacity_gbps"].iat[i]) / k, setup_cost=0.0)
            mods.append({"link": str(lid), "capacity": float(lk["module_gbps"].iat[i]) / k,
                         "cost": float(lk["module_cost_usd"].iat[i])})
            rows.append(row)
            continue
        field = f"sndlib.links.{lid}"
        if not isinstance(entry, dict) or not isinstance(entry.get("modules", []), list):
            problems.append(Problem("must be {preinstalled, setup_cost, modules: [[capacity, cost], ...]}",
                                    file="scenario", table="meta", record=str(lid), field=field))
            continue
        row["preinstalled_capacity"] = _number(entry.get("preinstalled", 0.0), problems, str(lid),
                                               f"{field}.preinstalled")
        row["setup_cost"] = _number(entry.get("setup_cost", 0.0), problems, str(lid), f"{field}.setup_cost")
        for j, mod in enumerate(entry.get("modules", [])):
            if not isinstance(mod, list) or len(mod) != 2:
                problems.append(Problem("a module is [capacity, cost]", file="scenario", table="meta",
                                        record=str(lid), field=f"{field}.modules.{j}"))
                continue
            cap = math.inf if mod[0] is None else _number(mod[0], problems, str(lid), f"{field}.modules.{j}",
                                                          positive=True)
            mods.append({"link": str(lid), "capacity": cap,
                         "cost": _number(mod[1], problems, str(lid), f"{field}.modules.{j}")})
        rows.append(row)
    units = net.demands["demand_gbps"].to_numpy(float) / k
    routing = []
    for did in net.demands.index:
        entry = demand_meta.get(str(did)) or {}
        if not isinstance(entry, dict):
            problems.append(Problem("must be {routing_unit}", file="scenario", table="meta", record=str(did),
                                    field=f"sndlib.demands.{did}"))
            entry = {}
        routing.append(_number(entry.get("routing_unit", 1.0), problems, str(did),
                               f"sndlib.demands.{did}.routing_unit", positive=True))
    if problems:
        raise ValidationError(problems)
    nodes = pd.DataFrame({"x": net.sites["lon"].to_numpy(float), "y": net.sites["lat"].to_numpy(float), "line": 0},
                         index=pd.Index(net.sites.index.astype(str), name="id"))
    links = pd.DataFrame(rows, columns=["id", "source", "target", "preinstalled_capacity", "preinstalled_cost",
                                        "routing_cost", "setup_cost", "line"]).set_index("id")
    ru = np.asarray(routing, float)
    demands = pd.DataFrame({"source": net.demands["src"].astype(str).to_numpy(),
                            "target": net.demands["dst"].astype(str).to_numpy(), "routing_unit": ru,
                            "demand_value": units / ru, "max_path_length": math.nan, "line": 0},
                           index=pd.Index(net.demands.index.astype(str), name="id"))
    modules = pd.DataFrame(mods, columns=["link", "capacity", "cost"])
    paths = pd.DataFrame(columns=["demand", "path", "links", "line"])
    return SndlibNetwork(net.name, plain_meta, nodes, links, modules, demands, paths)
