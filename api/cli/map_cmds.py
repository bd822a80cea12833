"""``backbone map`` and ``backbone chart``: maps and charts for slides, print and Google Earth."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    SCENARIO_HELP,
    JsonOpt,
    ScenarioArg,
    emit_json,
    err_console,
    handle_errors,
    load,
)

ResultOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--result", "-r", help="Result JSON whose 'map' object (or top-level keys) supplies the values to draw.",
    show_default=False)]


def register(app: typer.Typer) -> None:
    """Add the map commands to ``app``."""
    app.command("map")(map_command)
    app.command("chart")(chart_command)


def read_result(path: Path | None) -> dict[str, Any] | None:
    """Load a result JSON file (``None`` when no path is given).

    Raises
    ------
    NotFoundError
        The file does not exist.
    ValidationError
        The file is not a JSON object.
    """
    import json

    from backbone.errors import NotFoundError, Problem, ValidationError

    if path is None:
        return None
    if not path.is_file():
        raise NotFoundError(f"result file not found: {path}")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(Problem(f"not valid JSON: {exc}", file=str(path), field="result")) from None
    if not isinstance(doc, dict):
        raise ValidationError(Problem("result JSON must be an object", file=str(path), field="result"))
    return doc


@handle_errors
def map_command(
    scenario: ScenarioArg = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output file: .png .svg .pdf .html .geojson .kml.")] = Path(
        "map.png"),
    result: ResultOpt = None,
    color_by: Annotated[str, typer.Option(
        "--color-by", help="utilisation | kind | impact | any link value name in the result. 'impact' with a "
                           "'backbone failures' result: per link, the worst impact_gbps of the failures that take "
                           "it down.")] = "utilisation",
    center_lon: Annotated[float, typer.Option("--center-lon", help="Centre longitude (150: Pacific-centred).")] = 0.0,
    region: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--region", help="na | emea | apac | latam | africa | lon_min,lat_min,lon_max,lat_max.",
        show_default=False)] = None,
    size: Annotated[str, typer.Option("--size", help="Pixel size WIDTHxHEIGHT (1920x1080, 3840x2160).")] = "1920x1080",
    title: Annotated[Optional[str], typer.Option("--title", help="Title (default: generated).",  # noqa: UP045
                                                 show_default=False)] = None,
    size_by: Annotated[str, typer.Option("--size-by", help="Site marker area by 'gpus' or 'mw'.")] = "gpus",
    no_labels: Annotated[bool, typer.Option("--no-labels", help="Do not label sites and metros.")] = False,
    graticule: Annotated[bool, typer.Option("--graticule/--no-graticule", help="Draw meridians and parallels.")] = True,
    candidates: Annotated[bool, typer.Option(
        "--candidates/--no-candidates",
        help="Draw the scenario's candidate routes (not built) dotted grey; built candidates named by the result's "
             "map.built_candidates are highlighted either way.")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Draw the network (and a result's values) as a map: PNG/SVG/PDF for slides, interactive HTML,
    GeoJSON or KML. The format follows the suffix of --out."""
    import time

    from backbone.maps import export_map, format_from, make_view, parse_size

    fmt = format_from(out, None)  # check the cheap options before loading anything
    parse_size(size)
    make_view(center_lon, region)
    if size_by not in ("gpus", "mw"):
        from backbone.errors import Problem, ValidationError

        raise ValidationError(Problem(f"size-by must be 'gpus' or 'mw', got {size_by!r}", field="size_by"))
    doc = read_result(result)
    net = load(scenario)
    t0 = time.perf_counter()
    with err_console.status(f"drawing {fmt.upper()} map of {net.name}...", spinner="dots"):
        path = export_map(net, out, result=doc, color_by=color_by, center_lon=center_lon, region=region, size=size,
                          title=title, size_by=size_by, labels=not no_labels, graticule=graticule,
                          candidates=candidates)
    seconds = time.perf_counter() - t0
    n_bytes = path.stat().st_size
    if json_out:
        emit_json({"out": str(path), "format": fmt, "bytes": n_bytes, "seconds": round(seconds, 3)})
    else:
        err_console.print(f"[green]wrote[/] {path} ({fmt}, {n_bytes / 1024:,.0f} kB) in {seconds:.1f} s",
                          highlight=False)


CHART_KINDS = ("utilisation", "latency", "impact", "cost")


@handle_errors
def chart_command(
    kind: Annotated[str, typer.Argument(help="utilisation | latency | impact | cost")],
    result: ResultOpt = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output file: .png or .svg.")] = Path("chart.png"),
    scenario: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--scenario", "-s", help=SCENARIO_HELP + " Used by 'latency', and by 'impact' for site and SRLG names.",
        show_default=False)] = None,
    size: Annotated[str, typer.Option("--size", help="Pixel size WIDTHxHEIGHT.")] = "1600x900",
    title: Annotated[Optional[str], typer.Option("--title", help="Title (default: generated).",  # noqa: UP045
                                                 show_default=False)] = None,
    json_out: JsonOpt = False,
) -> None:
    """Draw a chart: link-utilisation histogram, latency CDF per region pair, failure-impact bars or
    placement cost breakdown. Values come from --result (latency: from the scenario's demands)."""
    from backbone.errors import Problem, ValidationError
    from backbone.maps import charts, parse_size, write_atomic

    if kind not in CHART_KINDS:
        raise ValidationError(Problem(f"unknown chart {kind!r}; expected one of {', '.join(CHART_KINDS)}",
                                      field="kind"))
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise ValidationError(Problem(f"chart output must end in .png, .svg or .pdf, got {str(out)!r}", field="out"))
    pixels = parse_size(size)
    doc = read_result(result)
    net = load(scenario) if kind in ("latency", "impact") or doc is None else None
    data = charts.chart_from_result(kind, doc, net, fmt=fmt, size=pixels, title=title)
    write_atomic(out, data)
    info = {"out": str(out), "kind": kind, "format": fmt, "bytes": len(data)}
    if json_out:
        emit_json(info)
    else:
        err_console.print(f"[green]wrote[/] {out} ({kind} chart, {len(data) / 1024:,.0f} kB)", highlight=False)
