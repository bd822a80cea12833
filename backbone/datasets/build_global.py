"""Assemble the shipped global scenario (``data/global``) from the curated fact tables.

Steps: sites and metros (:mod:`~backbone.datasets.global_sites`, with storage from
:mod:`~backbone.datasets.global_workloads`, which also gives the datasets and training jobs), submarine segments
(:mod:`~backbone.datasets.global_cables`) and terrestrial links
(:mod:`~backbone.datasets.global_terrestrial`) become validated tables; lengths and latencies are
derived from geometry by :class:`~backbone.model.Network`; SRLGs are derived here (one per cable
system, one per landing station shared by several systems, geographic corridors, and a conduit group for
every link in none of those, so every link is in at least one SRLG); the latency
model is calibrated against public measured round trips (``data/calibration/public_rtt.csv``,
:func:`backbone.calibrate.calibrate`); then the demand generator (:func:`backbone.demand.regenerate`) fills ``metros.inference_gpus`` and
``demands``, and the folder is written with :func:`backbone.io.save_scenario`.

Run ``python -m backbone.datasets.build_global [OUT_DIR]`` (default: the repository's
``data/global``).
"""

from __future__ import annotations

import logging
import re
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from shapely import contains_xy
from shapely.geometry import Polygon, box

from backbone import geo
from backbone.datasets import global_candidates as gc
from backbone.datasets.global_cables import CABLES, CableSystem
from backbone.datasets.global_sites import metro_records, site_records
from backbone.datasets.global_terrestrial import TERRESTRIAL
from backbone.datasets.global_workloads import dataset_records, storage_columns, training_job_records
from backbone.model import Network
from backbone.quarters import quarter_number

logger = logging.getLogger(__name__)

SCENARIO_NAME = "global"
CALIBRATION_DATE = "2026-12-02"
"""Date recorded for the shipped calibration (fixed, so a rebuild reproduces the shipped files)."""
CALIBRATION_REFITS = 4
"""Most refits of the calibrated network while its parameters still move (see :func:`calibrate_topology`)."""
TERRESTRIAL_MODULE_GBPS = 400.0
"""One 400G wave (coherent 400ZR+/OpenZR+ class) per terrestrial upgrade module."""
SUBMARINE_MODULE_GBPS = 1600.0
"""Spectrum for 1.6 Tbps on a fibre pair (e.g. 4 x 400G) per submarine upgrade module."""
SUBMARINE_MAX_SHARE = 0.4
"""A segment may grow to this share of the system's design capacity (spectrum one operator can
buy or lease on a shared system), in whole upgrade modules on top of today's lit capacity, and never
below today's lit capacity (:func:`submarine_max_gbps`)."""

# Geographic corridors: shapes (lon/lat) and which link kinds they catch. A link belongs when any
# point of its densified route lies inside the shape (terrestrial links only when "terrestrial"
# is listed, e.g. the Egyptian land crossings).
CORRIDORS: dict[str, tuple[str, Any, tuple[str, ...]]] = {
    # the Red Sea and the Gulf of Suez with the land crossings' Suez isthmus (north to 30.1 N); the Mediterranean
    # landings (Abu Talat, Port Said), Cairo, Jeddah and Aqaba (the Israel-Jordan land bridge) stay outside: their shore ends and metros are not the
    # Red Sea's, while every route crossing the isthmus or landing on the Red Sea passes through the shape
    "corridor-red-sea-suez": (
        "Red Sea, Gulf of Suez and the Egyptian land crossings' Suez isthmus",
        Polygon([(31.6, 30.1), (32.9, 30.1), (34.75, 29.3), (35.0, 29.3), (35.0, 28.0), (38.3, 22.6), (38.95, 21.6),
                 (39.05, 21.3), (43.6, 13.0), (43.6, 12.3), (42.8, 12.3), (38.0, 18.0), (33.5, 26.0), (32.3, 29.0),
                 (31.4, 29.75)]),
        ("submarine", "terrestrial"),
    ),
    "corridor-bab-el-mandeb": ("Strait of Bab-el-Mandeb", box(42.9, 12.2, 43.8, 13.0), ("submarine",)),
    "corridor-gibraltar": ("Strait of Gibraltar", box(-6.5, 35.6, -4.5, 36.3), ("submarine",)),
    "corridor-hormuz": ("Strait of Hormuz", box(55.8, 25.9, 57.0, 26.9), ("submarine",)),
    "corridor-malacca": ("Strait of Malacca", box(97.5, 0.8, 103.3, 6.0), ("submarine",)),
    "corridor-singapore-strait": ("Singapore Strait approaches", box(103.3, 0.9, 104.8, 1.6), ("submarine",)),
    "corridor-luzon-strait": ("Luzon Strait (Bashi Channel)", box(119.0, 18.5, 122.5, 22.3), ("submarine",)),
    "corridor-taiwan-strait": ("Taiwan Strait", box(118.5, 22.6, 121.3, 25.6), ("submarine",)),
    "corridor-korea-strait": ("Korea Strait / Tsushima", box(128.0, 33.3, 130.0, 35.1), ("submarine",)),
    "corridor-sunda-strait": ("Sunda Strait", box(105.0, -6.6, 106.3, -5.5), ("submarine",)),
    "corridor-english-channel": ("English Channel (Dover Strait to Cotentin)", box(-2.0, 49.5, 2.0, 51.2),
                                 ("submarine",)),
    "corridor-channel-tunnel": ("Channel Tunnel (Folkestone - Coquelles)", box(1.0, 50.9, 1.95, 51.12),
                                ("terrestrial",)),
    "corridor-celtic-sea": ("Celtic Sea / Cornwall and Bristol Channel approaches", box(-7.0, 50.0, -3.0, 51.6),
                            ("submarine",)),
    # the Jersey Shore and the south shore of Long Island with their sea approaches; Manhattan, Raritan Bay's
    # north shore and the long-haul routes leaving New York stay outside (a corridor is a landing approach,
    # not a metro)
    "corridor-ny-nj-landings": ("New York / New Jersey landing corridor (shore ends and landing approaches)",
                                Polygon([(-74.15, 39.85), (-74.15, 40.3), (-73.9, 40.45), (-73.3, 40.6),
                                         (-72.85, 40.82), (-72.4, 40.9), (-72.3, 40.5), (-73.5, 39.85)]),
                                ("submarine", "terrestrial")),
    "corridor-la-landings": ("Los Angeles South Bay landings (shore ends)", box(-118.7, 33.6, -118.2, 34.0),
                             ("submarine",)),
}


def slug(text: str) -> str:
    """``'SEA-ME-WE 5'`` -> ``'sea-me-we-5'``."""
    s = text.lower().replace("é", "e").replace("/", "-")
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def cable_slack_factors(sites: pd.DataFrame) -> dict[str, float]:
    """Laid length over modelled route length, per cable system.

    A cable lies longer than a smooth polyline through sea-lane waypoints (seabed routing round
    canyons and seamounts, burial detours near shore, 2-5 % slack). For a system modelled completely
    whose length is published the factor is ``published / footprint`` (footprint:
    :func:`system_route_km`); for the others it is the median of those factors (~1.07).
    """
    ratios = {c.name: c.published_length_km / system_route_km(c, sites)
              for c in CABLES if c.complete and c.published_length_km}
    default = float(np.median(list(ratios.values())))
    return {c.name: float(ratios.get(c.name, default)) for c in CABLES}


def submarine_max_gbps(lit_gbps: float, design_tbps: float) -> float:
    """A segment's upgrade limit: today's lit capacity plus as many whole spectrum modules as fit under
    :data:`SUBMARINE_MAX_SHARE` of the system's design capacity (so the limit never rounds above that share,
    and never falls below what is lit)."""
    headroom = SUBMARINE_MAX_SHARE * design_tbps * 1000.0 - lit_gbps
    return lit_gbps + max(0.0, float(np.floor(headroom / SUBMARINE_MODULE_GBPS + 1e-9))) * SUBMARINE_MODULE_GBPS


def cable_link_records() -> list[dict[str, Any]]:
    """One submarine link record per modelled segment; ``length_km`` is the route length through
    the waypoints times the system's slack factor (:func:`cable_slack_factors`)."""
    sites = pd.DataFrame(site_records()).set_index("id")
    slack = cable_slack_factors(sites)
    records = []
    for c in CABLES:
        for s in c.segments:
            lit = float(s.lit_gbps if s.lit_gbps is not None else c.lit_gbps)
            a, b = sites.loc[s.site_a], sites.loc[s.site_b]
            route_km = geo.polyline_km([(float(a["lon"]), float(a["lat"])), *s.waypoints,
                                        (float(b["lon"]), float(b["lat"]))])
            records.append({
                "id": f"{slug(c.name)}-{s.site_a}-{s.site_b}",
                "name": f"{c.name} {s.site_a}-{s.site_b}",
                "site_a": s.site_a, "site_b": s.site_b, "kind": "submarine", "cable_system": c.name,
                "capacity_gbps": lit, "waypoints": geo.format_waypoints(s.waypoints),
                "length_km": round(route_km * slack[c.name], 1),
                "module_gbps": SUBMARINE_MODULE_GBPS,
                "max_capacity_gbps": submarine_max_gbps(lit, c.design_tbps),
            })
    return records


def terrestrial_link_records() -> list[dict[str, Any]]:
    """One terrestrial link record per route (parallel diverse routes get ``-2``, ``-3`` ids)."""
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for a, b, cap, waypoints in TERRESTRIAL:
        base = f"t-{a}-{b}"
        seen[base] = seen.get(base, 0) + 1
        lid = base if seen[base] == 1 else f"{base}-{seen[base]}"
        records.append({
            "id": lid, "name": f"{a} - {b}" + ("" if seen[base] == 1 else f" (route {seen[base]})"),
            "site_a": a, "site_b": b, "kind": "terrestrial", "capacity_gbps": float(cap),
            "waypoints": geo.format_waypoints(waypoints), "module_gbps": TERRESTRIAL_MODULE_GBPS,
        })
    return records


def srlg_records(net: Network) -> list[dict[str, Any]]:
    """SRLGs: one per cable system, one per landing shared by several systems, corridors, and the conduit of
    every link in none of those (:func:`conduit_records`)."""
    links = net.links
    records: list[dict[str, Any]] = []
    sub = links[links["kind"] == "submarine"]
    for name, group in sub.groupby("cable_system", sort=True):
        records.append({"id": f"cable-{slug(str(name))}", "name": f"{name} (cable system)", "kind": "cable_system",
                        "links": ";".join(group.index)})
    landings = net.sites.index[net.sites["kind"] == "landing"]
    for site in landings:
        touching = links[(links["site_a"] == site) | (links["site_b"] == site)]
        systems = set(touching.loc[touching["kind"] == "submarine", "cable_system"])
        if len(systems) >= 2:
            records.append({"id": f"landing-{site}", "name": f"{net.sites.at[site, 'name']} (landing station)",
                            "kind": "landing", "links": ";".join(touching.index)})
    for cid, (title, _, _) in CORRIDORS.items():
        members = [str(lid) for lid, row in links.iterrows() if in_corridor(cid, row, net.sites)]
        if members:
            records.append({"id": cid, "name": title, "kind": "corridor", "links": ";".join(members)})
        else:
            logger.warning("corridor %s has no member link", cid)
    return records + conduit_records(links, records)


def conduit_records(links: pd.DataFrame, groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One ``conduit-<link id>`` SRLG (kind ``conduit``) for every link in none of ``groups``: every link belongs
    to at least its own conduit, so a single-SRLG sweep fails it. A link already in a cable system, landing or
    corridor group fails with that group, and its own conduit cut fails a subset of those links, so it gets no
    extra group. In the shipped scenario these are terrestrial routes (every submarine segment is in its cable
    system's group); parallel routes (``-2``, ``-3`` ids) are diverse by construction, so each has its own."""
    member = {m for g in groups for m in str(g["links"]).split(";") if m}
    return [{"id": f"conduit-{lid}", "name": f"{row['name']} (conduit)", "kind": "conduit", "links": str(lid)}
            for lid, row in links.iterrows() if lid not in member]


def in_corridor(corridor: str, route: pd.Series, sites: pd.DataFrame) -> bool:
    """Whether a link (or candidate: ``route`` has ``site_a``, ``site_b``, ``waypoints`` and ``kind`` or
    ``link_kind``) belongs to a corridor: any point of its densified route lies in the corridor's shape,
    for the link kinds the corridor catches (:data:`CORRIDORS`)."""
    from backbone.model import link_route

    _, shape, kinds = CORRIDORS[corridor]
    kind = str(route["link_kind"] if "link_kind" in route.index else route["kind"])
    if kind == "terrestrial" and "terrestrial" not in kinds and "terrestrial-both-ends" not in kinds:
        return False
    if kind == "submarine" and "submarine" not in kinds:
        return False
    if kind == "terrestrial" and "terrestrial-both-ends" in kinds:
        ends = sites.loc[[route["site_a"], route["site_b"]]]
        if not contains_xy(shape, ends["lon"].to_numpy(), ends["lat"].to_numpy()).all():
            return False
    coords = link_route(route, sites)
    lon = (coords[:, 0] + 180.0) % 360.0 - 180.0
    return bool(contains_xy(shape, lon, coords[:, 1]).any())


def candidate_srlgs(candidate: pd.Series, net: Network) -> list[str]:
    """The SRLGs a candidate joins, by the links' own rules: its cable system's SRLG (capacity on a cable
    shares the cable's fate), the landing SRLG of each end (every route at a shared landing station), and
    every corridor its route crosses."""
    srlgs = set(net.srlgs.index)
    out = []
    system = str(candidate["cable_system"])
    if system and f"cable-{slug(system)}" in srlgs:
        out.append(f"cable-{slug(system)}")
    out += [f"landing-{s}" for s in (candidate["site_a"], candidate["site_b"]) if f"landing-{s}" in srlgs]
    out += [c for c in CORRIDORS if c in srlgs and in_corridor(c, candidate, net.sites)]
    return out


def quarters_between(start: str, end: str) -> int:
    """Whole quarters from ``start`` to ``end`` (``'2026Q4'`` -> ``'2027Q3'`` is 3); never negative."""
    return max(0, quarter_number(end) - quarter_number(start))


def candidate_records(net: Network) -> list[dict[str, Any]]:
    """The candidate catalogue (:mod:`backbone.datasets.global_candidates`) as ``candidates`` records.

    Lengths: submarine routes are the polyline through their waypoints times the cable system's slack
    factor (the median for systems not modelled), like the cable segments; terrestrial routes through
    waypoints are their polyline, like terrestrial links; fibre pairs and diverse backhauls follow the
    link they parallel. Costs follow the cost model of that module; SRLGs :func:`candidate_srlgs`.
    """
    sites = net.sites
    slack = cable_slack_factors(sites)
    default_slack = float(np.median(list(slack.values())))
    source_text = gc.SOURCES
    rows: list[dict[str, Any]] = []
    for c in gc.CANDIDATES:
        a, b = sites.loc[c.site_a], sites.loc[c.site_b]
        route_km = geo.polyline_km([(float(a["lon"]), float(a["lat"])), *c.waypoints,
                                    (float(b["lon"]), float(b["lat"]))])
        if c.link_kind == "submarine":
            length = route_km * slack.get(c.cable_system, default_slack)
        else:
            length = route_km
        length = round(length, 1)
        if c.kind == "spectrum":
            module_gbps = gc.SPECTRUM_MODULE_GBPS
            module_cost = gc.SPECTRUM_MODULE_FIXED_USD + gc.SPECTRUM_MODULE_USD_PER_KM * length
            fixed = gc.SPECTRUM_FIXED_USD
        elif c.kind in ("fibre_pair", "cable"):
            module_gbps = gc.FIBRE_PAIR_GBPS
            module_cost = gc.FIBRE_PAIR_LIGHTING_USD + gc.FIBRE_PAIR_USD_PER_KM * length
            fixed = gc.NEW_CABLE_FIXED_USD if c.kind == "cable" else 0.0
        else:
            module_gbps = gc.TERRESTRIAL_MODULE_GBPS
            module_cost = gc.TERRESTRIAL_MODULE_FIXED_USD + gc.TERRESTRIAL_MODULE_USD_PER_KM * length
            fixed = (gc.TERRESTRIAL_ROUTE_USD_PER_KM * length if c.kind == "terrestrial"
                     else gc.BACKHAUL_ENTRY_USD + gc.BACKHAUL_USD_PER_KM * length)
        lead = c.lead_time_quarters
        if c.available_from:
            lead = max(lead, quarters_between(gc.SCENARIO_QUARTER, c.available_from))
        rows.append({
            "id": c.id, "name": c.name, "site_a": c.site_a, "site_b": c.site_b, "kind": c.kind,
            "link_kind": c.link_kind, "cable_system": c.cable_system, "waypoints": geo.format_waypoints(c.waypoints),
            "length_km": length,
            "module_gbps": c.module_gbps or module_gbps,
            "module_cost_usd": round(c.module_cost_usd if c.module_cost_usd is not None else module_cost, -3),
            "fixed_cost_usd": round(c.fixed_cost_usd if c.fixed_cost_usd is not None else fixed, -3),
            "max_modules": c.max_modules, "lead_time_quarters": lead, "available_from": c.available_from,
            "source": "; ".join(source_text[k] for k in c.sources),
        })
    links = net.links
    for lid, system in gc.FIBRE_PAIR_LINKS:
        row = links.loc[lid]
        length = float(row["length_km"])
        rows.append({
            "id": f"c-fp-{lid}", "name": f"{system}: one more fibre pair {row['site_a']} - {row['site_b']}",
            "site_a": row["site_a"], "site_b": row["site_b"], "kind": "fibre_pair", "link_kind": "submarine",
            "cable_system": system, "waypoints": row["waypoints"], "length_km": length,
            "module_gbps": gc.FIBRE_PAIR_GBPS,
            "module_cost_usd": round(gc.FIBRE_PAIR_LIGHTING_USD + gc.FIBRE_PAIR_USD_PER_KM * length, -3),
            "fixed_cost_usd": 0.0, "max_modules": 1, "lead_time_quarters": 3, "available_from": "",
            "source": f"{system}: fibre pairs and design capacity as in global_cables; {gc.SOURCES['fibre-pair']}",
        })
    for lid in gc.BACKHAUL_LINKS:
        row = links.loc[lid]
        length = round(float(row["length_km"]) * gc.BACKHAUL_LENGTH_FACTOR, 1)
        rows.append({
            "id": f"c-bh-{lid}", "name": f"Diverse backhaul {row['site_a']} - {row['site_b']} (second route)",
            "site_a": row["site_a"], "site_b": row["site_b"], "kind": "backhaul", "link_kind": "terrestrial",
            "cable_system": "", "waypoints": "", "length_km": length,
            "module_gbps": gc.TERRESTRIAL_MODULE_GBPS,
            "module_cost_usd": round(gc.TERRESTRIAL_MODULE_FIXED_USD + gc.TERRESTRIAL_MODULE_USD_PER_KM * length, -3),
            "fixed_cost_usd": round(gc.BACKHAUL_ENTRY_USD + gc.BACKHAUL_USD_PER_KM * length, -3),
            "max_modules": gc.TERRESTRIAL_MAX_MODULES, "lead_time_quarters": 3, "available_from": "",
            "source": gc.SOURCES["backhaul"],
        })
    for r in rows:
        r["srlgs"] = ";".join(candidate_srlgs(pd.Series(r), net))
    return rows


def system_route_km(system: CableSystem, sites: pd.DataFrame, tolerance_km: float = 60.0) -> float:
    """Footprint length of a cable system's modelled segments: the union of their routes.

    Branches that share a trunk (same waypoints up to a branching unit) count the trunk once: the
    segments are walked longest first, and a step counts only where it lies more than
    ``tolerance_km`` from every step already counted. This is what a published system length
    (trunk plus branches) measures.
    """
    counted: list[np.ndarray] = []  # unit vectors of counted step midpoints
    total = 0.0
    routes = []
    for s in system.segments:
        a, b = sites.loc[s.site_a], sites.loc[s.site_b]
        pts = [(float(a["lon"]), float(a["lat"])), *s.waypoints, (float(b["lon"]), float(b["lat"]))]
        routes.append(geo.route_coords(pts, densify_km=20.0))
    routes.sort(key=lambda c: -geo.polyline_km([tuple(p) for p in c]))
    cos_tol = np.cos(tolerance_km / 6371.0)
    for coords in routes:
        step = geo.geodesic_km(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1])
        mid = (coords[:-1] + coords[1:]) / 2.0
        lon, lat = np.radians(mid[:, 0]), np.radians(mid[:, 1])
        xyz = np.column_stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])
        if counted:
            prev = np.vstack(counted)
            near = (xyz @ prev.T).max(axis=1) >= cos_tol
        else:
            near = np.zeros(len(xyz), bool)
        total += float(step[~near].sum())
        counted.append(xyz[~near])
    return total


def build_topology() -> Network:
    """The global scenario's sites (with storage), links, SRLGs, metros, candidates, datasets and training jobs (no
    demand yet), validated."""
    from backbone.validate import build_network

    links = cable_link_records() + terrestrial_link_records()
    meta = scenario_meta()
    tables: dict[str, Any] = {"sites": storage_columns(site_records()), "links": links, "metros": metro_records(),
                              "srlgs": [], "demands": [], "datasets": dataset_records(),
                              "training_jobs": training_job_records()}
    net = build_network(tables, name=SCENARIO_NAME, meta=meta)
    tables["srlgs"] = srlg_records(net)
    net = build_network(tables, name=SCENARIO_NAME, meta=meta)
    tables["candidates"] = candidate_records(net)
    return build_network(tables, name=SCENARIO_NAME, meta=meta)


def scenario_meta() -> dict[str, Any]:
    """Manifest metadata: description, version, sources, demand parameters."""
    from backbone.demand import DemandParameters

    return {
        "description": ("A global AI backbone: hyperscale GPU campuses, metro PoPs and cable landing stations "
                        "joined by terrestrial long-haul fibre and named submarine cable systems modelled segment "
                        "by segment along real sea lanes. Built by backbone.datasets.build_global from public "
                        "facts; GPU, power and leased-capacity figures are estimates (see data/README.md)."),
        "version": "2026.12",
        "sources": [
            "TeleGeography Submarine Cable Map (submarinecablemap.com): systems, landing points, lengths, RFS",
            "Cable owners' press releases for design capacities (Google, Meta, Microsoft, Amazon, consortia)",
            "GeoNames / Wikipedia city and landing-town coordinates",
            "UN World Urbanization Prospects (metro population); Brookings Global Metro Monitor / OECD (metro GDP)",
            "Ember Yearly Electricity Data 2023, EIA (grid carbon intensity); EIA, Eurostat, IEA (power prices)",
            "Llama 3 Herd of Models, DiLoCo and Streaming DiLoCo, Chinchilla, Common Crawl, Sangraha, Jais, Backblaze "
            "(datasets, training jobs, site storage; derivations in backbone/datasets/global_workloads.py)",
        ],
        "demand_parameters": asdict(DemandParameters()),
    }


def calibrate_topology(net: Network) -> Network:
    """The topology with its latency model fitted to the shipped public round-trip measurements."""
    from backbone.calibrate import calibrate, load_measured
    from backbone.paths import public_rtt_path

    path = public_rtt_path()
    measured = load_measured(path)
    result = calibrate(net, measured, date=CALIBRATION_DATE, source_label=f"calibration/{path.name}")
    # re-routing after each fit can stop at a different fixed point from the calibrated network than from the
    # uncalibrated one; refit the result until a refit changes nothing, so `backbone calibrate` on the shipped
    # scenario reproduces its parameters
    first = result
    for _ in range(CALIBRATION_REFITS):
        again = calibrate(result.network, measured, date=CALIBRATION_DATE, source_label=f"calibration/{path.name}")
        same = all(abs(again.parameters[k] - result.parameters[k]) <= 1e-4 * abs(result.parameters[k])
                   for k in result.parameters)
        if same:
            break
        result = again
    if result is not first:  # record the fit against the uncalibrated model, as a single fit would
        record = result.network.meta["calibration"]
        record["previous_parameters"] = first.network.meta["calibration"]["previous_parameters"]
        record["errors"]["before"] = first.network.meta["calibration"]["errors"]["before"]
    logger.info("calibrated latency on %d pairs: %s; median error %.1f %% -> %.1f %% (leave-one-out %.1f %%)",
                len(result.pairs), result.parameters, result.before["median_abs_pct"],
                result.after["median_abs_pct"], result.leave_one_out["median_abs_pct"])
    return result.network


def build(out_dir: str | Path) -> Network:
    """Build the topology, regenerate demand on the reloaded topology, write ``out_dir``.

    The demand is generated from the topology *as loaded from disk* so that a later
    ``regenerate(load_scenario(out_dir))`` reproduces the shipped files exactly.
    """
    from backbone.demand import DemandParameters, regenerate
    from backbone.io import load_scenario, save_scenario

    topology = calibrate_topology(build_topology())
    with tempfile.TemporaryDirectory() as tmp:
        save_scenario(topology, Path(tmp) / "topology")
        reloaded = load_scenario(Path(tmp) / "topology")
    net = regenerate(reloaded, DemandParameters.from_meta(reloaded.meta))
    save_scenario(net, out_dir)
    logger.info("wrote %s: %s", out_dir, net.summary())
    return load_scenario(out_dir)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry: ``python -m backbone.datasets.build_global [OUT_DIR]``."""
    from backbone.paths import default_scenario_path

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else default_scenario_path()
    build(out)


if __name__ == "__main__":
    main()
