"""The plain values a map draws on top of a network (see docs/CONTRACTS.md "Result JSON -> maps").

A result summary carries ``{"map": {"link_values": {name: {link_id: float}}, "site_values":
{name: {site_id: float}}, "failed_links": [link_id], "assignments": [{"metro", "site", "gpus"}],
"built_candidates": [link_id], "workload_flows": [{"src", "dst", "traffic_class", "gbps"}], "training_sites":
[{"job", "site", "gpus"}], "dataset_homes": [{"dataset", "site", "new"}]}}``; :func:`map_values` reads it (or the same keys at the top level) into
:class:`MapValues`.

A failure sweep's result (``backbone failures``) also gives per-link impact: when it has no
``impact*`` link values, :func:`impact_by_link` derives ``impact_gbps`` per link from its
``scenarios`` records (each scenario's ``failed`` elements and ``impact_gbps``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from backbone.errors import Problem, ValidationError
from backbone.model import Network

logger = logging.getLogger(__name__)

MAP_KEYS = ("link_values", "site_values", "failed_links", "assignments", "built_candidates", "workload_flows",
            "training_sites", "dataset_homes")

WORKLOAD_TABLES: dict[str, dict[str, str]] = {
    "workload_flows": {"src": "site", "dst": "site", "traffic_class": "str", "gbps": "float"},
    "training_sites": {"job": "str", "site": "site", "gpus": "float"},
    "dataset_homes": {"dataset": "str", "site": "site", "new": "bool"},
}
"""The data-gravity layer's tables: column -> kind (``site``: a site id of the network drawn, rows naming another
are dropped with a warning; ``str``, ``float``, ``bool``)."""


def empty_table(name: str) -> pd.DataFrame:
    """An empty table of one of :data:`WORKLOAD_TABLES` with its columns and dtypes."""
    dtypes = {"site": str, "str": str, "float": float, "bool": bool}
    return pd.DataFrame({c: pd.Series(dtype=dtypes[k]) for c, k in WORKLOAD_TABLES[name].items()})


@dataclass(frozen=True)
class MapValues:
    """Per-link and per-site values and extras to draw.

    Attributes
    ----------
    link_values
        ``{name: Series indexed by link id}`` (for example ``utilisation``, ``delta_utilisation``).
    site_values
        ``{name: Series indexed by site id}`` (for example ``gpus_added``).
    failed_links
        Link ids drawn dashed as failed.
    assignments
        Table with columns ``metro``, ``site``, ``gpus`` (metro -> site arcs of a placement).
    built_candidates
        Link ids that are candidates built by a plan (drawn highlighted as new routes); the network
        drawn is the one after :meth:`~backbone.model.Network.with_candidates_built`.
    workload_flows
        Table with columns ``src``, ``dst`` (site ids), ``traffic_class`` (``training-sync``, ``checkpoint``,
        ``dataset``, ``replication``) and ``gbps``: the cross-site flows of placed training jobs, drawn as arcs
        coloured by class (the data-gravity map).
    training_sites
        Table with columns ``job``, ``site``, ``gpus``: where training jobs run (a job split over several sites has a
        row per site), marked and labelled with the jobs' GPUs.
    dataset_homes
        Table with columns ``dataset``, ``site``, ``new`` (a replica the placement adds): where datasets live.
    """

    link_values: dict[str, pd.Series] = field(default_factory=dict)
    site_values: dict[str, pd.Series] = field(default_factory=dict)
    failed_links: tuple[str, ...] = ()
    assignments: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame({"metro": pd.Series(dtype=str), "site": pd.Series(dtype=str),
                                              "gpus": pd.Series(dtype=float)}))
    built_candidates: tuple[str, ...] = ()
    workload_flows: pd.DataFrame = field(default_factory=lambda: empty_table("workload_flows"))
    training_sites: pd.DataFrame = field(default_factory=lambda: empty_table("training_sites"))
    dataset_homes: pd.DataFrame = field(default_factory=lambda: empty_table("dataset_homes"))

    @property
    def has_workloads(self) -> bool:
        """True when there is a data-gravity layer to draw (flows, training sites or dataset homes)."""
        return bool(len(self.workload_flows) or len(self.training_sites) or len(self.dataset_homes))

    @property
    def upgraded_links(self) -> tuple[str, ...]:
        """Links a plan upgraded: ``link_values.added_gbps`` above 0 and not a built candidate (a new route)."""
        added = self.link_values.get("added_gbps")
        if added is None or not len(added):
            return ()
        built = set(self.built_candidates)
        return tuple(str(k) for k, v in added.items() if pd.notna(v) and v > 0 and str(k) not in built)

    @property
    def gpus_added(self) -> pd.Series:
        """GPUs added per site (``site_values.gpus_added`` above 0), largest first."""
        added = self.site_values.get("gpus_added")
        if added is None:
            return pd.Series(dtype=float)
        added = added.dropna()
        return added[added > 0].sort_values(ascending=False, kind="stable")

    @property
    def empty(self) -> bool:
        """True when there is nothing beyond the network to draw."""
        return not (self.link_values or self.site_values or self.failed_links or len(self.assignments)
                    or self.built_candidates or self.has_workloads)


def map_values(net: Network, result: Mapping[str, Any] | MapValues | None = None, *,
               link_values: Mapping[str, Mapping[str, float] | pd.Series] | None = None,
               site_values: Mapping[str, Mapping[str, float] | pd.Series] | None = None,
               failed_links: Iterable[str] | None = None,
               assignments: Iterable[Mapping[str, Any]] | pd.DataFrame | None = None,
               built_candidates: Iterable[str] | None = None,
               workload_flows: Iterable[Mapping[str, Any]] | pd.DataFrame | None = None,
               training_sites: Iterable[Mapping[str, Any]] | pd.DataFrame | None = None,
               dataset_homes: Iterable[Mapping[str, Any]] | pd.DataFrame | None = None) -> MapValues:
    """Collect the values to draw from a result dict and/or explicit arguments.

    Parameters
    ----------
    net
        The network the values refer to; ids it does not know are dropped with a warning (a
        result of another scenario variant may name links that are not drawn).
    result
        A result summary with a ``map`` object, or the ``map`` object itself (keys at top level).
    link_values, site_values, failed_links, assignments, built_candidates, workload_flows, training_sites, dataset_homes
        Explicit values; they override the result's entries of the same name (the last three: the data-gravity
        layer, see :class:`MapValues`).

    Raises
    ------
    ValidationError
        When values are not numbers or the structure is not the documented one.
    """
    if isinstance(result, MapValues):
        base = result
        raw: Mapping[str, Any] = {}
    else:
        base = MapValues()
        raw = _map_object(result)
    problems: list[Problem] = []
    lv = dict(base.link_values)
    lv.update(_value_tables(raw.get("link_values"), "link_values", net.links.index, problems))
    lv.update(_value_tables(link_values, "link_values", net.links.index, problems))
    if not any(name.startswith("impact") for name in lv) and isinstance(result, Mapping):
        derived = impact_by_link(net, result)
        if derived is not None:
            lv["impact_gbps"] = derived
    sv = dict(base.site_values)
    sv.update(_value_tables(raw.get("site_values"), "site_values", net.sites.index, problems))
    sv.update(_value_tables(site_values, "site_values", net.sites.index, problems))
    failed = list(base.failed_links)
    for source in (raw.get("failed_links"), failed_links):
        if source is None:
            continue
        if isinstance(source, str) or not isinstance(source, Iterable):
            problems.append(Problem("failed_links must be a list of link ids", field="failed_links"))
            continue
        failed = [str(i) for i in source]
    unknown = [i for i in failed if i not in net.links.index]
    if unknown:
        logger.warning("map: ignoring %d failed link id(s) not in the network: %s", len(unknown), unknown[:5])
    failed = [i for i in failed if i in net.links.index]
    table = base.assignments
    for source in (raw.get("assignments"), assignments):
        if source is not None:
            table = _assignments(source, net, problems)
    built = list(base.built_candidates)
    for source in (raw.get("built_candidates"), built_candidates):
        if source is None:
            continue
        if isinstance(source, str) or not isinstance(source, Iterable):
            problems.append(Problem("built_candidates must be a list of link ids", field="built_candidates"))
            continue
        built = [str(i) for i in source]
    unknown_built = [i for i in built if i not in net.links.index]
    if unknown_built:
        logger.warning("map: ignoring %d built candidate id(s) that are not links of the network drawn: %s",
                       len(unknown_built), unknown_built[:5])
    built = [i for i in built if i in net.links.index]
    work = _workload_tables(net, base, raw, {"workload_flows": workload_flows, "training_sites": training_sites,
                                             "dataset_homes": dataset_homes}, problems)
    if problems:
        raise ValidationError(problems)
    return MapValues(lv, sv, tuple(dict.fromkeys(failed)), table, tuple(dict.fromkeys(built)), **work)


def _workload_tables(net: Network, base: MapValues, raw: Mapping[str, Any], explicit: Mapping[str, Any],
                     problems: list[Problem]) -> dict[str, pd.DataFrame]:
    """The data-gravity tables: ``base``'s, replaced by the result's (``raw``), replaced by the explicit ones."""
    work = {name: getattr(base, name) for name in WORKLOAD_TABLES}
    for name in WORKLOAD_TABLES:
        for source in (raw.get(name), explicit.get(name)):
            if source is not None:
                work[name] = workload_table(source, name, net, problems)
    return work


def workload_table(raw: Any, name: str, net: Network, problems: list[Problem]) -> pd.DataFrame:
    """One of :data:`WORKLOAD_TABLES` from a list of objects or a DataFrame, typed; rows naming a site the network
    does not have are dropped with a warning. Bad structure or values are added to ``problems`` (field ``name``)."""
    cols = WORKLOAD_TABLES[name]
    rows = list(raw) if isinstance(raw, Iterable) and not isinstance(raw, str | Mapping | pd.DataFrame) else None
    if isinstance(raw, pd.DataFrame):
        df = raw.copy()
    elif rows is not None and all(isinstance(r, Mapping) for r in rows):
        df = pd.DataFrame(rows)
    else:
        problems.append(Problem(f"{name} must be a list of {{{', '.join(cols)}}} objects", field=name))
        return empty_table(name)
    if len(df) == 0:
        return empty_table(name)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        problems.append(Problem(f"{name} lack column(s) {', '.join(missing)}", field=name))
        return empty_table(name)
    df = df[list(cols)].reset_index(drop=True)
    for c, kind in cols.items():
        if kind == "float":
            numbers = pd.to_numeric(df[c], errors="coerce")
            bad = df.index[numbers.isna() | (numbers < 0)]
            if len(bad):
                problems.append(Problem(f"{name}.{c}: values must be numbers >= 0 (bad rows: "
                                        f"{', '.join(map(str, bad[:5]))})", field=f"{name}.{c}"))
                return empty_table(name)
            df[c] = numbers.astype(float)
        elif kind == "bool":
            df[c] = df[c].fillna(False).astype(bool)
        else:
            df[c] = df[c].astype(str)
    site_cols = [c for c, kind in cols.items() if kind == "site"]
    known = df[site_cols].isin(net.sites.index).all(axis=1)
    if not known.all():
        logger.warning("map: ignoring %d %s row(s) naming a site not in the network", int((~known).sum()), name)
    return df[known].reset_index(drop=True)


def impact_by_link(net: Network, result: Mapping[str, Any]) -> pd.Series | None:
    """Per link, the worst impact (Gbps) of the failure scenarios that take it down.

    Reads a failure sweep's result (top level or under ``summary``): ``scenarios`` records with
    ``failed`` (the failed elements: link, SRLG or site ids, as ``backbone failures`` lists them)
    and ``impact_gbps`` (the one impact figure of a failure: unmet traffic at <= 100 % utilisation
    plus latency-SLO violations plus traffic lost with failed sites). Each failed element stands
    for its links: a link id for itself, an SRLG id for its member links, a site id for the links
    touching it. A link never failed in the sweep gets no value. Returns ``None`` when the result
    has no such records.

    Example
    -------
    >>> impact_by_link(net, json.load(open("failures.json")))  # doctest: +SKIP
    """
    records = result.get("scenarios")
    if not isinstance(records, list):
        summary = result.get("summary")
        records = summary.get("scenarios") if isinstance(summary, Mapping) else None
    if not isinstance(records, list):
        return None
    records = [r for r in records if isinstance(r, Mapping) and isinstance(r.get("failed"), list | tuple)
               and _is_number(r.get("impact_gbps"))]
    if not records:
        return None
    members = net.srlgs["links"].to_dict()
    links = net.links
    touching: dict[str, list[str]] = {}
    for col in ("site_a", "site_b"):
        for site, ids in links.groupby(col).groups.items():
            touching.setdefault(str(site), []).extend(str(i) for i in ids)
    worst: dict[str, float] = {}
    for r in records:
        impact = float(r["impact_gbps"] or 0.0)
        down: set[str] = set()
        for element in map(str, r["failed"]):
            if element in links.index:
                down.add(element)
            elif element in members:
                down.update(members[element])
            elif element in touching:
                down.update(touching[element])
        for link in down:
            worst[link] = max(worst.get(link, 0.0), impact)
    series = pd.Series(worst, dtype=float)
    return series[series.index.isin(links.index)]


def _map_object(result: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if result is None:
        return {}
    if not isinstance(result, Mapping):
        raise ValidationError(Problem("result must be a JSON object", field="result"))
    inner = result.get("map")
    if isinstance(inner, Mapping):
        return inner
    summary = result.get("summary")
    if isinstance(summary, Mapping) and isinstance(summary.get("map"), Mapping):
        return summary["map"]
    return result


def _value_tables(raw: Any, where: str, index: pd.Index, problems: list[Problem]) -> dict[str, pd.Series]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(Problem(f"{where} must map a value name to {{id: number}}", field=where))
        return {}
    out: dict[str, pd.Series] = {}
    for name, values in raw.items():
        if isinstance(values, pd.Series):
            series = pd.to_numeric(values, errors="coerce").astype(float)
            series.index = series.index.map(str)
        elif isinstance(values, Mapping):
            bad = [k for k, v in values.items() if not _is_number(v)]
            if bad:
                problems.append(Problem(f"{where}.{name}: values must be numbers (bad ids: {', '.join(map(str, bad[:5]))})",
                                        field=f"{where}.{name}"))
                continue
            series = pd.Series({str(k): (math.nan if v is None else float(v)) for k, v in values.items()}, dtype=float)
        else:
            problems.append(Problem(f"{where}.{name} must be an object {{id: number}}", field=f"{where}.{name}"))
            continue
        unknown = series.index.difference(index)
        if len(unknown):
            logger.warning("map: %s.%s names %d id(s) not in the network (ignored): %s", where, name,
                           len(unknown), list(unknown[:5]))
        out[str(name)] = series[series.index.isin(index)]
    return out


def _is_number(v: Any) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool))


def _assignments(raw: Any, net: Network, problems: list[Problem]) -> pd.DataFrame:
    if isinstance(raw, pd.DataFrame):
        df = raw.copy()
    elif isinstance(raw, Iterable) and not isinstance(raw, str | Mapping):
        rows = list(raw)
        if not all(isinstance(r, Mapping) for r in rows):
            problems.append(Problem("assignments must be a list of {metro, site, gpus} objects", field="assignments"))
            return MapValues().assignments
        df = pd.DataFrame(rows)
    else:
        problems.append(Problem("assignments must be a list of {metro, site, gpus} objects", field="assignments"))
        return MapValues().assignments
    missing = [c for c in ("metro", "site") if c not in df.columns]
    if missing and len(df):
        problems.append(Problem(f"assignments lack column(s) {', '.join(missing)}", field="assignments"))
        return MapValues().assignments
    if len(df) == 0:
        return MapValues().assignments
    if "gpus" not in df.columns:
        df["gpus"] = 1.0
    df = df[["metro", "site", "gpus"]].astype({"metro": str, "site": str})
    df["gpus"] = pd.to_numeric(df["gpus"], errors="coerce").fillna(0.0).astype(float)
    known = df["metro"].isin(net.metros.index) & df["site"].isin(net.sites.index)
    if not known.all():
        logger.warning("map: ignoring %d assignment(s) with unknown metro or site", int((~known).sum()))
    return df[known].reset_index(drop=True)
