"""Table helpers of the model layer: coerce a table to its spec, parse id lists, tables as records, link routes.

:mod:`backbone.model` re-exports these names; they live apart so that modules the model itself imports
(validation) can use them without importing the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from backbone import geo
from backbone.schema import TableSpec


def empty_table(spec: TableSpec) -> pd.DataFrame:
    """An empty table with the spec's columns and an ``id`` index."""
    df = pd.DataFrame({c: pd.Series(dtype=_pandas_dtype(spec.column(c).dtype)) for c in spec.names})
    df.index = pd.Index([], dtype=str, name="id")
    return df


def _pandas_dtype(dtype: str) -> Any:
    return {"str": str, "float": float, "int": np.int64, "bool": bool, "idlist": object}[dtype]


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
