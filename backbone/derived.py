"""Derived columns: how a route's length, latency, module cost and capacity limit follow from its inputs.

One policy for every derived column (``length_km``, ``latency_ms``, ``module_cost_usd`` and
``max_capacity_gbps`` of links; ``length_km`` and ``latency_ms`` of candidates):

* **derived**: an empty cell is computed from its inputs (:data:`INPUTS`), and is computed again whenever
  an input changes (:meth:`~backbone.model.Network.copy_with`, :meth:`~backbone.model.Network.with_capacity`,
  :meth:`~backbone.model.Network.with_parameters`);
* **override**: a value that differs from what its inputs give (a measured latency, a published cable
  length, a contracted capacity limit) is kept as it is, whatever changes; it is cleared by setting the cell
  to NaN. :meth:`~backbone.model.Network.overrides` lists them apart from the derived values.

Whether a cell is an override is read from the values themselves (:func:`derived_mask`: equal to its
derivation within :data:`TOLERANCE`), so the policy survives any file format, a save and load, and any
code that builds tables by hand. An override that happens to equal the derived value is indistinguishable
from it, and behaves as derived from then on.

Columns are derived in :data:`DERIVED_COLUMNS` order: latency and module cost from the (derived or
overridden) length, the capacity limit from ``capacity_gbps``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from backbone import geo

__all__ = ["DERIVED_COLUMNS", "INPUTS", "MIN_LINK_LENGTH_KM", "TOLERANCE", "access_latency_ms", "derive_column",
           "derived_mask", "fill_derived", "latency_factors", "link_latency_ms", "overrides", "rederive"]

DERIVED_COLUMNS: dict[str, tuple[str, ...]] = {
    "links": ("length_km", "latency_ms", "module_cost_usd", "max_capacity_gbps"),
    "candidates": ("length_km", "latency_ms"),
}
"""The derived columns of each table, in derivation order."""

INPUTS: dict[str, tuple[str, ...]] = {
    "length_km": ("site_a", "site_b", "waypoints", "sites.lon", "sites.lat", "route_factor"),
    "latency_ms": ("length_km", "kind", "group_index", "equipment_delay_ms", "*_latency_factor"),
    "module_cost_usd": ("length_km", "kind", "*_module_fixed_usd", "*_module_usd_per_km"),
    "max_capacity_gbps": ("capacity_gbps", "max_capacity_factor"),
}
"""What each derived column is computed from (table columns, ``sites.*`` and scenario parameters)."""

TOLERANCE: dict[str, float] = {"length_km": 1e-3, "latency_ms": 1e-3, "module_cost_usd": 0.01,
                               "max_capacity_gbps": 1e-6}
"""Absolute tolerance within which a stored value counts as derived (stored values are rounded: length to
3 decimals, latency to 4, cost to cents)."""

MIN_LINK_LENGTH_KM = 0.1
"""Shortest derived link length: a link between co-located sites (same coordinates, as several
Topology Zoo graphs have) is taken as a 100 m in-building or campus cross-connect, so that what is
derived always validates (``length_km`` must be > 0) and a converted file loads again."""


# ---------------------------------------------------------------------- the formulas
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
    >>> from backbone.model import DEFAULT_PARAMETERS
    >>> p = {**DEFAULT_PARAMETERS, "submarine_latency_factor": 1.1}
    >>> [round(float(x), 3) for x in link_latency_ms(np.array([1000.0, 1000.0]),
    ...                                               np.array(["terrestrial", "submarine"]), p)]
    [4.947, 5.436]
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


def _kinds(table: pd.DataFrame) -> np.ndarray:
    return table["link_kind" if "link_kind" in table.columns else "kind"].to_numpy()


def derive_column(table: pd.DataFrame, column: str, sites: pd.DataFrame, params: Mapping[str, float]) -> np.ndarray:
    """The derived value of ``column`` for every row of ``table``, from the row's current inputs.

    * ``length_km``: polyline through the waypoints (geodesic segments) when waypoints are given, else
      geodesic between the endpoints x ``route_factor``; rounded to 1 m, at least :data:`MIN_LINK_LENGTH_KM`;
    * ``latency_ms``: :func:`link_latency_ms` of the row's length and link kind (``link_kind`` for
      candidates), rounded to 0.1 us;
    * ``module_cost_usd``: ``*_module_fixed_usd + *_module_usd_per_km x length`` by kind (submarine or
      terrestrial), rounded to cents;
    * ``max_capacity_gbps``: ``max_capacity_factor x capacity_gbps``.
    """
    n = len(table)
    if n == 0:
        return np.zeros(0, dtype=float)
    if column == "length_km":
        a = sites.loc[table["site_a"]]
        b = sites.loc[table["site_b"]]
        lon_a, lat_a, lon_b, lat_b = (a["lon"].to_numpy(float), a["lat"].to_numpy(float), b["lon"].to_numpy(float),
                                      b["lat"].to_numpy(float))
        lengths = geo.geodesic_km(lon_a, lat_a, lon_b, lat_b) * params["route_factor"]
        waypoints = table["waypoints"].to_numpy(dtype=object)
        for i in np.flatnonzero([str(w).strip() != "" for w in waypoints]):  # routes with explicit geometry only
            pts = [(lon_a[i], lat_a[i]), *geo.parse_waypoints(str(waypoints[i])), (lon_b[i], lat_b[i])]
            lengths[i] = geo.polyline_km(pts)
        return np.maximum(np.round(lengths, 3), MIN_LINK_LENGTH_KM)
    if column == "latency_ms":
        return np.round(link_latency_ms(table["length_km"].to_numpy(float), _kinds(table), params), 4)
    if column == "module_cost_usd":
        is_sub = _kinds(table) == "submarine"
        fixed = np.where(is_sub, params["submarine_module_fixed_usd"], params["terrestrial_module_fixed_usd"])
        per_km = np.where(is_sub, params["submarine_module_usd_per_km"], params["terrestrial_module_usd_per_km"])
        return np.round(fixed + per_km * table["length_km"].to_numpy(float), 2)
    if column == "max_capacity_gbps":
        return table["capacity_gbps"].to_numpy(float) * params["max_capacity_factor"]
    raise KeyError(f"{column!r} is not a derived column")


# ---------------------------------------------------------------------- the policy
def fill_derived(name: str, table: pd.DataFrame, sites: pd.DataFrame, params: Mapping[str, float]) -> pd.DataFrame:
    """A copy of ``table`` (``links`` or ``candidates``) with every empty derived cell computed, in
    :data:`DERIVED_COLUMNS` order; given values are kept."""
    table = table.copy()
    for column in DERIVED_COLUMNS[name]:
        need = table[column].isna().to_numpy()
        if need.any():
            table.loc[need, column] = derive_column(table.loc[need], column, sites, params)
    return table


def derived_mask(name: str, table: pd.DataFrame, sites: pd.DataFrame, params: Mapping[str, float]) -> pd.DataFrame:
    """Boolean table (rows of ``table``, its derived columns): True where the stored value is what its
    inputs give (within :data:`TOLERANCE`) or empty, False where it is an override."""
    out = {}
    for column in DERIVED_COLUMNS[name]:
        stored = table[column].to_numpy(float)
        model = derive_column(table, column, sites, params)
        out[column] = np.isnan(stored) | np.isclose(stored, model, rtol=1e-12, atol=TOLERANCE[column])
    return pd.DataFrame(out, index=table.index)


def overrides(name: str, table: pd.DataFrame, sites: pd.DataFrame, params: Mapping[str, float]) -> pd.DataFrame:
    """The overrides of a table: its derived columns, NaN where the value is derived."""
    values = pd.DataFrame({c: table[c].to_numpy(float) for c in DERIVED_COLUMNS[name]}, index=table.index)
    return values.mask(derived_mask(name, table, sites, params))


def rederive(name: str, old: pd.DataFrame, new: pd.DataFrame, old_sites: pd.DataFrame, new_sites: pd.DataFrame,
             old_params: Mapping[str, float], new_params: Mapping[str, float]) -> pd.DataFrame:
    """``new`` (the next version of table ``old``) with its derived cells computed again from its inputs.

    A cell of a row present in both tables whose value the caller left unchanged keeps its status in
    ``old``: derived (it is recomputed from the new inputs) or override (kept). A changed cell, or a cell of
    a new row, is an override when it holds a value different from its derivation, and derived when it is
    empty (NaN clears an override).
    """
    new = new.copy()
    if len(new) == 0:
        return new
    common = new.index.intersection(old.index)
    if len(common):
        was_derived = derived_mask(name, old.loc[common], old_sites, old_params)
        for column in DERIVED_COLUMNS[name]:
            before = old.loc[common, column].to_numpy(float)
            after = new.loc[common, column].to_numpy(float)
            unchanged = (before == after) | (np.isnan(before) & np.isnan(after))
            recompute = unchanged & was_derived[column].to_numpy()
            if recompute.any():
                new.loc[common[recompute], column] = np.nan
    return fill_derived(name, new, new_sites, new_params)
