"""Structural changes between two networks: rows added, removed or changed in every table, one row per change.

Each table is aligned on its id index and compared column by column (vectorised: no loop over rows). A change
row is ``table, id, change, field, before, after, delta, unit`` with the unit from the column spec
(:data:`backbone.schema.TABLES`). Added and removed records get one row each, on the table's key quantity
(:data:`KEY_FIELDS`: a link's ``capacity_gbps``, a site's ``gpus_installed``, ...), so their size ranks with the
rest. Capacity changes are summarised per cable system and per region pair (:func:`capacity_summary`).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from backbone.model import Network
from backbone.schema import TABLES

__all__ = ["CHANGE_COLUMNS", "KEY_FIELDS", "capacity_summary", "network_changes", "table_changes"]

logger = logging.getLogger(__name__)

CHANGE_COLUMNS: tuple[str, ...] = ("table", "id", "change", "field", "before", "after", "delta", "unit",
                                   "relative_change")
"""Columns of the structural change table."""

KEY_FIELDS: dict[str, str] = {"sites": "gpus_installed", "links": "capacity_gbps", "srlgs": "links",
                              "metros": "inference_gpus", "demands": "demand_gbps", "candidates": "max_modules",
                              "datasets": "size_pb", "training_jobs": "gpus"}
"""The quantity an added or removed record is shown with (its size in the ranking)."""

REL_TOL = 1e-9
"""Two numbers closer than this (relative, or absolute near zero) are equal: CSV round trips keep ~15 digits."""


def _units(table: str) -> dict[str, str]:
    return {c.name: c.unit for c in TABLES[table].columns}


def _comparable(values: pd.Series) -> pd.Series:
    """Cells as compared and shown: id lists joined with ``;`` (as in CSV), everything else as is."""
    if values.map(lambda v: isinstance(v, tuple | list)).any():
        return values.map(lambda v: ";".join(map(str, v)) if isinstance(v, tuple | list) else v)
    return values


def _numeric(values: pd.Series) -> pd.Series | None:
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        return None
    return values.astype(float)


def _changed_cells(table: str, before: pd.DataFrame, after: pd.DataFrame, ids: pd.Index) -> pd.DataFrame:
    """Rows for every cell of a record present on both sides whose value differs."""
    frames = []
    units = _units(table)
    for column in [c for c in before.columns if c in after.columns]:  # a loop over columns, never rows
        b, a = _comparable(before.loc[ids, column]), _comparable(after.loc[ids, column])
        bn, an = _numeric(b), _numeric(a)
        if bn is not None and an is not None:
            same = np.isclose(bn.to_numpy(), an.to_numpy(), rtol=REL_TOL, atol=REL_TOL, equal_nan=True)
            delta = an - bn
        else:
            bs, as_ = b.astype(object), a.astype(object)
            same = ((bs == as_) | (bs.isna() & as_.isna())).to_numpy()
            delta = pd.Series(np.nan, index=ids)
        mask = ~same
        if not mask.any():
            continue
        frames.append(pd.DataFrame({
            "table": table, "id": ids[mask], "change": "changed", "field": column,
            "before": b[mask].astype(object).to_numpy(), "after": a[mask].astype(object).to_numpy(),
            "delta": delta[mask].to_numpy(dtype=float), "unit": units.get(column, ""),
        }))
    return pd.concat(frames, ignore_index=True) if frames else _empty()


def _added_removed(table: str, records: pd.DataFrame, ids: pd.Index, change: str) -> pd.DataFrame:
    if not len(ids):
        return _empty()
    key = KEY_FIELDS[table]
    values = _comparable(records.loc[ids, key]) if key in records.columns else pd.Series(np.nan, index=ids)
    numeric = _numeric(values)
    if key == "links" and numeric is None:  # an SRLG's size is its number of links
        numeric = records.loc[ids, key].map(len).astype(float)
    sign = 1.0 if change == "added" else -1.0
    shown = values.astype(object).to_numpy()
    return pd.DataFrame({
        "table": table, "id": ids, "change": change, "field": key,
        "before": shown if change == "removed" else None, "after": shown if change == "added" else None,
        "delta": sign * numeric.to_numpy() if numeric is not None else np.nan,
        "unit": _units(table).get(key, ""),
    })


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float if c in ("delta", "relative_change") else object)
                         for c in CHANGE_COLUMNS})


def table_changes(table: str, before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """The changes of one table (columns :data:`CHANGE_COLUMNS`), largest first.

    ``relative_change`` ranks them: 1 for an added or removed record, ``|after - before| / max(|before|,
    |after|)`` for a number, 0 for a changed text; ties are broken by ``|delta|``.

    Example
    -------
    >>> table_changes("links", net_a.links, net_b.links)  # doctest: +SKIP
    """
    added = after.index.difference(before.index, sort=False)
    removed = before.index.difference(after.index, sort=False)
    common = before.index.intersection(after.index, sort=False)
    parts = [p for p in (_added_removed(table, after, added, "added"), _added_removed(table, before, removed, "removed"),
                         _changed_cells(table, before, after, common)) if len(p)]
    if not parts:
        return _empty()
    out = pd.concat(parts, ignore_index=True)
    return rank_changes(out)


def rank_changes(out: pd.DataFrame) -> pd.DataFrame:
    """Set ``relative_change`` and sort largest change first (see :func:`table_changes`)."""
    b = pd.to_numeric(out["before"], errors="coerce").abs()
    a = pd.to_numeric(out["after"], errors="coerce").abs()
    scale = np.fmax(a, b).replace(0.0, np.nan)
    relative = (out["delta"].abs() / scale).fillna(0.0)
    relative[out["change"] != "changed"] = 1.0
    out = out.assign(relative_change=relative.astype(float), _abs=out["delta"].abs().fillna(0.0))
    out = out.sort_values(["relative_change", "_abs", "table", "id", "field"], ascending=[False, False, True, True, True],
                          kind="stable")
    return out.drop(columns="_abs").reset_index(drop=True)[list(CHANGE_COLUMNS)]


def network_changes(before: Network, after: Network) -> pd.DataFrame:
    """Every structural change between two networks (all tables of :data:`backbone.schema.TABLES`), largest
    first."""
    parts = [table_changes(name, before.tables()[name], after.tables()[name]) for name in TABLES]
    parts = [p for p in parts if len(p)]
    return rank_changes(pd.concat(parts, ignore_index=True)) if parts else _empty()


def _link_capacity(net: Network) -> pd.DataFrame:
    links = net.links
    region = net.sites["region"]
    a = region.reindex(links["site_a"]).to_numpy(dtype=object)
    b = region.reindex(links["site_b"]).to_numpy(dtype=object)
    first = np.where(a.astype(str) <= b.astype(str), a, b)
    second = np.where(a.astype(str) <= b.astype(str), b, a)
    pair = np.where(first == second, first, pd.Series(first).astype(str) + "–" + pd.Series(second).astype(str))
    system = links["cable_system"].fillna("").astype(str).replace("", "(terrestrial)")
    return pd.DataFrame({"cable_system": system.to_numpy(), "region": pair,
                         "capacity_gbps": links["capacity_gbps"].to_numpy(dtype=float)}, index=links.index)


def capacity_summary(before: Network, after: Network, by: str) -> pd.DataFrame:
    """Link capacity per ``by`` (``cable_system`` or ``region``: the region, or the region pair a link joins)
    before and after, with the change; only groups that changed, largest change first.

    Columns: ``<by>, capacity_before_gbps, capacity_after_gbps, delta_gbps, links_before, links_after``.
    """
    b, a = _link_capacity(before), _link_capacity(after)
    gb = b.groupby(by)["capacity_gbps"].agg(["sum", "count"])
    ga = a.groupby(by)["capacity_gbps"].agg(["sum", "count"])
    out = pd.DataFrame({"capacity_before_gbps": gb["sum"], "capacity_after_gbps": ga["sum"],
                        "links_before": gb["count"], "links_after": ga["count"]}).fillna(0.0)
    out["delta_gbps"] = out["capacity_after_gbps"] - out["capacity_before_gbps"]
    changed = ~np.isclose(out["delta_gbps"], 0.0, atol=1e-6) | (out["links_before"] != out["links_after"])
    out = out[changed].astype({"links_before": int, "links_after": int})
    out = out.reindex(out["delta_gbps"].abs().sort_values(ascending=False, kind="stable").index)
    out.index.name = by
    return out.reset_index()[[by, "capacity_before_gbps", "capacity_after_gbps", "delta_gbps", "links_before",
                              "links_after"]]
