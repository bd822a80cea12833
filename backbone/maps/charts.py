"""Charts for slides (matplotlib, no pyplot state): each takes plain tables or series.

* :func:`utilisation_histogram` -- links by utilisation band (over 100 % highlighted);
* :func:`latency_cdf` -- cumulative distribution of demand latency per region pair;
* :func:`impact_bars` -- the worst failures (or links) by impact;
* :func:`cost_breakdown` -- placement cost by site and component (stacked bars).

:func:`chart_bytes` renders any of them to PNG/SVG/PDF bytes; :func:`chart_from_result` pulls the
inputs out of a result JSON (and, for latency, the network's demands and shortest paths).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError
from backbone.maps import style
from backbone.model import Network
from backbone.serialize import count_text

logger = logging.getLogger(__name__)

CHART_WIDTH_IN = 12.0
TICK_PT = 12.0
"""Tick label size (points; a 1200 px chart shown full width in the report keeps them about 15 px high)."""
LABEL_PT = 13.0
"""Axis label and legend size (points)."""
WRAP_CHARS = 56
"""Bar labels longer than this wrap onto more lines (at spaces), never cut."""
PALETTE = ("#3d5a80", "#ee6c4d", "#2a9d8f", "#e9c46a", "#7b61ff", "#98c1d9", "#b5179e", "#6b7785")


def _figure(size: tuple[int, int], title: str, subtitle: str = "") -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    w, h = size
    h_in = CHART_WIDTH_IN * h / w
    fig = Figure(figsize=(CHART_WIDTH_IN, h_in), dpi=w / CHART_WIDTH_IN, facecolor="white")
    FigureCanvasAgg(fig)
    # title, subtitle and axes keep their distances from the edges in inches, however tall the chart
    bottom, top = min(0.3, 0.81 / h_in), max(0.5, 1 - 1.35 / h_in)
    ax = fig.add_axes((0.09, bottom, 0.86, top - bottom))
    fig.text(0.09, 1 - 0.47 / h_in, title, fontsize=20, fontweight="bold", color=style.TEXT, ha="left", va="center")
    if subtitle:
        sub = fig.text(0.09, 1 - 0.91 / h_in, subtitle, fontsize=LABEL_PT, color=style.SUBTEXT, ha="left",
                       va="center", linespacing=1.15)
        _wrap_to_width(fig, sub, 0.97 - 0.09)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color("#9aa5b1")
    ax.tick_params(colors=style.SUBTEXT, labelsize=TICK_PT)
    ax.xaxis.label.set_fontsize(LABEL_PT)
    ax.yaxis.label.set_fontsize(LABEL_PT)
    ax.grid(axis="y", color="#e4e7eb", lw=0.8)
    ax.set_axisbelow(True)
    return fig, ax


def _wrap_to_width(fig: Any, text: Any, width_fraction: float) -> None:
    """Wrap ``text`` (a figure text) onto more lines at spaces when it is wider than ``width_fraction`` of the
    figure: a long subtitle is shown whole, never cut at the edge."""
    import textwrap

    width_px = text.get_window_extent(fig.canvas.get_renderer()).width
    room_px = width_fraction * fig.get_figwidth() * fig.dpi
    if width_px <= room_px:
        return
    content = text.get_text()
    chars = max(20, int(len(content) * room_px / width_px) - 2)
    text.set_text("\n".join(textwrap.wrap(content, chars, break_long_words=False)))


def chart_bytes(fig: Any, fmt: str = "png") -> bytes:
    """Render a chart figure to ``png``, ``svg`` or ``pdf`` bytes."""
    import matplotlib as mpl

    buf = io.BytesIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "backbone"}):
        meta = {"Date": None} if fmt == "svg" else ({"CreationDate": None} if fmt == "pdf" else {})
        fig.savefig(buf, format=fmt, facecolor="white", metadata=meta)
    return buf.getvalue()


# ---------------------------------------------------------------------- the four charts
def utilisation_histogram(utilisation: pd.Series | Mapping[str, float], *, title: str = "Link utilisation",
                          size: tuple[int, int] = (1600, 900)) -> Any:
    """Histogram of links by utilisation in 10 % bands, bars coloured like the map's ramp.

    Parameters
    ----------
    utilisation
        Utilisation per link (1.0 = 100 %); NaN values are ignored.
    """
    from matplotlib.colors import Normalize

    u = pd.Series(utilisation, dtype=float).dropna()
    if u.empty:
        raise ValidationError(Problem("no utilisation values to chart", field="utilisation"))
    top = max(1.0, float(np.ceil(u.max() * 10) / 10))
    edges = np.round(np.arange(0.0, top + 0.1001, 0.1), 3)
    # bands closed on the right, (0.9, 1.0], so a link at exactly 100 % is full, not over
    band = np.clip(np.digitize(u.to_numpy(), edges, right=True), 1, len(edges) - 1) - 1
    counts = np.bincount(band, minlength=len(edges) - 1)
    over = int((u > 1.0 + 1e-9).sum())
    sub = (f"{len(u)} links  ·  median {u.median():.0%}  ·  p95 {u.quantile(0.95):.0%}  ·  max {u.max():.0%}"
           + (f"  ·  {over} over 100 %" if over else ""))
    fig, ax = _figure(size, title, sub)
    cmap = style._cmap("utilisation", style.UTILISATION_STOPS)
    mids = (edges[:-1] + edges[1:]) / 2
    colors = [style.OVERLOAD if m > 1.0 else cmap(Normalize(0, 1)(m)) for m in mids]  # type: ignore[operator]
    ax.bar(edges[:-1], counts, width=0.095, align="edge", color=colors, edgecolor="white")
    ax.axvline(1.0, color=style.SUBTEXT, lw=1, ls=(0, (3, 2)))
    ax.set_xlim(0, edges[-1])
    ax.set_xticks(edges[:: 2 if len(edges) > 12 else 1])
    ax.set_xticklabels([f"{e:.0%}" for e in edges[:: 2 if len(edges) > 12 else 1]])
    ax.set_xlabel("Utilisation (peak direction)", color=style.SUBTEXT)
    ax.set_ylabel("Links", color=style.SUBTEXT)
    return fig


def latency_cdf(latency: pd.DataFrame, *, title: str = "Demand latency by region pair", max_pairs: int = 8,
                size: tuple[int, int] = (1600, 900)) -> Any:
    """CDF of latency per region pair.

    Parameters
    ----------
    latency
        Columns ``region_pair`` and ``latency_ms`` (one-way or RTT, as labelled by
        ``latency.attrs.get("what", "one-way")``), optional ``weight`` (e.g. demand Gbps).
    max_pairs
        Show the pairs with the most weight; the rest are summed into "other".
    """
    if latency.empty or not {"region_pair", "latency_ms"} <= set(latency.columns):
        raise ValidationError(Problem("latency table needs rows with region_pair and latency_ms", field="latency"))
    df = latency.copy()
    weight_name = latency.attrs.get("weight_name", "weight" if "weight" in df.columns else "count")
    if "weight" not in df.columns:
        df["weight"] = 1.0
    df = df[np.isfinite(df["latency_ms"]) & (df["weight"] > 0)]
    if df.empty:
        raise ValidationError(Problem("no finite latencies to chart", field="latency"))
    share = df.groupby("region_pair")["weight"].sum().sort_values(ascending=False)
    pairs = list(share.index[:max_pairs])
    what = latency.attrs.get("what", "one-way")
    weights = (f"each weighted by its volume ({weight_name})" if weight_name not in ("count", "weight")
               else "each counts once" if weight_name == "count" else "weighted by the 'weight' column")
    path = latency.attrs.get("path", "lowest-latency path")
    fig, ax = _figure(size, title, f"{len(df)} demands, {weights}  ·  {what} latency, {path}"
                      f"{latency.attrs.get('model', '')}")
    for k, pair in enumerate(pairs):
        d = df[df["region_pair"] == pair].sort_values("latency_ms")
        cum = d["weight"].cumsum().to_numpy() / d["weight"].sum()
        x = np.concatenate([[0.0], d["latency_ms"].to_numpy()])
        ax.step(x, np.concatenate([[0.0], cum]), where="post", lw=2.2, color=PALETTE[k % len(PALETTE)],
                label=f"{pair}  (median {d['latency_ms'].to_numpy()[np.searchsorted(cum, 0.5)]:.0f} ms)")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.yaxis.set_major_formatter(_percent_formatter())
    ax.set_xlabel(f"Latency, {what} (ms)", color=style.SUBTEXT)
    ax.set_ylabel("Share of demand", color=style.SUBTEXT)
    ax.grid(axis="x", color="#e4e7eb", lw=0.8)
    ax.legend(loc="lower right", frameon=False, fontsize=LABEL_PT)
    return fig


def impact_bars(impact: pd.Series | Mapping[str, float], *, title: str = "Worst failures by impact",
                value_label: str = "Impact", unit: str = "", top: int = 15, size: tuple[int, int] = (1600, 900),
                names: Mapping[str, str] | None = None) -> Any:
    """Horizontal bars of the ``top`` largest impacts (failure scenario or link -> value).

    Each bar is one failure on its own: the scenarios are alternatives, so no total is shown (the
    subtitle gives the worst and how many have any impact). Bar labels and the axis share one number
    format; ``unit`` goes on the axis; ``names`` maps a label (a scenario id) to a readable name.
    """
    s = pd.Series(impact, dtype=float).dropna()
    s = s[s > 0].sort_values(ascending=False)
    if s.empty:
        raise ValidationError(Problem("no positive impact values to chart", field="impact"))
    shown = s.head(top)[::-1]
    fmt = number_format(float(shown.max()))
    unit_text = f" {unit}" if unit else ""
    labels = [_wrap(str((names or {}).get(str(i), i))) for i in shown.index]
    lines = max(label.count("\n") + 1 for label in labels)
    dpi = size[0] / CHART_WIDTH_IN
    row_px = (lines * 1.25 * TICK_PT + 8.0) * dpi / 72.0  # a bar's row fits its label
    size = (size[0], max(size[1], int(np.ceil(row_px * len(shown) + 2.16 * dpi))))  # + the title and axis bands
    fig, ax = _figure(size, title, f"top {len(shown)} of {len(s)} with non-zero impact  ·  worst {fmt(s.iloc[0])}"
                      f"{unit_text}  ·  each bar is one failure on its own (alternatives, not a sum)")
    cmap = style._cmap("impact", style.IMPACT_STOPS)
    colors = [cmap(0.35 + 0.6 * v / shown.max()) for v in shown.to_numpy()]  # type: ignore[operator]
    ax.barh(np.arange(len(shown)), shown.to_numpy(), color=colors, height=0.7)
    ax.set_yticks(np.arange(len(shown)))
    ax.set_yticklabels(labels, fontsize=TICK_PT, color=style.TEXT, linespacing=1.0)
    ax.grid(axis="y", visible=False)
    ax.grid(axis="x", color="#e4e7eb", lw=0.8)
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt(v)))
    ax.set_xlabel(f"{value_label} ({unit})" if unit and f"({unit})" not in value_label else value_label,
                  color=style.SUBTEXT)
    ax.set_xlim(0, float(shown.max()) * 1.12)  # room for the value after the longest bar
    for y, v in enumerate(shown.to_numpy()):
        ax.text(v, y, f" {fmt(v)}", va="center", ha="left", fontsize=TICK_PT - 1, color=style.SUBTEXT)
    _fit_left_labels(fig, ax)
    return fig


def number_format(largest: float) -> Any:
    """One number format for every value on a chart, chosen by the largest value: thousands
    separators and the decimals the magnitude needs (``24,312``, ``12.5``, ``0.042``)."""
    decimals = 0 if largest >= 100 else 1 if largest >= 10 else 2 if largest >= 1 else 3

    def fmt(v: float) -> str:
        return f"{v:,.{decimals}f}"

    return fmt


def _wrap(text: str, width: int = WRAP_CHARS) -> str:
    """``text`` wrapped onto lines of at most ``width`` characters at spaces (a word longer than that stays whole):
    a long failure name is shown whole, never cut."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


def _fit_left_labels(fig: Any, ax: Any) -> None:
    """Move the axes' left edge so the y tick labels fit inside the figure."""
    renderer = fig.canvas.get_renderer()
    width_px = max((t.get_window_extent(renderer).width for t in ax.get_yticklabels()), default=0.0)
    left = min(0.6, max(0.09, (width_px + 24.0) / (fig.get_figwidth() * fig.dpi)))
    box = ax.get_position()
    ax.set_position((left, box.y0, 0.95 - left, box.height))


def _fit_bottom_labels(fig: Any, ax: Any) -> None:
    """Raise the axes' bottom edge so the x tick labels (and axis label) fit inside the figure."""
    renderer = fig.canvas.get_renderer()
    fig_h = fig.get_figheight() * fig.dpi
    box = ax.get_position()
    ax_bottom_px = box.y0 * fig_h
    low = min((t.get_window_extent(renderer).y0 for t in ax.get_xticklabels()), default=ax_bottom_px)
    need = ax_bottom_px - low + 16.0  # label depth below the axis plus a margin
    bottom = min(0.45, max(box.y0, need / fig_h))
    ax.set_position((box.x0, bottom, box.width, box.y1 - bottom))


def cost_breakdown(costs: pd.DataFrame | pd.Series, *, title: str = "Placement cost breakdown",
                   size: tuple[int, int] = (1600, 900), top: int = 20) -> Any:
    """Stacked bars of cost (USD) per site and component, largest sites first.

    Parameters
    ----------
    costs
        DataFrame indexed by site (or any row label) with one USD column per component
        (for example ``capex_gpu_usd``, ``capex_power_usd``, ``opex_usd``); a Series is one
        bar per component.
    """
    df = costs.to_frame("cost_usd").T if isinstance(costs, pd.Series) else costs.copy()
    df = df.apply(pd.to_numeric, errors="coerce").fillna(0.0)
    df = df.loc[df.sum(axis=1) > 0]
    if df.empty:
        raise ValidationError(Problem("no positive costs to chart", field="costs"))
    df = df.loc[df.sum(axis=1).sort_values(ascending=False).index[:top]]
    total = float(df.to_numpy().sum())
    scale, unit = (1e9, "bn USD") if total >= 5e9 else (1e6, "M USD")
    fig, ax = _figure(size, title, f"total {total / scale:,.2f} {unit} over {count_text(len(df), 'site')}")
    bottom = np.zeros(len(df))
    x = np.arange(len(df))
    for k, col in enumerate(df.columns):
        v = df[col].to_numpy() / scale
        ax.bar(x, v, bottom=bottom, color=PALETTE[k % len(PALETTE)], width=0.7, label=style._pretty(str(col)))
        bottom += v
    ax.set_xticks(x)
    ax.set_xticklabels([str(i) for i in df.index], rotation=30 if len(df) > 6 else 0, ha="right" if len(df) > 6 else
                       "center", fontsize=TICK_PT, color=style.TEXT)
    ax.set_ylabel(unit, color=style.SUBTEXT)
    ax.legend(frameon=False, fontsize=LABEL_PT, loc="upper right")
    _fit_bottom_labels(fig, ax)
    return fig


def _percent_formatter() -> Any:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(1.0, decimals=0)


# ---------------------------------------------------------------------- inputs from results
def demand_latency_table(net: Network) -> pd.DataFrame:
    """Lowest one-way latency of every demand and its region pair (columns ``region_pair``,
    ``latency_ms``, ``weight`` = demand Gbps); unreachable demands are dropped."""
    import networkx as nx

    d = net.demands
    if d.empty:
        return pd.DataFrame(columns=["region_pair", "latency_ms", "weight"])
    g = nx.Graph()
    g.add_nodes_from(net.sites.index)
    links = net.links.sort_values("latency_ms", ascending=False)  # keep the fastest of parallel links
    g.add_weighted_edges_from(zip(links["site_a"], links["site_b"], links["latency_ms"], strict=True))
    lat = np.full(len(d), np.nan)
    src = d["src"].to_numpy()
    for s in np.unique(src):  # one Dijkstra per source site
        dist = nx.single_source_dijkstra_path_length(g, s, weight="weight")
        rows = np.flatnonzero(src == s)
        lat[rows] = [dist.get(t, np.nan) for t in d["dst"].to_numpy()[rows]]
    region = net.sites["region"]
    a, b = region.reindex(d["src"]).to_numpy(), region.reindex(d["dst"]).to_numpy()
    pair = [f"{x}–{y}" if x <= y else f"{y}–{x}" for x, y in zip(a, b, strict=True)]
    out = pd.DataFrame({"region_pair": pair, "latency_ms": lat, "weight": d["demand_gbps"].to_numpy(float)},
                       index=d.index)
    out = out[np.isfinite(out["latency_ms"])]
    out.attrs.update({"what": "one-way", "weight_name": "Gbps", "model": _calibration_note(net)})
    return out


def _calibration_note(net: Network | None) -> str:
    calibrated = net.meta.get("calibration") if net is not None else None
    return f"  ·  calibrated on {calibrated.get('pairs')} measured RTTs" if isinstance(calibrated, Mapping) else ""


def _map_obj(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = doc.get("map")
    return inner if isinstance(inner, Mapping) else doc


def chart_from_result(kind: str, doc: Mapping[str, Any] | None, net: Network | None = None, *, fmt: str = "png",
                      size: tuple[int, int] = (1600, 900), title: str | None = None) -> bytes:
    """Render chart ``kind`` (``utilisation``, ``latency``, ``impact``, ``cost``) from a result.

    * utilisation: ``map.link_values.utilisation``;
    * latency: the result's ``latency`` records (``region_pair``, ``latency_ms``[, ``weight``]; what
      they are in ``latency_weight_name``, ``latency_path``, ``latency_what``) or else the network's
      demands over their lowest-latency paths;
    * impact: an ``impact`` object ``{name: value}`` (labelled by ``impact_label``, e.g.
      ``"Unmet demand (Gbps)"``), or records under ``scenarios``/``failures``
      with a numeric ``*impact*``/``*unmet*``/``*lost*``/``*unserved*`` field, or the first
      ``map.link_values.impact*``;
    * cost: per-site records under ``sites`` with ``*_usd`` columns (``capex_usd``, ``opex_usd``),
      or ``capex_usd``/``opex_usd`` totals.

    Raises
    ------
    ValidationError
        When the result does not carry what the chart needs (the problem says what is missing).
    """
    doc = doc or {}
    kw: dict[str, Any] = {"size": size}
    if title:
        kw["title"] = title
    if kind == "utilisation":
        lv = _map_obj(doc).get("link_values") or {}
        util = lv.get("utilisation") or lv.get("utilization")
        if not isinstance(util, Mapping):
            raise ValidationError(Problem("result has no map.link_values.utilisation", field="result"))
        fig = utilisation_histogram(pd.Series(util, dtype=float), **kw)
    elif kind == "latency":
        records = doc.get("latency")
        if isinstance(records, list) and records:
            table = pd.DataFrame(records)
            table.attrs.update({
                "what": str(doc.get("latency_what", "one-way")),
                "weight_name": str(doc.get("latency_weight_name", "Gbps")) if "weight" in table.columns else "count",
                "path": str(doc.get("latency_path", "lowest-latency path")), "model": _calibration_note(net)})
        elif net is not None:
            table = demand_latency_table(net)
        else:
            raise ValidationError(Problem("latency chart needs a scenario with demands", field="scenario"))
        fig = latency_cdf(table, **kw)
    elif kind == "impact":
        series, label = _impact_series(doc)
        label, unit = _label_and_unit(label)
        names = failure_names(series.index, net) if net is not None else None
        fig = impact_bars(series, value_label=label, unit=unit, names=names, **kw)
    elif kind == "cost":
        fig = cost_breakdown(_cost_table(doc), **kw)
    else:
        raise ValidationError(Problem(f"unknown chart kind {kind!r}", field="kind"))
    return chart_bytes(fig, fmt)


_IMPACT_LABELS = {"unmet": "Unmet demand", "lost": "Traffic lost", "unserved": "Demand unserved"}


def _label_and_unit(label: str) -> tuple[str, str]:
    """``'Unmet (Gbps)'`` -> ``('Unmet demand', 'Gbps')``."""
    text, unit = label, ""
    if label.endswith(")") and " (" in label:
        text, unit = label[:-1].rsplit(" (", 1)
    return _IMPACT_LABELS.get(text.lower(), text), unit


def failure_names(ids: Any, net: Network) -> dict[str, str]:
    """Readable names of failure scenario ids: ``srlg:cable-marea`` -> the SRLG's name, ``site:ashburn``
    -> the site's name, ``link:x`` -> the link's name; pairs joined by ``+`` keep both names. Ids
    the network does not know keep their text."""
    tables = {"srlg": net.srlgs, "site": net.sites, "link": net.links}

    def one(part: str) -> str:
        tag, _, rest = part.partition(":")
        prefix = ""
        if tag == "derate":
            prefix, (tag, _, rest) = "derated ", rest.partition(":")
        table = tables.get(tag)
        if table is None or rest not in table.index or "name" not in table.columns:
            return part
        name = str(table.at[rest, "name"]).strip()
        return prefix + (name or rest)

    return {str(i): " + ".join(one(p) for p in str(i).split("+")) for i in ids}


def _impact_series(doc: Mapping[str, Any]) -> tuple[pd.Series, str]:
    if isinstance(doc.get("impact"), Mapping):
        return pd.Series(doc["impact"], dtype=float), str(doc.get("impact_label") or "Impact")
    for key in ("scenarios", "failures", "worst"):
        recs = doc.get(key)
        if isinstance(recs, list) and recs and isinstance(recs[0], Mapping):
            df = pd.DataFrame(recs)
            num = [c for w in ("impact", "unmet", "lost", "unserved") for c in df.columns
                   if w in str(c) and pd.api.types.is_numeric_dtype(df[c])]
            name = next((c for c in ("name", "id", "scenario", "srlg", "failed") if c in df.columns), None)
            if num and name:
                labels = df[name].map(lambda v: ";".join(map(str, v)) if isinstance(v, list) else str(v))
                return pd.Series(df[num[0]].to_numpy(float), index=labels), style._pretty(str(num[0]))
    lv = _map_obj(doc).get("link_values") or {}
    for name, values in lv.items():
        if str(name).startswith("impact") and isinstance(values, Mapping):
            return pd.Series(values, dtype=float), style._pretty(str(name))
    raise ValidationError(Problem("result has no failure impact (impact, scenarios[].*impact*/lost/unserved, "
                                  "or map.link_values.impact*)", field="result"))


def _cost_table(doc: Mapping[str, Any]) -> pd.DataFrame:
    sites = doc.get("sites")
    if isinstance(sites, list) and sites and isinstance(sites[0], Mapping):
        df = pd.DataFrame(sites)
        label = df["name"].where(df["name"].astype(str) != "", df["id"]) if "name" in df.columns else df.get("id")
        cols = [c for c in ("capex_usd", "opex_usd") if c in df.columns] or [
            c for c in df.columns if str(c).endswith("_usd") and "per" not in str(c)]
        if cols:
            out = df[cols].apply(pd.to_numeric, errors="coerce")
            out.index = pd.Index(label.astype(str) if label is not None else df.index.astype(str))
            return out.rename(columns={"capex_usd": "Capex (USD)", "opex_usd": "Opex (USD)"})
    totals = {k: doc[k] for k in ("capex_usd", "opex_usd") if isinstance(doc.get(k), int | float)}
    if totals:
        return pd.DataFrame([totals], index=["total"])
    raise ValidationError(Problem("result has no cost figures (sites[].capex_usd/opex_usd or capex_usd/opex_usd)",
                                  field="result"))
