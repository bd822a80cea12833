"""Corridors: which stretch of the backbone each link belongs to, and the traffic a routing puts on each.

Two views of the same links:

* **region pairs** (:func:`link_corridors`): every link is in exactly one corridor, named by the regions of its
  end sites. A link between two regions is in their corridor: NA-EMEA is ``transatlantic``, NA-APAC
  ``transpacific`` (:data:`NAMED_CORRIDORS`), any other pair ``<first>-<second>`` in :data:`backbone.schema.REGIONS`
  order (``EMEA-APAC``, ``NA-LATAM``, ``EMEA-AFRICA``, ...); a link within one region is in ``intra-<region>``;
* **corridor SRLGs** (:func:`corridor_srlg_links`): the scenario's SRLGs of kind ``corridor`` (the Red Sea and
  Suez, Bab-el-Mandeb, Malacca, Hormuz, ...). A link may sit in several of them, or in none.

Directions: a corridor's traffic is summed per geographic direction, ``eastbound_gbps`` and ``westbound_gbps``.
A link's ``site_a -> site_b`` direction is eastbound when the shorter way round the globe from ``site_a``'s
longitude to ``site_b``'s goes east (antimeridian-safe: Los Angeles to Tokyo is westbound), so New York to London
and Europe to Asia are eastbound. Per (corridor, class), :func:`corridor_traffic` gives both directions, the
corridor's lit capacity (the sum of its links' ``capacity_gbps``; a link carries its capacity in each direction)
and the corridor's utilisation (:func:`backbone.utilisation.utilisation`) as one pipe: the larger direction over the lit capacity. Beside it,
``max_link_utilisation`` is the busiest of the corridor's links (all traffic): the pooled figure assumes the
corridor's links share the load evenly, the busiest link says how far they do not.

Utilisation has one meaning everywhere (:func:`backbone.utilisation.utilisation`): the larger direction's flow over
the capacity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from backbone.model import Network
from backbone.schema import REGIONS, TRAFFIC_CLASSES
from backbone.utilisation import utilisation

__all__ = ["ALL_CLASSES", "CORRIDOR_COLUMNS", "NAMED_CORRIDORS", "UNLISTED_CLASS", "VIEWS", "corridor_srlg_links",
           "corridor_traffic", "link_corridors"]

NAMED_CORRIDORS: dict[frozenset[str], str] = {frozenset({"NA", "EMEA"}): "transatlantic",
                                              frozenset({"NA", "APAC"}): "transpacific"}
"""Region pairs whose corridor has a planner's name; every other pair is ``<first>-<second>``."""

VIEWS: tuple[str, ...] = ("region", "srlg")
"""The two corridor views: region pairs (every link in one corridor) and the corridor SRLGs."""

ALL_CLASSES = "all"
"""The ``traffic_class`` of a corridor's row with every class's traffic."""

UNLISTED_CLASS = "unlisted"
"""The ``traffic_class`` of link flow no listed path accounts for (a routing whose path table lists only part of
its paths): the link loads cover every path, so the classes plus this one add up to them."""

CORRIDOR_COLUMNS: tuple[str, ...] = ("view", "corridor", "traffic_class", "eastbound_gbps", "westbound_gbps",
                                     "gbps", "capacity_gbps", "utilisation", "links", "max_link_utilisation")
"""The columns of :func:`corridor_traffic` (``corridors.csv``)."""


def _region_rank(regions: pd.Series) -> np.ndarray:
    """Each region's position in :data:`REGIONS` (regions not listed there after them, alphabetically)."""
    others = sorted(set(regions.dropna().astype(str)) - set(REGIONS))
    order = {r: i for i, r in enumerate((*REGIONS, *others))}
    return regions.astype(str).map(order).to_numpy(np.int64)


def link_corridors(net: Network) -> pd.DataFrame:
    """The region-pair corridor of every link, and which way it runs.

    Parameters
    ----------
    net
        The network.

    Returns
    -------
    pandas.DataFrame
        Indexed by link id (the network's link order): ``corridor`` (``transatlantic``, ``transpacific``,
        ``EMEA-APAC``, ``intra-NA``, ...), ``region_a`` and ``region_b`` (the regions of ``site_a`` and
        ``site_b``), ``eastbound`` (whether ``site_a -> site_b`` heads east: the shorter way round the globe).

    Example
    -------
    >>> link_corridors(net).loc["marea-virginia-beach-bilbao", "corridor"]  # doctest: +SKIP
    'transatlantic'
    """
    sites, links = net.sites, net.links
    region_a = sites["region"].reindex(links["site_a"]).astype(str).set_axis(links.index)
    region_b = sites["region"].reindex(links["site_b"]).astype(str).set_axis(links.index)
    a_first = _region_rank(region_a) <= _region_rank(region_b)
    first = region_a.where(a_first, region_b)
    second = region_b.where(a_first, region_a)
    named = {"|".join(sorted(pair)): name for pair, name in NAMED_CORRIDORS.items()}
    pair_key = pd.Series(np.where(region_a < region_b, region_a + "|" + region_b, region_b + "|" + region_a),
                         index=links.index)
    corridor = pair_key.map(named).fillna(first + "-" + second)
    corridor = corridor.where(region_a != region_b, "intra-" + region_a)
    lon_a = sites["lon"].reindex(links["site_a"]).to_numpy(float)
    lon_b = sites["lon"].reindex(links["site_b"]).to_numpy(float)
    east = (lon_b - lon_a + 180.0) % 360.0 - 180.0 >= 0.0
    return pd.DataFrame({"corridor": corridor, "region_a": region_a, "region_b": region_b, "eastbound": east},
                        index=links.index)


def corridor_srlg_links(net: Network) -> pd.DataFrame:
    """The links of every corridor SRLG (``srlgs.csv`` rows of kind ``corridor``).

    Returns
    -------
    pandas.DataFrame
        One row per (corridor SRLG, member link present in the network): ``corridor`` (the SRLG id), ``name``
        (the SRLG's name), ``link``. A link in several corridor SRLGs has a row for each.
    """
    corridors = net.srlgs[net.srlgs["kind"] == "corridor"]
    members = corridors["links"].explode().dropna()
    rows = pd.DataFrame({"corridor": members.index.astype(str), "link": members.astype(str).to_numpy()})
    rows["name"] = corridors["name"].reindex(rows["corridor"]).astype(str).to_numpy()
    return rows[rows["link"].isin(net.links.index)].reset_index(drop=True)[["corridor", "name", "link"]]


def _class_order(columns: pd.Index) -> list[str]:
    """Traffic classes in priority order, then any others, then :data:`UNLISTED_CLASS` and :data:`ALL_CLASSES`."""
    known = [c for c in TRAFFIC_CLASSES if c in columns]
    rest = sorted(c for c in columns if c not in known and c not in (UNLISTED_CLASS, ALL_CLASSES))
    return [*known, *rest, *[c for c in (UNLISTED_CLASS, ALL_CLASSES) if c in columns]]


def corridor_traffic(net: Network, flow_ab_gbps: pd.DataFrame, flow_ba_gbps: pd.DataFrame) -> pd.DataFrame:
    """Gbps per (corridor, traffic class) in each direction, with the corridor's lit capacity and utilisation.

    ``flow_ab_gbps`` and ``flow_ba_gbps`` hold the Gbps each class (a column) puts on each link (a row, by link
    id) in the link's ``site_a -> site_b`` and ``site_b -> site_a`` direction. For corridor ``c`` and class ``k``:

    ``eastbound_gbps[c, k] = sum_{l in c} (flow_ab[l, k] if east_l else flow_ba[l, k])`` and westbound the other
    direction, ``capacity_gbps[c] = sum_{l in c} capacity_l``, ``utilisation`` = :func:`backbone.utilisation.utilisation` of the two
    directional sums over the capacity, ``gbps`` = eastbound + westbound. The ``all`` rows sum every class.

    Parameters
    ----------
    net
        The network the flows were routed on.
    flow_ab_gbps, flow_ba_gbps
        Link x class Gbps (missing links count as 0).

    Returns
    -------
    pandas.DataFrame
        :data:`CORRIDOR_COLUMNS`: every corridor has its ``all`` row; a class has a row where it puts traffic
        on the corridor. Region-pair corridors first (``view`` ``region``), then the corridor SRLGs (``srlg``),
        each view's corridors by lit capacity (largest first), classes in priority order.
    """
    links = net.links
    columns = flow_ab_gbps.columns.union(flow_ba_gbps.columns, sort=False)
    ab = flow_ab_gbps.reindex(index=links.index, columns=columns, fill_value=0.0).fillna(0.0)
    ba = flow_ba_gbps.reindex(index=links.index, columns=columns, fill_value=0.0).fillna(0.0)
    classes = _class_order(ab.columns.append(pd.Index([ALL_CLASSES])))
    ab[ALL_CLASSES], ba[ALL_CLASSES] = ab.sum(axis=1), ba.sum(axis=1)
    ab, ba = ab[classes], ba[classes]
    lc = link_corridors(net)
    east = lc["eastbound"].to_numpy()[:, None]
    eastbound = pd.DataFrame(np.where(east, ab, ba), index=links.index, columns=classes)
    westbound = pd.DataFrame(np.where(east, ba, ab), index=links.index, columns=classes)
    cap = links["capacity_gbps"].astype(float)
    link_util = pd.Series(utilisation(ab[ALL_CLASSES], ba[ALL_CLASSES], cap), index=links.index)
    membership = pd.concat([
        pd.DataFrame({"view": "region", "corridor": lc["corridor"].to_numpy(), "link": links.index}),
        corridor_srlg_links(net).assign(view="srlg")[["view", "corridor", "link"]]], ignore_index=True)
    keys = [membership["view"], membership["corridor"]]
    e = eastbound.reindex(membership["link"]).set_axis(membership.index).groupby(keys, sort=False).sum()
    w = westbound.reindex(membership["link"]).set_axis(membership.index).groupby(keys, sort=False).sum()
    per = pd.DataFrame({"capacity_gbps": cap.reindex(membership["link"]).to_numpy(),
                        "max_link_utilisation": link_util.reindex(membership["link"]).to_numpy(), "links": 1},
                       index=membership.index).groupby(keys, sort=False).agg(
        {"capacity_gbps": "sum", "max_link_utilisation": "max", "links": "sum"})
    table = pd.DataFrame({"eastbound_gbps": e.stack(), "westbound_gbps": w.stack()})
    table.index = table.index.set_names(["view", "corridor", "traffic_class"])
    table = table.reset_index().join(per, on=["view", "corridor"])
    table["gbps"] = table["eastbound_gbps"] + table["westbound_gbps"]
    table["utilisation"] = utilisation(table["eastbound_gbps"], table["westbound_gbps"], table["capacity_gbps"])
    keep = (table["traffic_class"] == ALL_CLASSES) | (table["gbps"] != 0)
    table = table[keep].assign(_view=table["view"].map({v: i for i, v in enumerate(VIEWS)}),
                               _class=table["traffic_class"].map({c: i for i, c in enumerate(classes)}))
    table = table.sort_values(["_view", "capacity_gbps", "corridor", "_class"], ascending=[True, False, True, True])
    return table[list(CORRIDOR_COLUMNS)].reset_index(drop=True)
