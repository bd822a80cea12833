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
from backbone.derived import (
    DERIVED_COLUMNS,
    MIN_LINK_LENGTH_KM,
    access_latency_ms,
    derive_column,
    fill_derived,
    latency_factors,
    link_latency_ms,
    overrides,
    rederive,
)
from backbone.errors import NotFoundError, Problem, ValidationError
from backbone.frozen import FrozenFrame, freeze
from backbone.schema import CANDIDATES, DATASETS, TABLES, TRAFFIC_CLASSES, TRAINING_JOBS
from backbone.tables import empty_table, link_route, normalize_table, parse_idlist, table_records

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["DEFAULT_PARAMETERS", "DERIVED_COLUMNS", "MIN_LINK_LENGTH_KM", "FrozenFrame", "Network",
           "access_latency_ms", "derive_column", "empty_table", "latency_factors", "link_latency_ms", "link_route",
           "normalize_table", "parse_idlist", "table_records"]

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
    "upgrade_lead_quarters": 1.0,
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
* ``upgrade_lead_quarters``: quarters from ordering an upgrade of a lit link (more modules on its line system) to
  service; a plan's link upgrades carry it as their lead time (candidate routes have their own
  ``lead_time_quarters``). One quarter, as the roadmap's default ``upgrade_lead_quarters``.
"""


@dataclass(frozen=True, eq=False)
class Network:
    """A backbone network: tables keyed by string id, plus scenario metadata.

    Build one with :func:`backbone.validate.build_network` (validated from raw records) or
    :meth:`Network.from_tables` (trusted tables), or load one with
    :func:`backbone.io.load_scenario`.

    The tables are read-only (:class:`~backbone.frozen.FrozenFrame`: writing into one raises
    :class:`~backbone.errors.FrozenTableError`); copy one, change the copy and call :meth:`copy_with`.
    Derived columns (:data:`backbone.derived.DERIVED_COLUMNS`) follow their inputs on every change, and
    overrides are kept (:mod:`backbone.derived`, :meth:`overrides`).

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
    datasets, training_jobs
        AI training workloads (:data:`backbone.schema.DATASETS`, :data:`backbone.schema.TRAINING_JOBS`): datasets
        with their replicas and residency, training jobs with their model, synchronisation, datasets read,
        checkpoints and where they may run; empty by default.
        :func:`backbone.workload_traffic.workload_demands` derives their backbone traffic.
    """

    sites: pd.DataFrame
    links: pd.DataFrame
    srlgs: pd.DataFrame
    metros: pd.DataFrame
    demands: pd.DataFrame
    name: str = "scenario"
    meta: dict[str, Any] = field(default_factory=dict)
    candidates: pd.DataFrame = field(default_factory=lambda: empty_table(CANDIDATES))
    datasets: pd.DataFrame = field(default_factory=lambda: empty_table(DATASETS))
    training_jobs: pd.DataFrame = field(default_factory=lambda: empty_table(TRAINING_JOBS))

    def __post_init__(self) -> None:
        for t in TABLES:  # zero-copy: a later write to the caller's frame is copied away (Copy-on-Write)
            object.__setattr__(self, t, freeze(getattr(self, t), t))

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
                  frames["demands"], name=name, meta=meta, candidates=frames["candidates"],
                  datasets=frames["datasets"], training_jobs=frames["training_jobs"])
        return net._with_derived()

    def _with_derived(self) -> Network:
        params = self.parameters
        return replace(self, links=fill_derived("links", self.links, self.sites, params),
                       candidates=fill_derived("candidates", self.candidates, self.sites, params))

    @property
    def parameters(self) -> dict[str, float]:
        """Scenario parameters (defaults merged with the manifest's)."""
        return {**DEFAULT_PARAMETERS, **dict(self.meta.get("parameters") or {})}

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by name (:data:`backbone.schema.TABLES` order; the optional ``candidates``, ``datasets`` and
        ``training_jobs`` may be empty)."""
        return {t: getattr(self, t) for t in TABLES}

    def copy_with(self, **tables: pd.DataFrame) -> Network:
        """A new network with some tables replaced; derived columns follow the change.

        In ``links`` and ``candidates`` (:data:`backbone.derived.DERIVED_COLUMNS`), a derived value whose
        inputs changed (a new length, a moved site, a new capacity) is computed again; a value you changed
        becomes an override and is kept; NaN clears an override; an override you left alone stays
        (:func:`backbone.derived.rederive`). The tables are taken as given otherwise (trusted input: use
        :func:`backbone.validate.build_network` for user input).

        Raises
        ------
        TypeError
            For a name that is not a table.

        Example
        -------
        >>> links = net.links.copy()  # doctest: +SKIP
        >>> links.loc["lon-nyc", "length_km"] = 5900.0  # doctest: +SKIP
        >>> net.copy_with(links=links).links.at["lon-nyc", "latency_ms"]  # follows the new length  # doctest: +SKIP
        """
        unknown = sorted(set(tables) - set(TABLES))
        if unknown:
            raise TypeError(f"not a table: {', '.join(unknown)} (tables: {', '.join(TABLES)})")
        return self._rederived(tables, self.parameters)

    def _rederived(self, tables: Mapping[str, pd.DataFrame], params: Mapping[str, float],
                   meta: Mapping[str, Any] | None = None) -> Network:
        """``replace`` with derived columns of links and candidates following changed tables or parameters."""
        new = dict(tables)
        sites = new.get("sites", self.sites)
        old_params = self.parameters
        for t in DERIVED_COLUMNS:
            if t in new or "sites" in new or meta is not None:
                new[t] = rederive(t, getattr(self, t), new.get(t, getattr(self, t)), self.sites, sites,
                                  old_params, params)
        out = replace(self, **new)
        return out if meta is None else replace(out, meta=dict(meta))

    def overrides(self, table: str = "links") -> pd.DataFrame:
        """The overrides of ``links`` or ``candidates``: its derived columns, NaN where a value is derived
        from its inputs, the value where it was set explicitly (see :mod:`backbone.derived`).

        Raises
        ------
        KeyError
            For a table without derived columns.
        """
        if table not in DERIVED_COLUMNS:
            raise KeyError(f"{table!r} has no derived columns (choose from {', '.join(DERIVED_COLUMNS)})")
        return overrides(table, getattr(self, table), self.sites, self.parameters)

    def with_capacity(self, capacity_gbps: Mapping[str, float]) -> Network:
        """A network where the given links have exactly this capacity (``{link_id: gbps}``); the original
        is unchanged.

        A derived ``max_capacity_gbps`` follows the new capacity (``max_capacity_factor`` x capacity); an
        explicit limit is kept, and a capacity above it is an error.

        Raises
        ------
        NotFoundError
            For unknown link ids.
        ValidationError
            For a capacity that is not a finite number > 0, or above the link's explicit limit.

        Example
        -------
        >>> bigger = net.with_capacity({"lon-nyc": 3200.0})  # doctest: +SKIP
        """
        ids = self._known("links", capacity_gbps.keys())
        problems = []
        values: dict[str, float] = {}
        for i in ids:
            try:
                v = float(capacity_gbps[i])
            except (TypeError, ValueError):
                v = float("nan")
            if not (np.isfinite(v) and v > 0):
                problems.append(Problem(f"capacity must be a finite number > 0, got {capacity_gbps[i]!r}",
                                        table="links", record=str(i), field="capacity_gbps"))
            values[str(i)] = v
        if problems:
            raise ValidationError(problems)
        links = self.links.copy()
        if ids:
            links.loc[list(values), "capacity_gbps"] = list(values.values())
        out = self.copy_with(links=links)
        limit = out.links.loc[list(values), "max_capacity_gbps"]
        over = [i for i in values if values[i] > float(limit[i]) + 1e-9]
        if over:
            raise ValidationError([Problem(f"capacity {values[i]:g} Gbps is above the link's explicit limit "
                                           f"{float(limit[i]):g} Gbps (set max_capacity_gbps to NaN with copy_with "
                                           "to derive it again)", table="links", record=i, field="max_capacity_gbps")
                                   for i in over])
        return out

    def with_parameters(self, **updates: float) -> Network:
        """A network with scenario parameters changed (:data:`DEFAULT_PARAMETERS`); derived columns follow
        them, overrides are kept.

        Raises
        ------
        ValidationError
            For an unknown parameter or a value that is not a finite number.

        Example
        -------
        >>> slower = net.with_parameters(submarine_latency_factor=1.1)  # doctest: +SKIP
        """
        problems = []
        for name, value in updates.items():
            if name not in DEFAULT_PARAMETERS:
                problems.append(Problem(f"unknown parameter (choose from {', '.join(DEFAULT_PARAMETERS)})",
                                        field=name))
                continue
            try:
                ok = bool(np.isfinite(float(value)))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                problems.append(Problem(f"must be a finite number, got {value!r}", field=name))
        if problems:
            raise ValidationError(problems)
        params = {**self.parameters, **{k: float(v) for k, v in updates.items()}}
        meta = {**self.meta, "parameters": {**dict(self.meta.get("parameters") or {}), **params}}
        return self._rederived({}, params, meta)

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
            "datasets": len(self.datasets), "training_jobs": len(self.training_jobs),
            "training_gpus": int(self.training_jobs["gpus"].sum()), "storage_pb": float(sites["storage_pb"].sum()),
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

    def links_in_no_srlg(self) -> list[str]:
        """Links that belong to no SRLG, in link-table order. An SRLG sweep fails each as its own group (a link
        always shares its own conduit's fate); ``backbone validate`` warns about them."""
        members = {m for ms in self.srlgs["links"] for m in ms}
        return [str(lk) for lk in self.links.index if lk not in members]

    def fail_srlgs(self, srlg_ids: Iterable[str]) -> Network:
        """A network without every link of the given SRLGs (and without the candidates in them)."""
        ids = self._known("srlgs", srlg_ids)
        return self.drop_candidates(self.candidates_in_srlgs(ids)).fail_links(self.srlg_links(ids))

    def fail_sites(self, site_ids: Iterable[str]) -> Network:
        """A network without the given sites, their links and candidates, demands to or from them, and the
        replicas and pinned job sites at them (:func:`backbone.workload_traffic.without_workload_sites`)."""
        from backbone.workload_traffic import without_workload_sites

        ids = set(self._known("sites", site_ids))
        net = self.fail_links(self.links.index[self.links["site_a"].isin(ids) | self.links["site_b"].isin(ids)])
        demands = net.demands[~(net.demands["src"].isin(ids) | net.demands["dst"].isin(ids))]
        cands = net.candidates
        cands = cands[~(cands["site_a"].isin(ids) | cands["site_b"].isin(ids))]
        datasets, jobs = without_workload_sites(net.datasets, net.training_jobs, ids)
        return replace(net, sites=net.sites.drop(index=list(ids)), demands=demands, candidates=cands,
                       datasets=datasets, training_jobs=jobs)

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


def _jsonable(obj: Any) -> Any:
    import json

    return json.loads(json.dumps(obj, default=str, sort_keys=True))
