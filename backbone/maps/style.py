"""Palette, slide sizes and how per-link values become colours (shared by every map format)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError

# ---------------------------------------------------------------------- palette
OCEAN = "#dde9f1"
LAND = "#f4f2ec"
BORDER = "#cdc8bd"
COAST = "#b3b9bd"
GRATICULE = "#cbdbe6"
OUTLINE = "#a9bccb"
BACKGROUND = "#ffffff"
TEXT = "#1f2933"
SUBTEXT = "#52606d"
CASING = "#ffffff"
NO_VALUE = "#8d99a6"
FAILED = "#c1121f"
REROUTED = "#4cc9f0"
ASSIGNMENT = "#7b61ff"
ADDED = "#f77f00"
"""GPUs added at a site: an orange ring."""
REMOVED = "#1d4e89"
"""GPUs removed from a site (a diff map's losses): a dashed blue ring, the diverging scale's "less"."""
CANDIDATE = "#9aa5b1"
"""Candidate routes not built: dotted grey."""
BUILT = "#2dc653"
"""Built candidates (new routes of a plan): a green glow under the link."""
UPGRADED = "#9d4edd"
"""Upgraded links (modules added by a plan): a dashed violet band under the link."""

WORKLOAD_CLASS_COLORS: dict[str, str] = {"training-sync": "#e63946", "checkpoint": "#f4a100", "dataset": "#2b9348",
                                         "replication": "#8338ec"}
"""Workload flow arcs by traffic class (the data-gravity map)."""
TRAINING_SITE = "#e63946"
"""Sites running training jobs: a red ring, labelled with the jobs' GPUs."""
DATASET_HOME = "#1b4332"
"""Dataset homes: a dark green square beside the site (hollow for a replica the placement adds)."""

KIND_COLORS: dict[str, str] = {"terrestrial": "#3d5a80", "submarine": "#0096c7"}
"""Link colour by kind when ``color_by="kind"``."""

SITE_STYLES: dict[str, dict[str, str]] = {
    "datacenter": {"color": "#3c1874", "marker": "o", "label": "Data centre"},
    "landing": {"color": "#0b6e4f", "marker": "D", "label": "Cable landing"},
    "pop": {"color": "#52606d", "marker": "s", "label": "PoP"},
}
"""Site colour and marker by role."""

UTILISATION_STOPS = ("#2a9d8f", "#8ab17d", "#e9c46a", "#f4a261", "#e76f51", "#b5179e")
"""Green -> yellow -> red over 0-100 % utilisation."""
OVERLOAD = "#5a189a"
"""Colour of links above 100 % utilisation (distinct from the ramp)."""
IMPACT_STOPS = ("#fde4c4", "#f6bd60", "#e76f51", "#9d0208", "#370617")
DIVERGING_STOPS = ("#1d4e89", "#6a9fd6", "#eef0f2", "#f2a65a", "#c1121f")
SEQUENTIAL_STOPS = ("#d8f3dc", "#74c69d", "#2d6a4f", "#081c15")

FORMATS = ("png", "svg", "pdf", "html", "geojson", "kml")
"""Output formats of :func:`backbone.maps.export_map`."""

SLIDE_WIDTH_IN = 16.0
"""Figure width in inches; the pixel size sets the DPI, so layouts are identical at every size."""
PRINT_DPI = 300


def parse_size(size: str | tuple[int, int]) -> tuple[int, int]:
    """``"1920x1080"`` -> ``(1920, 1080)``.

    Raises
    ------
    ValidationError
        When the size is not ``WIDTHxHEIGHT`` with 160-8000 pixels a side and an aspect ratio
        between 1:2 and 4:1 (the problem names the ``size`` option).
    """
    if isinstance(size, tuple):
        w, h = size
    else:
        m = re.fullmatch(r"\s*(\d{2,5})\s*[xX×]\s*(\d{2,5})\s*", str(size))
        if not m:
            raise ValidationError(Problem(f"size must be WIDTHxHEIGHT in pixels such as 1920x1080, got {size!r}",
                                          field="size"))
        w, h = int(m.group(1)), int(m.group(2))
    if not (160 <= w <= 8000 and 160 <= h <= 8000) or not 0.5 <= w / h <= 4.0:
        raise ValidationError(Problem(f"size {w}x{h} is out of range (160-8000 px a side, aspect 1:2 to 4:1)",
                                      field="size"))
    return int(w), int(h)


def format_from(out: Path | str | None, fmt: str | None) -> str:
    """The output format: ``fmt`` when given, else the file suffix.

    Raises
    ------
    ValidationError
        When the format is unknown (the problem names ``fmt`` or the file).
    """
    if fmt is None:
        suffix = Path(str(out)).suffix.lower().lstrip(".") if out is not None else ""
        if suffix == "json":
            suffix = "geojson"
        if suffix not in FORMATS:
            raise ValidationError(Problem(
                f"cannot tell the map format from {str(out)!r}: use a suffix among "
                f"{', '.join('.' + f for f in FORMATS)}", field="out"))
        return suffix
    key = fmt.lower().lstrip(".")
    if key not in FORMATS:
        raise ValidationError(Problem(f"unknown map format {fmt!r}; expected one of {', '.join(FORMATS)}",
                                      field="fmt"))
    return key


# ---------------------------------------------------------------------- colour by
@dataclass
class LinkColoring:
    """Colours of every link plus what the legend / colour bar needs.

    Attributes
    ----------
    colors
        One hex colour per link, in ``net.links`` order.
    order
        Draw order (lowest first), so the most important links end up on top.
    mode
        ``kind``, ``utilisation``, ``impact``, ``diverging`` or ``sequential``.
    value_name
        The ``link_values`` key coloured by (empty for ``kind``).
    values
        The values (NaN where a link has none), in link order.
    cmap, norm
        matplotlib colormap and normalisation for the colour bar (None for ``kind``).
    label
        Colour bar label.
    categories
        Legend entries ``{label: colour}`` for categorical colouring.
    """

    colors: list[str]
    order: np.ndarray
    mode: str
    value_name: str = ""
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cmap: object = None
    norm: object = None
    label: str = ""
    categories: dict[str, str] = field(default_factory=dict)
    extend: str = "neither"


def _cmap(name: str, stops: tuple[str, ...]) -> object:
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list(name, list(stops), N=256)


def resolve_color_by(color_by: str, link_values: Mapping[str, pd.Series]) -> tuple[str, str]:
    """Map ``color_by`` to ``(mode, value_name)``.

    ``kind`` colours by link kind; ``utilisation`` by ``link_values["utilisation"]`` (falls back to
    ``kind`` when no utilisation is given); ``impact`` by the first ``link_values`` key starting with
    ``impact``; any other ``link_values`` key by its values (keys starting with ``delta`` get a
    diverging scale centred on 0).

    Raises
    ------
    ValidationError
        When ``color_by`` names no available values (the problem names ``color_by``).
    """
    key = (color_by or "utilisation").strip()
    if key == "kind":
        return "kind", ""
    if key in ("utilisation", "utilization"):
        for name in ("utilisation", "utilization"):
            if name in link_values:
                return "utilisation", name
        return "kind", ""
    if key == "impact":
        for name in link_values:
            if name.startswith("impact"):
                return "impact", name
    elif key in link_values:
        if key.startswith("delta"):
            return "diverging", key
        if key.startswith("impact"):
            return "impact", key
        if "utili" in key:
            return "utilisation", key
        return "sequential", key
    available = ", ".join(["kind", "utilisation", *(k for k in link_values if k not in ("utilisation",))])
    raise ValidationError(Problem(f"cannot colour by {color_by!r}: the result has no such link values "
                                  f"(available: {available})", field="color_by"))


def color_links(links: pd.DataFrame, link_values: Mapping[str, pd.Series], color_by: str) -> LinkColoring:
    """Colour every link for ``color_by`` (see :func:`resolve_color_by`)."""
    from matplotlib.colors import Normalize, TwoSlopeNorm, to_hex

    mode, name = resolve_color_by(color_by, link_values)
    n = len(links)
    if mode == "kind":
        colors = [KIND_COLORS.get(k, NO_VALUE) for k in links["kind"]]
        order = np.argsort((links["kind"] == "submarine").to_numpy() * 1e12 + links["capacity_gbps"].to_numpy(),
                           kind="stable")
        cats = {"Terrestrial fibre": KIND_COLORS["terrestrial"], "Submarine cable": KIND_COLORS["submarine"]}
        present = set(links["kind"])
        cats = {k: c for k, c, kind in zip(cats, cats.values(), ("terrestrial", "submarine"), strict=True)
                if kind in present}
        return LinkColoring(colors, order, "kind", categories=cats)
    values = pd.Series(link_values[name], dtype=float).reindex(links.index).to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    extend = "neither"
    if mode == "utilisation":
        cmap = _cmap("utilisation", UTILISATION_STOPS).with_extremes(over=OVERLOAD)  # type: ignore[attr-defined]
        norm = Normalize(0.0, 1.0)
        extend = "max" if (finite > 1.0 + 1e-9).any() else "neither"
        label = "Link utilisation (peak direction)"
    elif mode == "impact":
        cmap = _cmap("impact", IMPACT_STOPS)
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        norm = Normalize(0.0, top)
        label = _pretty(name)
    elif mode == "diverging":
        cmap = _cmap("diverging", DIVERGING_STOPS)
        span = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0
        norm = TwoSlopeNorm(0.0, -span, span)
        label = _pretty(name)
    else:
        cmap = _cmap("sequential", SEQUENTIAL_STOPS)
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        norm = Normalize(lo, hi if hi > lo else lo + 1.0)
        label = _pretty(name)
    rgba = cmap(norm(np.nan_to_num(values, nan=0.0)))  # type: ignore[operator]
    colors = [to_hex(c) if np.isfinite(v) else NO_VALUE for c, v in zip(rgba, values, strict=True)]
    key = np.where(np.isfinite(values), np.abs(values) if mode == "diverging" else values, -np.inf)
    order = np.argsort(key, kind="stable") if n else np.zeros(0, dtype=int)
    return LinkColoring(colors, order, mode, name, values, cmap, norm, label, extend=extend)


_UNIT_LABELS = {"gbps": "Gbps", "ms": "ms", "km": "km", "usd": "USD", "mw": "MW", "pct": "%"}


def _pretty(name: str) -> str:
    """``impact_lost_gbps`` -> ``Impact lost (Gbps)``."""
    words = name.replace("_", " ").strip().split()
    unit = ""
    if len(words) > 1 and words[-1].lower() in _UNIT_LABELS:
        unit = f" ({_UNIT_LABELS[words.pop().lower()]})"
    text = " ".join(words) + unit
    return text[:1].upper() + text[1:]


def link_widths(capacity_gbps: np.ndarray, lo_pt: float = 0.6, hi_pt: float = 3.6) -> np.ndarray:
    """Line widths in points, log-scaled by capacity between ``lo_pt`` and ``hi_pt``."""
    cap = np.log10(np.clip(np.asarray(capacity_gbps, dtype=float), 1.0, None))
    if cap.size == 0:
        return cap
    span = cap.max() - cap.min()
    t = (cap - cap.min()) / span if span > 0 else np.full(cap.shape, 0.5)
    return lo_pt + (hi_pt - lo_pt) * t


def capacity_legend_values(capacity_gbps: np.ndarray) -> list[float]:
    """Two or three round capacities spanning the range, for the width legend."""
    cap = np.asarray(capacity_gbps, dtype=float)
    cap = cap[np.isfinite(cap) & (cap > 0)]
    if cap.size == 0:
        return []
    lo_cap, hi_cap = float(cap.min()), float(cap.max())
    values = [nice_number(lo_cap)]
    values += [10.0**e for e in range(math.ceil(math.log10(lo_cap)), math.floor(math.log10(hi_cap)) + 1)]
    values.append(float(f"{hi_cap:.2g}"))
    ordered = sorted(set(values))
    kept: list[float] = []
    for v in ordered:
        if not kept or v >= 2.0 * kept[-1]:
            kept.append(v)
        elif v == ordered[-1] and len(kept) > 1:
            kept[-1] = v  # keep the maximum rather than a round value just below it
    if len(kept) > 3:
        kept = [kept[0], kept[len(kept) // 2], kept[-1]]
    return kept


def nice_number(x: float) -> float:
    """``x`` rounded to one significant digit (2345 -> 2000, 0.047 -> 0.05)."""
    if x <= 0 or not math.isfinite(x):
        return x
    e = math.floor(math.log10(x))
    return round(x / 10.0**e) * 10.0**e


def format_gbps(gbps: float) -> str:
    """``400`` -> ``400 Gbps``, ``12000`` -> ``12 Tbps``, ``2.5e6`` -> ``2.5 Pbps``."""
    for unit, scale in (("Pbps", 1e6), ("Tbps", 1e3)):
        if abs(gbps) >= scale:
            return f"{gbps / scale:,.3g} {unit}"
    return f"{gbps:,.3g} Gbps"
