"""Demand tables of the node-link importer: TopoHub's ``graph["demands"]`` and Teal's traffic-matrix CSV files.

Both are checked and built column-wise (a world-scale table has millions of entries); every problem names
the file, record and field. :mod:`backbone.io.nodelink` re-exports :func:`load_traffic_matrix_csv`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError
from backbone.model import Network, normalize_table
from backbone.schema import DEMANDS, TRAFFIC_CLASSES
from backbone.validate import build_network


def demand_table(table: Mapping[str, Any], net: Network, unit: float, file: str) -> pd.DataFrame:
    """``graph["demands"]`` as the model's demand table, checked and built column-wise.

    A world-scale table has millions of entries, so rows are parsed into site positions and float
    values in bulk. *Plain* rows (both ends known site ids as written, the value a finite number
    >= 0 and not a bool) are accepted as they are, which is what the validator would do; the
    others (typically none) go through :func:`backbone.validate.build_network`, which names each
    problem's file, record and field. Self-demands (``src == dst`` as written) are dropped.

    Raises
    ------
    ValidationError
        Listing every problem of the non-plain rows and every duplicate id.
    """
    import pyarrow as pa

    site_ids = net.sites.index
    position = {sid: i for i, sid in enumerate(site_ids.tolist())}
    src_raw: list[str] = []
    dst_raw: list[Any] = []
    values: list[Any] = []
    counts: list[int] = []
    for src, row in table.items():
        if isinstance(row, Mapping) and row:
            src_raw.append(str(src))
            dst_raw.extend(row.keys())
            values.extend(row.values())
            counts.append(len(row))
    n = len(values)
    src_pos_row = np.fromiter((position.get(x, -1) for x in src_raw), np.int64, len(src_raw))
    src_pos = np.repeat(src_pos_row, counts)
    src_row = np.repeat(np.arange(len(src_raw)), counts)
    dst_pos = np.fromiter((position.get(x, -1) if isinstance(x, str) else -1 for x in dst_raw), np.int64, n)
    try:
        gbps = np.array(values, dtype=float)
        numeric = np.fromiter((v.__class__ is not bool for v in values), bool, n)
    except (TypeError, ValueError):
        raw = np.empty(n, dtype=object)
        raw[:] = values
        gbps = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(float)
        numeric = np.fromiter((not isinstance(v, bool | list | dict) for v in values), bool, n)
    with np.errstate(invalid="ignore"):
        plain = (src_pos >= 0) & (dst_pos >= 0) & numeric & np.isfinite(gbps) & (gbps >= 0)
    # a self-demand as written is dropped (plain ends are exact ids, so equal positions mean equal text)
    self_plain = plain & (src_pos == dst_pos)
    odd = np.flatnonzero(~plain)
    odd_src = np.asarray(src_raw, dtype=object)[src_row[odd]] if len(odd) else np.zeros(0, object)
    odd_dst = np.asarray([str(dst_raw[i]) for i in odd.tolist()], dtype=object)
    odd_keep = odd_src != odd_dst
    odd, odd_src, odd_dst = odd[odd_keep], odd_src[odd_keep], odd_dst[odd_keep]
    keep = np.flatnonzero(plain & ~self_plain)
    ids_arr = pa.array(site_ids.tolist(), type=pa.string())
    src_col = ids_arr.take(pa.array(src_pos[keep]))
    dst_col = ids_arr.take(pa.array(dst_pos[keep]))
    template = normalize_table(DEMANDS, pd.DataFrame({"id": ["x"], "src": ["a"], "dst": ["b"], "demand_gbps": [1.0]}))
    str_dtype = template["src"].dtype
    index = pd.Index(pd.array(pa.compute.binary_join_element_wise(src_col, dst_col, "-"), dtype=str_dtype),
                     name="id")
    frame = pd.DataFrame({"src": pd.array(src_col, dtype=str_dtype), "dst": pd.array(dst_col, dtype=str_dtype),
                          "demand_gbps": gbps[keep] * unit}, index=index)
    for col in DEMANDS.columns:
        if col.name not in frame.columns:
            frame[col.name] = pd.Series(col.default, index=index, dtype=template[col.name].dtype)
    frame = frame[list(DEMANDS.names)].astype(template.dtypes.to_dict())
    problems: list[Problem] = []
    if len(odd):
        odd_gbps = np.empty(len(odd), dtype=object)
        odd_gbps[:] = [values[i] for i in odd.tolist()]  # as given, so the validator quotes them
        good = numeric[odd] & np.isfinite(gbps[odd])
        odd_gbps[good] = gbps[odd][good] * unit
        raw_frame = pd.DataFrame({"id": odd_src + "-" + odd_dst, "src": odd_src, "dst": odd_dst, "demand_gbps": odd_gbps})
        try:
            checked = build_network({"sites": net.sites.reset_index(), "demands": raw_frame},
                                    files={"sites": file, "demands": file}).demands
        except ValidationError as err:
            problems += err.problems
            checked = None
        if checked is not None:
            order = np.argsort(np.concatenate([keep, odd]), kind="stable")
            frame = pd.concat([frame, checked.astype(frame.dtypes.to_dict())]).iloc[order]
    if len(odd) or any("-" in s for s in site_ids.tolist()):  # ids can only collide then
        dup = frame.index.duplicated(keep="first") if not problems else np.zeros(0, bool)
        if dup.any():
            first = pd.Series(np.arange(len(frame)), index=frame.index).groupby(level=0).min()
            problems += [Problem(f"duplicate id (first at row {int(first[i]) + 2})", file=file, table="demands",
                                 record=str(i), field="id") for i in frame.index[dup].tolist()]
    if problems:
        raise ValidationError(problems)
    return frame


def load_traffic_matrix_csv(path: str | Path, net: Network, unit_gbps: float = 1.0,
                            traffic_class: str = "bulk", keep_zero: bool = False) -> pd.DataFrame:
    """Read a Teal-style ``src,dst,demand`` traffic matrix as a demands table for ``net``.

    Node ids are matched as text against ``net.sites.index`` (Teal's integer ids become
    ``"0"``, ``"1"``, ... exactly as :func:`load_node_link` names the sites). Each row becomes one
    ``src -> dst`` demand of ``demand x unit_gbps`` Gbps with id ``src-dst``. Zero entries and the
    zero diagonal are dropped unless ``keep_zero``.

    Parameters
    ----------
    path
        The CSV file (header ``src,dst,demand``; ``demand_gbps`` is accepted for ``demand``).
    net
        The network whose sites the matrix refers to.
    unit_gbps
        Gbps per unit of the file's values (Teal's B4 matrices share the topology's unit-less
        capacity scale; 1.0 reads both as Gbps).
    traffic_class
        Class given to every demand.
    keep_zero
        Keep zero-demand rows.

    Returns
    -------
    pandas.DataFrame
        A demands table (columns of :data:`backbone.schema.DEMANDS`, indexed by id), ready for
        ``net.copy_with(demands=...)``.

    Raises
    ------
    ValidationError
        Missing columns, non-numeric or negative values, unknown nodes, repeated pairs or a
        non-zero diagonal; every problem names the file, row and field.

    Example
    -------
    >>> tm = load_traffic_matrix_csv("B4.json_real_0_1.0.tm.csv", b4)  # doctest: +SKIP
    >>> te_net = b4.copy_with(demands=tm)  # doctest: +SKIP
    """
    from backbone.io.scenario import read_csv_table

    p = Path(path)
    file = str(p)
    if not p.exists():
        from backbone.errors import NotFoundError

        raise NotFoundError(f"{p}: no such file")
    if traffic_class not in TRAFFIC_CLASSES:
        raise ValidationError(f"traffic_class must be one of {', '.join(TRAFFIC_CLASSES)}, got {traffic_class!r}")
    df = read_csv_table(p)
    df.columns = [str(c).strip() for c in df.columns]
    if "demand" not in df.columns and "demand_gbps" in df.columns:
        df = df.rename(columns={"demand_gbps": "demand"})
    missing = [c for c in ("src", "dst", "demand") if c not in df.columns]
    if missing:
        raise ValidationError([Problem(f"missing required column {c!r}", file=file, table="demands", field=c)
                               for c in missing])
    src, dst = df["src"].astype(str).str.strip(), df["dst"].astype(str).str.strip()
    value = pd.to_numeric(df["demand"], errors="coerce")
    rows = pd.Series([f"row {i + 2}" for i in range(len(df))], index=df.index)
    problems: list[Problem] = []

    def report(mask: pd.Series, field: str, message: Any) -> None:
        for i in np.flatnonzero(mask.to_numpy()):
            text = message(i) if callable(message) else message
            problems.append(Problem(text, file=file, table="demands", record=rows.iloc[i], field=field))

    report(~np.isfinite(value.fillna(np.inf)), "demand", lambda i: f"expected a number, got {df['demand'].iloc[i]!r}")
    report(value < 0, "demand", lambda i: f"must be >= 0, got {value.iloc[i]:g}")
    known = net.sites.index
    report(~src.isin(known), "src", lambda i: f"unknown site {src.iloc[i]!r}")
    report(~dst.isin(known), "dst", lambda i: f"unknown site {dst.iloc[i]!r}")
    report((src == dst) & (value.fillna(0) != 0), "dst", lambda i: f"demand from {src.iloc[i]!r} to itself")
    ids = src + "-" + dst
    report(ids.duplicated(), "dst", lambda i: f"pair {src.iloc[i]!r} -> {dst.iloc[i]!r} appears more than once")
    if problems:
        raise ValidationError(problems)
    keep = (src != dst) & ((value > 0) | keep_zero)
    out = pd.DataFrame({"id": ids[keep], "src": src[keep], "dst": dst[keep],
                        "demand_gbps": value[keep].astype(float) * unit_gbps, "traffic_class": traffic_class})
    return normalize_table(DEMANDS, out)
