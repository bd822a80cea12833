"""The plain values a map draws on top of a network (see docs/CONTRACTS.md "Result JSON -> maps").

A result summary carries ``{"map": {"link_values": {name: {link_id: float}}, "site_values":
{name: {site_id: float}}, "failed_links": [link_id], "assignments": [{"metro", "site", "gpus"}],
"built_candidates": [link_id]}}``; :func:`map_values` reads it (or the same keys at the top level) into
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

MAP_KEYS = ("link_values", "site_values", "failed_links", "assignments", "built_candidates")


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
    """

    link_values: dict[str, pd.Series] = field(default_factory=dict)
    site_values: dict[str, pd.Series] = field(default_factory=dict)
    failed_links: tuple[str, ...] = ()
    assignments: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame({"metro": pd.Series(dtype=str), "site": pd.Series(dtype=str),
                                              "gpus": pd.Series(dtype=float)}))
    built_candidates: tuple[str, ...] = ()

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
                    or self.built_candidates)


def map_values(net: Network, result: Mapping[str, Any] | MapValues | None = None, *,
               link_values: Mapping[str, Mapping[str, float] | pd.Series] | None = None,
               site_values: Mapping[str, Mapping[str, float] | pd.Series] | None = None,
               failed_links: Iterable[str] | None = None,
               assignments: Iterable[Mapping[str, Any]] | pd.DataFrame | None = None,
               built_candidates: Iterable[str] | None = None) -> MapValues:
    """Collect the values to draw from a result dict and/or explicit arguments.

    Parameters
    ----------
    net
        The network the values refer to; ids it does not know are dropped with a warning (a
        result of another scenario variant may name links that are not drawn).
    result
        A result summary with a ``map`` object, or the ``map`` object itself (keys at top level).
    link_values, site_values, failed_links, assignments, built_candidates
        Explicit values; they override the result's entries of the same name.

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
    if problems:
        raise ValidationError(problems)
    return MapValues(lv, sv, tuple(dict.fromkeys(failed)), table, tuple(dict.fromkeys(built)))


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
