"""Maps and presentation exports: what planners put on a slide.

One entry point, :func:`export_map`, draws a :class:`~backbone.model.Network` plus plain per-link /
per-site values (a result's ``map`` object, see docs/CONTRACTS.md) as PNG, SVG, PDF, a
self-contained interactive HTML page, GeoJSON or KML; :func:`render_map_bytes` returns the bytes
instead of writing a file (the API serves maps from bytes). Charts live in
:mod:`backbone.maps.charts`. This package never imports ``solver``.

Modules: :mod:`~backbone.maps.projection` (views, seam cutting), :mod:`~backbone.maps.basemap`
(Natural Earth), :mod:`~backbone.maps.layers`, :mod:`~backbone.maps.style`,
:mod:`~backbone.maps.static`, :mod:`~backbone.maps.interactive`, :mod:`~backbone.maps.exports`,
:mod:`~backbone.maps.gravity` (the data-gravity layer: workload flows, training sites, dataset homes).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from backbone.maps.projection import REGION_BBOXES, BBox, MapView, make_view
from backbone.maps.style import FORMATS, format_from, parse_size
from backbone.maps.values import MAP_KEYS, MapValues, map_values
from backbone.model import Network

__all__ = ["FORMATS", "REGION_BBOXES", "MapValues", "MapView", "export_map", "format_from", "make_view",
           "map_values", "parse_size", "render_map_bytes", "write_atomic"]

logger = logging.getLogger(__name__)


def render_map_bytes(net: Network, fmt: str, result: Mapping[str, Any] | MapValues | None = None, *,
                     color_by: str = "utilisation", center_lon: float = 0.0, region: str | BBox | None = None,
                     size: str | tuple[int, int] = "1920x1080", title: str | None = None,
                     subtitle: str | None = None, size_by: str = "gpus", labels: bool = True,
                     graticule: bool = True, candidates: bool = True, scale: float = 1.0, **values: Any) -> bytes:
    """Render a map of ``net`` (plus a result's values) and return the file's bytes.

    Parameters
    ----------
    net
        The network to draw.
    fmt
        ``png``, ``svg``, ``pdf``, ``html``, ``geojson`` or ``kml``.
    result
        A result summary with a ``map`` object (or the ``map`` object itself, or
        :class:`MapValues`): ``link_values``, ``site_values``, ``failed_links``, ``assignments``,
        ``built_candidates``, the data-gravity layer's ``workload_flows``, ``training_sites`` and
        ``dataset_homes``; a failure sweep's ``scenarios`` give per-link ``impact_gbps``
        (:func:`backbone.maps.values.impact_by_link`).
    color_by
        ``utilisation`` (falls back to ``kind`` without utilisation values), ``kind``, ``impact``
        (the first ``impact*`` link values: for a failures result, the worst impact in Gbps of the
        failures that take each link down) or any ``link_values`` name (``delta_*`` names get a
        diverging scale).
    center_lon
        Centre longitude of a world view; ``150`` is the Pacific-centred view.
    region
        ``None`` (world), ``na``, ``emea``, ``apac``, ``latam``, ``africa`` or a
        ``"lon_min,lat_min,lon_max,lat_max"`` box.
    size
        Pixel size ``WIDTHxHEIGHT`` (``1920x1080``, ``3840x2160``); sets the aspect for SVG/PDF.
    title, subtitle
        Override the generated title / subtitle (default title: the result's ``map.title`` when
        it has one, else generated from what is drawn).
    size_by
        Site marker area by ``gpus`` or ``mw``.
    labels, graticule
        Draw site labels / the graticule (static maps).
    candidates
        Draw the network's candidate routes (not built) dotted grey; built candidates
        (``built_candidates``) are highlighted either way.
    scale
        Static maps: text, lines, markers and legend at this multiple of their size against the map (``2`` for a map
        shown small on a slide, legible when projected; :class:`~backbone.maps.static.StaticOptions`).
    **values
        Explicit ``link_values``, ``site_values``, ``failed_links``, ``assignments``,
        ``built_candidates``, ``workload_flows``, ``training_sites``, ``dataset_homes`` (override the result's).

    Raises
    ------
    ValidationError
        Unknown format, bad size, region, ``color_by`` or values (the problem names the option).

    Example
    -------
    >>> png = render_map_bytes(net, "png", {"map": {"link_values": {"utilisation": {"tat-1": 0.8}}}})  # doctest: +SKIP
    """
    from backbone.errors import Problem, ValidationError

    fmt = format_from(None, fmt)
    unknown = sorted(set(values) - set(MAP_KEYS))
    if unknown:
        raise ValidationError([Problem(f"unknown map option {k!r}", field=k) for k in unknown])
    mv = map_values(net, result, **values)
    inner = result.get("map") if isinstance(result, Mapping) else None
    own_values = inner.get("link_values") if isinstance(inner, Mapping) else None
    own: Mapping[str, Any] = own_values if isinstance(own_values, Mapping) else {}
    derived_impact = (color_by == "impact" and "impact_gbps" in mv.link_values
                      and not any(str(k).startswith("impact") for k in own) and "link_values" not in values)
    if derived_impact and "failed_links" not in values:
        # per-link impact over every scenario: the result's one "worst" failed link would hide its own colour
        mv = replace(mv, failed_links=())
    if title is None and isinstance(inner, Mapping) and isinstance(inner.get("title"), str) and not derived_impact:
        title = inner["title"]  # a result may title its own map (failure sweeps do)
    pixels = parse_size(size)
    if not 0.25 <= float(scale) <= 8.0:
        raise ValidationError(Problem(f"must be from 0.25 to 8, got {scale!r}", field="scale"))
    if fmt in ("geojson", "kml"):
        from backbone.maps import exports

        if fmt == "kml":
            return exports.kml_bytes(net, mv, color_by=color_by, title=title, candidates=candidates)
        return exports.geojson_bytes(net, mv, candidates=candidates)
    if fmt == "html":
        from backbone.maps.interactive import render_html

        return render_html(net, mv, color_by=color_by, center_lon=center_lon, region=region, title=title,
                           subtitle=subtitle, size_by=size_by, candidates=candidates).encode("utf-8")
    from backbone.maps.static import StaticOptions, render_static

    view = make_view(center_lon, region)
    opts = StaticOptions(color_by=color_by, size=pixels, title=title, subtitle=subtitle, size_by=size_by,
                         labels=labels, graticule=graticule, candidates=candidates, scale=float(scale))
    return render_static(net, mv, view, fmt, opts)


def export_map(net: Network, out: Path | str, fmt: str | None = None,
               result: Mapping[str, Any] | MapValues | None = None, *, color_by: str = "utilisation",
               center_lon: float = 0.0, region: str | BBox | None = None, size: str | tuple[int, int] = "1920x1080",
               title: str | None = None, **options: Any) -> Path:
    """Render a map and write it atomically to ``out`` (format from ``fmt`` or the suffix).

    Parameters are those of :func:`render_map_bytes`; the file is written to a temporary file in
    the same folder and renamed into place, so readers never see half a map.

    Returns
    -------
    Path
        The written file.

    Raises
    ------
    ValidationError
        Unknown suffix / format, bad size, region, ``color_by`` or values; nothing is written.

    Example
    -------
    >>> export_map(load_scenario(), "docs/img/pacific.png", center_lon=150)  # doctest: +SKIP
    PosixPath('docs/img/pacific.png')
    """
    out = Path(out)
    kind = format_from(out, fmt)
    data = render_map_bytes(net, kind, result, color_by=color_by, center_lon=center_lon, region=region, size=size,
                            title=title, **options)
    write_atomic(out, data)
    logger.info("wrote %s map %s (%d bytes)", kind, out, len(data))
    return out


def write_atomic(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`backbone.artifacts.write_bytes_atomic`)."""
    from backbone.artifacts import write_bytes_atomic

    return write_bytes_atomic(path, data)
