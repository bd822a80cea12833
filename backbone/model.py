"""The :class:`Network`: tables of sites, links, SRLGs, metros, demands and candidates keyed by string id.

The tables are the source of truth (networkx is a derived view). A Network is never mutated
after construction: every transformation returns a new Network, so one instance can be shared
safely by concurrent solves and API requests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from backbone import geo
from backbone.errors import NotFoundError, Problem, ValidationError
from backbone.schema import CANDIDATES, TABLES, TRAFFIC_CLASSES, TableSpec

if TYPE_CHECKING:
    import networkx as nx

DEFAULT_PARAMETERS: dict[str, float] = {
    "group_index": geo.DEFAULT_GROUP_INDEX,
    "equipment_delay_ms": geo.DEFAULT_EQUIPMENT_DELAY_MS,
    "route_factor": geo.DEFAULT_ROUTE_FACTOR,
    "terrestrial_latency_factor": 1.0,
    "submarine_latency_factor": 1.0,
    "terrestrial_module_fixed_usd": 60_000.0,
    "terrestrial_module_usd_per_km": 30.0,
    "submarine_module_fixed_usd": 250_000.0,
    "submarine_module_usd_per_km": 120.0,
    "max_capacity_factor": 4.0,
}
"""Scenario parameters and their defaults (a scenario manifest may override any of them).

* ``group_index``: fibre group index (latency = length x group_index / c).
* ``equipment_delay_ms``: one-way per-link equipment delay.
* ``route_factor``: route length / geodesic for links without waypoints.
* ``terrestrial_latency_factor``, ``submarine_latency_factor``: calibrated latency factors (>= 1) that
  multiply the fibre delay of a link's length, by link kind (terrestrial also for access fibre);
  1.0 is the physical fibre floor. ``backbone calibrate`` fits them, with ``equipment_delay_ms``,
  to measured round trips (:mod:`backbone.calibrate`).
* ``*_module_fixed_usd`` + ``*_module_usd_per_km`` x length: default cost of one upgrade module
  (a 400G wave: transponder pair plus line-system share; submarine: spectrum on a wet plant).
* ``max_capacity_factor``: default upper limit on a link's capacity, as a multiple of today's.
"""


def empty_table(spec: TableSpec) -> pd.DataFrame:
    """An empty table with the spec's columns and an ``id`` index."""
    df = pd.DataFrame({c: pd.Series(dtype=_pandas_dtype(spec.column(c).dtype)) for c in spec.names})
    df.index = pd.Index([], dtype=str, name="id")
    return df


def _pandas_dtype(dtype: str) -> Any:
    return {"str": str, "float": float, "int": np.int64, "bool": bool, "idlist": object}[dtype]


@dataclass(frozen=True, eq=False)
class Network:
    """A backbone network: tables keyed by string id, plus scenario metadata.

    Build one with :func:`backbone.validate.build_network` (validated from raw records) or
    :meth:`Network.from_tables` (trusted tables), or load one with
    :func:`backbone.io.load_scenario`.

    Attributes
    ----------
    sites, links, srlgs, metros, demands
        DataFrames indexed by string ``id`` with the columns of :mod:`backbone.schema`.
    name
        Scenario name.
    meta
        Free metadata: ``description``, ``version``, ``sources``, ``parameters`` (see
        :data:`DEFAULT_PARAMETERS`).
    candidates
        Buildable capacity that does not exist yet (:data:`backbone.schema.CANDIDATES`); empty
        by default. :meth:`with_candidates_built` turns chosen ones into links.
    """

    sites: pd.DataFrame
    links: pd.DataFrame
    srlgs: pd.DataFrame
    metros: pd.DataFrame
    demands: pd.DataFrame
    name: str = "scenario"
    meta: dict[str, Any] = field(default_factory=dict)
    candidates: pd.DataFrame = field(default_factory=lambda: empty_table(CANDIDATES))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_tables(cls, tables: Mapping[str, pd.DataFrame | None], name: str = "scenario",
                    meta: Mapping[str, Any] | None = None) -> Network:
        """Build a network from trusted tables, filling defaults and derived columns.

        Input is assumed valid (use :func:`backbone.validate.build_network` for user input).
        """
        meta = dict(meta or {})
        params = {**DEFAULT_PARAMETERS, **dict(meta.get("parameters") or {})}
        meta["parameters"] = params
        frames = {t: normalize_table(TABLES[t], tables.get(t)) for t in TABLES}
        net = cls(frames["sites"], frames["links"], frames["srlgs"], frames["metros"],
                  frames["demands"], name=name, meta=meta, candidates=frames["candidates"])
        return net._with_derived()

    def _with_derived(self) -> Network:
        links = fill_link_derived(self.links, self.sites, self.parameters)
        candidates = fill_geometry_derived(self.candidates, self.sites, self.parameters)
        return replace(self, links=links, candidates=candidates)

    @property
    def parameters(self) -> dict[str, float]:
        """Scenario parameters (defaults merged with the manifest's)."""
        return {**DEFAULT_PARAMETERS, **dict(self.meta.get("parameters") or {})}

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by name (:data:`backbone.schema.TABLES` order; ``candidates`` may be empty)."""
        return {t: getattr(self, t) for t in TABLES}

    def copy_with(self, **tables: pd.DataFrame) -> Network:
        """A new network with some tables replaced (derived link columns are recomputed
        only where empty)."""
        return replace(self, **tables)

    # ------------------------------------------------------------------ equality / identity
    def equals(self, other: Network) -> bool:
        """True when every table, the name and the metadata are equal."""
        if self.name != other.name or _jsonable(self.meta) != _jsonable(other.meta):
            return False
        for t in TABLES:
            a, b = getattr(self, t), getattr(other, t)
            try:
                pd.testing.assert_frame_equal(a, b, check_dtype=False, check_index_type=False)
            except AssertionError:
                return False
        return True

    def fingerprint(self) -> str:
        """A stable hash of the tables (for caches keyed by network)."""
        h = hashlib.sha256()
        for t in TABLES:
            df = getattr(self, t)
            h.update(t.encode())
            h.update(df.to_csv().encode())
        return h.hexdigest()[:16]

    # ------------------------------------------------------------------ lookups
    def site(self, site_id: str) -> pd.Series:
        """The row of one site.

        Raises
        ------
        NotFoundError
            When no site has that id.
        """
        if site_id not in self.sites.index:
            raise NotFoundError(f"unknown site {site_id!r}")
        return self.sites.loc[site_id]

    def srlg_members(self) -> pd.DataFrame:
        """Long table of SRLG membership: columns ``srlg``, ``link``."""
        rows = [(s, link) for s, members in self.srlgs["links"].items() for link in members]
        return pd.DataFrame(rows, columns=["srlg", "link"])

    def cable_systems(self) -> list[str]:
        """Sorted names of submarine cable systems."""
        sub = self.links[(self.links["kind"] == "submarine") & (self.links["cable_system"] != "")]
        return sorted(sub["cable_system"].unique())

    def link_endpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """Integer site positions (into ``sites.index``) of each link's endpoints."""
        pos = pd.Series(np.arange(len(self.sites)), index=self.sites.index)
        return (pos.loc[self.links["site_a"]].to_numpy(), pos.loc[self.links["site_b"]].to_numpy())

    def link_coords(self, link_id: str) -> np.ndarray:
        """Route of one link as an (n, 2) array of unwrapped (lon, lat)."""
        row = self.links.loc[link_id]
        return link_route(row, self.sites)

    # ------------------------------------------------------------------ summary
    def summary(self) -> dict[str, Any]:
        """Counts and totals, as ``backbone info`` prints them."""
        sites, links = self.sites, self.links
        return {
            "name": self.name,
            "sites": len(sites),
            "sites_by_region": {str(k): int(v) for k, v in sites["region"].value_counts().sort_index().items()},
            "sites_by_kind": {str(k): int(v) for k, v in sites["kind"].value_counts().sort_index().items()},
            "links": len(links),
            "links_by_kind": {str(k): int(v) for k, v in links["kind"].value_counts().sort_index().items()},
            "cable_systems": len(self.cable_systems()),
            "srlgs": len(self.srlgs),
            "srlgs_by_kind": {str(k): int(v) for k, v in self.srlgs["kind"].value_counts().sort_index().items()},
            "metros": len(self.metros),
            "demands": len(self.demands),
            "candidates": len(self.candidates),
            "candidates_by_kind": {str(k): int(v)
                                   for k, v in self.candidates["kind"].value_counts().sort_index().items()},
            "demand_gbps": float(self.demands["demand_gbps"].sum()),
            "demand_gbps_by_class": {
                str(k): float(v) for k, v in self.demands.groupby("traffic_class")["demand_gbps"].sum().items()
            },
            "total_capacity_gbps": float(links["capacity_gbps"].sum()),
            "total_length_km": float(links["length_km"].sum()),
            "gpus": int(sites["gpus_installed"].sum()),
            "gpus_max": int(sites["gpus_max"].sum()),
            "power_mw": float(sites["power_available_mw"].sum()),
            "power_max_mw": float(sites["power_max_mw"].sum()),
            "inference_demand_gpus": float(self.metros["inference_gpus"].sum()),
        }

    # ------------------------------------------------------------------ graph view
    def to_networkx(self, weight: str = "latency_ms") -> nx.MultiGraph:
        """Undirected multigraph view: nodes are site ids, edges keyed by link id.

        Edge attributes are the link's columns; ``weight`` names the column copied to the
        ``weight`` attribute.
        """
        import networkx as nx

        g = nx.MultiGraph(name=self.name)
        g.add_nodes_from((i, r) for i, r in self.sites.to_dict("index").items())
        for link_id, r in self.links.to_dict("index").items():
            g.add_edge(r["site_a"], r["site_b"], key=link_id, **{**r, "id": link_id, "weight": r[weight]})
        return g

    # ------------------------------------------------------------------ transformations
    def fail_links(self, link_ids: Iterable[str]) -> Network:
        """A network without the given links.

        SRLG memberships are trimmed to match; an SRLG left with no links is dropped (nothing
        of it remains to fail), so the result saves and loads like any scenario; candidates
        forget a dropped SRLG the same way (failing links is not failing the SRLG itself:
        :meth:`fail_srlgs` drops the candidates of the failed SRLGs).
        """
        ids = self._known("links", link_ids)
        links = self.links.drop(index=ids)
        srlgs = self.srlgs.copy()
        gone = set(ids)
        srlgs["links"] = [tuple(m for m in members if m not in gone) for members in srlgs["links"]]
        dropped = set(srlgs.index[srlgs["links"].map(len) == 0])
        srlgs = srlgs[srlgs["links"].map(len) > 0]
        candidates = self.candidates
        if dropped and len(candidates):
            candidates = candidates.copy()
            candidates["srlgs"] = [tuple(m for m in members if m not in dropped) for members in candidates["srlgs"]]
        return replace(self, links=links, srlgs=srlgs, candidates=candidates)

    def srlg_links(self, srlg_ids: Iterable[str]) -> list[str]:
        """Union of the member links of the given SRLGs, in link-table order."""
        ids = self._known("srlgs", srlg_ids)
        members = {m for s in ids for m in self.srlgs.at[s, "links"]}
        return [link for link in self.links.index if link in members]

    def fail_srlgs(self, srlg_ids: Iterable[str]) -> Network:
        """A network without every link of the given SRLGs (and without the candidates in them)."""
        ids = self._known("srlgs", srlg_ids)
        return self.drop_candidates(self.candidates_in_srlgs(ids)).fail_links(self.srlg_links(ids))

    def fail_sites(self, site_ids: Iterable[str]) -> Network:
        """A network without the given sites, their links and candidates, and demands to or from them."""
        ids = set(self._known("sites", site_ids))
        net = self.fail_links(self.links.index[self.links["site_a"].isin(ids) | self.links["site_b"].isin(ids)])
        demands = net.demands[~(net.demands["src"].isin(ids) | net.demands["dst"].isin(ids))]
        cands = net.candidates
        cands = cands[~(cands["site_a"].isin(ids) | cands["site_b"].isin(ids))]
        return replace(net, sites=net.sites.drop(index=list(ids)), demands=demands, candidates=cands)

    # ------------------------------------------------------------------ candidates
    def candidates_in_srlgs(self, srlg_ids: Iterable[str]) -> list[str]:
        """Ids of the candidates that would join any of the given SRLGs, in table order."""
        wanted = set(srlg_ids)
        return [c for c, members in self.candidates["srlgs"].items() if wanted & set(members)]

    def drop_candidates(self, candidate_ids: Iterable[str]) -> Network:
        """A network without the given candidates (unknown ids raise :class:`NotFoundError`)."""
        ids = self._known("candidates", candidate_ids)
        if not ids:
            return self
        return replace(self, candidates=self.candidates.drop(index=ids))

    def candidate_cost_usd(self, modules: Mapping[str, int]) -> float:
        """Cost of building ``{candidate_id: modules}``: sum of ``fixed_cost_usd + m x module_cost_usd``
        over the candidates with ``m >= 1``."""
        built = self._checked_modules(modules)
        if not built:
            return 0.0
        c = self.candidates.loc[list(built)]
        m = np.array([built[i] for i in c.index], dtype=float)
        return float((c["fixed_cost_usd"].to_numpy() + m * c["module_cost_usd"].to_numpy()).sum())

    def with_candidates_built(self, modules: Mapping[str, int]) -> Network:
        """A network with candidates built as links (``{candidate_id: modules}``).

        Building candidate ``c`` with ``m`` modules (``1 <= m <= max_modules``; ``m = 0`` means
        not built and is skipped) adds link ``c`` between its sites with ``capacity_gbps = m x
        module_gbps``, kind ``link_kind``, the candidate's cable system, waypoints, length and
        latency, ``module_gbps`` and ``module_cost_usd`` of the candidate and
        ``max_capacity_gbps = max_modules x module_gbps`` (further modules remain buyable as
        link upgrades); each SRLG in the candidate's ``srlgs`` gains ``c`` as a member. The
        built candidates leave the ``candidates`` table, so the result is a canonical scenario.

        Raises
        ------
        NotFoundError
            For unknown candidate ids.
        ValidationError
            For a module count that is not a whole number in ``[0, max_modules]``.

        Example
        -------
        >>> after = net.with_candidates_built({"c-marseille-genoa": 2})  # doctest: +SKIP
        """
        built = self._checked_modules(modules)
        if not built:
            return self
        c = self.candidates.loc[list(built)]
        m = np.array([built[i] for i in c.index], dtype=float)
        new_links = pd.DataFrame({
            "name": c["name"], "site_a": c["site_a"], "site_b": c["site_b"], "kind": c["link_kind"],
            "cable_system": c["cable_system"], "capacity_gbps": m * c["module_gbps"].to_numpy(),
            "waypoints": c["waypoints"], "length_km": c["length_km"], "latency_ms": c["latency_ms"],
            "module_gbps": c["module_gbps"], "module_cost_usd": c["module_cost_usd"],
            "max_capacity_gbps": c["max_modules"].to_numpy() * c["module_gbps"].to_numpy(),
        }, index=c.index)
        new_links = normalize_table(TABLES["links"], new_links.rename_axis("id"))
        extra = [col for col in self.links.columns if col not in new_links.columns]
        for col in extra:
            new_links[col] = ""
        links = pd.concat([self.links, new_links[list(self.links.columns)]])
        joins: dict[str, list[str]] = {}
        for cid, members in c["srlgs"].items():
            for s in members:
                joins.setdefault(s, []).append(str(cid))
        srlgs = self.srlgs.copy()
        srlgs["links"] = [tuple(members) + tuple(joins.get(str(s), ())) for s, members in srlgs["links"].items()]
        return replace(self, links=links, srlgs=srlgs, candidates=self.candidates.drop(index=list(built)))

    def _checked_modules(self, modules: Mapping[str, int]) -> dict[str, int]:
        """``{id: m}`` with ``m >= 1`` after checking ids and counts."""
        self._known("candidates", modules.keys())
        problems = []
        built: dict[str, int] = {}
        for cid, m in modules.items():
            limit = int(self.candidates.at[cid, "max_modules"])
            try:
                ok = float(m) == round(float(m)) and 0 <= float(m) <= limit
            except (TypeError, ValueError):
                ok = False
            if not ok:
                problems.append(Problem(f"modules must be a whole number in [0, {limit}], got {m!r}",
                                        table="candidates", record=str(cid), field="max_modules"))
            elif round(float(m)) >= 1:
                built[str(cid)] = round(float(m))
        if problems:
            raise ValidationError(problems)
        return built

    def derate_links(self, link_ids: Iterable[str], fraction: float) -> Network:
        """A network where the given links keep ``fraction`` of their capacity (degraded, not cut)."""
        if not 0.0 < fraction <= 1.0:
            raise ValidationError(f"derate fraction must be in (0, 1], got {fraction}")
        ids = self._known("links", link_ids)
        links = self.links.copy()
        links.loc[ids, "capacity_gbps"] = links.loc[ids, "capacity_gbps"] * fraction
        return replace(self, links=links)

    def derate_srlgs(self, srlg_ids: Iterable[str], fraction: float) -> Network:
        """Derate every link of the given SRLGs to ``fraction`` of capacity."""
        return self.derate_links(self.srlg_links(srlg_ids), fraction)

    def scale_demand(self, factor: float, traffic_class: str | None = None) -> Network:
        """A network with demand multiplied by ``factor`` (optionally one class only)."""
        if factor < 0:
            raise ValidationError(f"demand scale factor must be >= 0, got {factor}")
        if traffic_class is not None and traffic_class not in TRAFFIC_CLASSES:
            raise ValidationError(f"unknown traffic class {traffic_class!r}")
        demands = self.demands.copy()
        mask = np.ones(len(demands), bool) if traffic_class is None else (demands["traffic_class"] == traffic_class)
        demands.loc[mask, "demand_gbps"] = demands.loc[mask, "demand_gbps"] * factor
        return replace(self, demands=demands)

    def upgrade_links(self, added_gbps: Mapping[str, float]) -> Network:
        """A network with capacity added to links (``{link_id: gbps}``)."""
        ids = self._known("links", added_gbps.keys())
        add = pd.Series(added_gbps, dtype=float).loc[ids]
        bad = add.index[~(np.isfinite(add.to_numpy()) & (add.to_numpy() >= 0))]
        if len(bad):
            raise ValidationError([Problem(f"capacity added must be a finite number >= 0, got {added_gbps[i]!r}",
                                           table="links", record=str(i), field="capacity_gbps") for i in bad])
        links = self.links.copy()
        links.loc[ids, "capacity_gbps"] = links.loc[ids, "capacity_gbps"] + add.to_numpy()
        return replace(self, links=links)

    def add_site(self, site_id: str, **fields: Any) -> Network:
        """A network with one more site (fields as in the ``sites`` table)."""
        from backbone.validate import validate_records

        if site_id in self.sites.index:
            raise ValidationError(f"site {site_id!r} already exists")
        validate_records("sites", [{"id": site_id, **fields}])
        row = normalize_table(TABLES["sites"], pd.DataFrame([{"id": site_id, **fields}]).set_index("id"))
        return replace(self, sites=pd.concat([self.sites, row]))

    def add_links(self, records: list[dict[str, Any]]) -> Network:
        """A network with more links (records as in the ``links`` table, each with ``id``)."""
        from backbone.validate import build_network

        tables = {t: table_records(df) for t, df in self.tables().items()}
        tables["links"] = tables["links"] + records
        return build_network(tables, name=self.name, meta=self.meta)

    def _known(self, table: str, ids: Iterable[str]) -> list[str]:
        ids = list(ids)
        index = getattr(self, table).index
        unknown = [i for i in ids if i not in index]
        if unknown:
            raise NotFoundError(f"unknown {table[:-1]} id(s): {', '.join(map(str, unknown[:10]))}")
        return ids


# ---------------------------------------------------------------------- table helpers
def normalize_table(spec: TableSpec, df: pd.DataFrame | None) -> pd.DataFrame:
    """Coerce a (trusted) table to the spec: columns in order, defaults filled, dtypes set."""
    if df is None or (len(df) == 0 and len(getattr(df, "columns", [])) == 0):
        return empty_table(spec)
    df = df.copy()
    if spec.id_column in df.columns:
        df = df.set_index(spec.id_column)
    df.index = pd.Index([str(i) for i in df.index], dtype=str, name="id")
    out = {}
    for col in spec.columns:
        s = df[col.name] if col.name in df.columns else pd.Series([col.default] * len(df), index=df.index)
        out[col.name] = _coerce(s, col.dtype, col.default)
    extra = [c for c in df.columns if c not in spec.names]
    frame = pd.DataFrame(out, index=df.index)
    for c in extra:
        frame[c] = df[c].astype(str)
    return frame


def _coerce(s: pd.Series, dtype: str, default: Any) -> pd.Series:
    if dtype == "float":
        return pd.to_numeric(s, errors="coerce").astype(float).where(lambda x: x.notna(), default)
    if dtype == "int":
        v = pd.to_numeric(s, errors="coerce").fillna(default if default is not None else 0)
        return v.round().astype(np.int64)
    if dtype == "bool":
        return s.map(lambda x: str(x).strip().lower() in ("1", "true", "yes", "y")).astype(bool)
    if dtype == "idlist":
        return pd.Series([parse_idlist(x) for x in s], index=s.index, dtype=object)
    filled = s.where(s.notna(), default if default is not None else "")
    return filled.map(lambda x: "" if x is None else str(x).strip()).astype(str)


def parse_idlist(value: Any) -> tuple[str, ...]:
    """``'a; b;c'`` or a list -> ``('a', 'b', 'c')``."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ()
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return tuple(p.strip() for p in str(value).split(";") if p.strip())


def table_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a table as plain records with ``id`` first (NaN -> None, idlist -> list)."""
    records = []
    for rid, row in df.to_dict("index").items():
        rec: dict[str, Any] = {"id": rid}
        for k, v in row.items():
            if isinstance(v, tuple):
                v = list(v)
            elif isinstance(v, float) and np.isnan(v):
                v = None
            elif isinstance(v, np.generic):
                v = v.item()
            rec[str(k)] = v
        records.append(rec)
    return records


def link_route(row: pd.Series | Mapping[str, Any], sites: pd.DataFrame) -> np.ndarray:
    """Route of a link through its endpoints and waypoints, densified and unwrapped."""
    a, b = sites.loc[row["site_a"]], sites.loc[row["site_b"]]
    points = [(float(a["lon"]), float(a["lat"])), *geo.parse_waypoints(str(row["waypoints"])),
              (float(b["lon"]), float(b["lat"]))]
    return geo.route_coords(points)


MIN_LINK_LENGTH_KM = 0.1
"""Shortest derived link length: a link between co-located sites (same coordinates, as several
Topology Zoo graphs have) is taken as a 100 m in-building or campus cross-connect, so that what is
derived always validates (``length_km`` must be > 0) and a converted file loads again."""


def fill_link_derived(links: pd.DataFrame, sites: pd.DataFrame, params: Mapping[str, float]) -> pd.DataFrame:
    """Fill empty ``length_km``, ``latency_ms``, ``module_cost_usd`` and ``max_capacity_gbps``.

    * length: polyline through waypoints (geodesic segments) when waypoints are given,
      else geodesic between endpoints x ``route_factor``; at least :data:`MIN_LINK_LENGTH_KM`;
    * latency: :func:`link_latency_ms` (length x group delay x the kind's latency factor + equipment
      delay);
    * module cost: fixed + per-km cost by kind; max capacity: ``max_capacity_factor`` x capacity.
    """
    links = fill_geometry_derived(links, sites, params)
    if len(links) == 0:
        return links
    cost_need = links["module_cost_usd"].isna()
    if cost_need.any():
        sub = links.loc[cost_need]
        is_sub = (sub["kind"] == "submarine").to_numpy()
        fixed = np.where(is_sub, params["submarine_module_fixed_usd"], params["terrestrial_module_fixed_usd"])
        per_km = np.where(is_sub, params["submarine_module_usd_per_km"], params["terrestrial_module_usd_per_km"])
        links.loc[cost_need, "module_cost_usd"] = np.round(fixed + per_km * sub["length_km"].to_numpy(), 2)
    cap_need = links["max_capacity_gbps"].isna()
    if cap_need.any():
        links.loc[cap_need, "max_capacity_gbps"] = links.loc[cap_need, "capacity_gbps"] * params["max_capacity_factor"]
    return links


def latency_factors(kinds: np.ndarray | pd.Series, params: Mapping[str, float]) -> np.ndarray:
    """Latency factor of each link kind: ``submarine_latency_factor`` for submarine links,
    ``terrestrial_latency_factor`` for every other kind."""
    is_sub = np.asarray(kinds, dtype=object) == "submarine"
    return np.where(is_sub, float(params["submarine_latency_factor"]), float(params["terrestrial_latency_factor"]))


def link_latency_ms(length_km: np.ndarray, kinds: np.ndarray | pd.Series, params: Mapping[str, float]) -> np.ndarray:
    """One-way latency of links derived from their length (the one place latency is derived).

    ``length_km x group_index / c x latency_factor(kind) + equipment_delay_ms``: the fibre floor
    (``group_index / c`` per km) scaled by the calibrated factor of the link's kind
    (:func:`latency_factors`, 1.0 uncalibrated), plus the per-link equipment delay.

    Example
    -------
    >>> p = {**DEFAULT_PARAMETERS, "submarine_latency_factor": 1.1}
    >>> [round(float(x), 3) for x in link_latency_ms(np.array([1000.0, 1000.0]),
    ...                                               np.array(["terrestrial", "submarine"]), p)]
    [4.947, 5.437]
    """
    factor = latency_factors(kinds, params)
    return geo.latency_ms(np.asarray(length_km, dtype=float) * factor, params["group_index"],
                          params["equipment_delay_ms"])


def access_latency_ms(access_km: np.ndarray | float, params: Mapping[str, float]) -> np.ndarray:
    """One-way latency of ``access_km`` of access fibre (a point or metro reaching its site).

    Access fibre is terrestrial: the fibre delay times ``terrestrial_latency_factor``, with no
    equipment delay (it is not a backbone link). Callers give the fibre length, that is the
    geodesic times ``route_factor``.
    """
    km = np.asarray(access_km, dtype=float)
    return km * geo.fibre_delay_ms_per_km(params["group_index"]) * float(params["terrestrial_latency_factor"])


def fill_geometry_derived(table: pd.DataFrame, sites: pd.DataFrame, params: Mapping[str, float]) -> pd.DataFrame:
    """Fill empty ``length_km`` and ``latency_ms`` of a table of routes (links or candidates).

    * length: polyline through waypoints (geodesic segments) when waypoints are given,
      else geodesic between endpoints x ``route_factor``; at least :data:`MIN_LINK_LENGTH_KM`;
    * latency: :func:`link_latency_ms` of the route's link kind (``link_kind`` for candidates, ``kind``
      for links), so a calibrated scenario's latency factors apply to both.
    """
    table = table.copy()
    if len(table) == 0:
        return table
    need = table["length_km"].isna().to_numpy()
    if need.any():
        sub = table.loc[need]
        a = sites.loc[sub["site_a"]]
        b = sites.loc[sub["site_b"]]
        geodesic = geo.geodesic_km(a["lon"].to_numpy(), a["lat"].to_numpy(), b["lon"].to_numpy(), b["lat"].to_numpy())
        lengths = geodesic * params["route_factor"]
        has_wp = (sub["waypoints"].str.strip() != "").to_numpy()
        for i in np.flatnonzero(has_wp):  # only routes with explicit geometry: a handful per scenario
            row = sub.iloc[i]
            pts = [(a.iloc[i]["lon"], a.iloc[i]["lat"]), *geo.parse_waypoints(row["waypoints"]),
                   (b.iloc[i]["lon"], b.iloc[i]["lat"])]
            lengths[i] = geo.polyline_km(pts)
        table.loc[need, "length_km"] = np.maximum(np.round(lengths, 3), MIN_LINK_LENGTH_KM)
    lat_need = table["latency_ms"].isna()
    if lat_need.any():
        kinds = table.loc[lat_need, "link_kind" if "link_kind" in table.columns else "kind"].to_numpy()
        lat = link_latency_ms(table.loc[lat_need, "length_km"].to_numpy(), kinds, params)
        table.loc[lat_need, "latency_ms"] = np.round(lat, 4)
    return table


def _jsonable(obj: Any) -> Any:
    import json

    return json.loads(json.dumps(obj, default=str, sort_keys=True))
