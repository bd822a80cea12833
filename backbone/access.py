"""The access rule: which backbone site a metro's traffic enters and leaves at.

One rule, used by everything that maps metros to sites (the demand generator, :mod:`backbone.demand`; the
placement's latency model and its checks, :mod:`backbone.solver.placement`):

1. A site whose ``metro`` column names the metro is *in* the metro. Among those, a PoP is preferred, then a
   data center, then a landing station, then any other kind (a metro's traffic is handed to the backbone where
   the operator has a point of presence, not at a cable's shore end); within the best kind the geodesically
   nearest to the metro's centre, then the lowest id.
2. A metro with no site in it reaches the geodesically nearest site.

Access fibre from the metro's centre to that site is ``geodesic x route_factor`` km (as
:func:`backbone.route.shortest_route` treats points); its one-way latency is
:func:`backbone.derived.access_latency_ms`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from backbone import geo
from backbone.model import Network

ACCESS_KIND_ORDER = {"pop": 0, "datacenter": 1, "landing": 2}
"""Preference of site kinds as a metro's access site (other kinds rank after these)."""


def access_sites(net: Network) -> pd.DataFrame:
    """Every metro's access site and the access fibre length, by the module's one rule.

    Returns
    -------
    pandas.DataFrame
        Indexed by metro id (the order of ``net.metros``): ``site`` (site id), ``access_km`` (geodesic from
        the metro's centre to the site x ``route_factor``), ``in_metro`` (whether the site's ``metro`` names
        the metro, rule 1, or it is only the nearest, rule 2).

    Example
    -------
    >>> access_sites(net).loc["sydney", "site"]  # doctest: +SKIP
    'sydney'
    """
    metros, sites = net.metros, net.sites
    empty = pd.DataFrame({"site": pd.Series(dtype=str), "access_km": pd.Series(dtype=float),
                          "in_metro": pd.Series(dtype=bool)}, index=metros.index)
    if len(metros) == 0 or len(sites) == 0:
        return empty
    d = geo.geodesic_km(metros["lon"].to_numpy(float)[:, None], metros["lat"].to_numpy(float)[:, None],
                        sites["lon"].to_numpy(float)[None, :], sites["lat"].to_numpy(float)[None, :])
    rank = sites["kind"].map(ACCESS_KIND_ORDER).fillna(len(ACCESS_KIND_ORDER)).to_numpy(float)
    in_metro = sites["metro"].astype(str).to_numpy()[None, :] == metros.index.to_numpy().astype(str)[:, None]
    # rule 1: lexicographic (kind rank, distance) among the sites in the metro; the ids break exact ties,
    # since argmin takes the first and the site table is ordered by id below
    order = np.argsort(sites.index.to_numpy().astype(str), kind="stable")
    d_o, rank_o, in_o = d[:, order], rank[order], in_metro[:, order]
    key = np.where(in_o, rank_o[None, :] * 1e9 + d_o, np.inf)
    has = in_o.any(axis=1)
    pick = np.where(has, key.argmin(axis=1), d_o.argmin(axis=1))  # rule 2: the nearest site
    rows = np.arange(len(metros))
    return pd.DataFrame({"site": sites.index.to_numpy()[order][pick].astype(str),
                         "access_km": d_o[rows, pick] * float(net.parameters["route_factor"]),
                         "in_metro": has}, index=metros.index)
