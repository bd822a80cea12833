"""``backbone export`` (sites and links as GeoJSON for QGIS, kepler.gl, geojson.io) and
``backbone convert`` (a foreign topology file to a canonical scenario, with the importers' options)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    JsonOpt,
    ScenarioArg,
    emit_json,
    err_console,
    handle_errors,
    load,
)

GEOJSON_SUFFIXES = (".geojson", ".json")


def register(app: typer.Typer) -> None:
    """Add ``export`` and ``convert`` to ``app``."""
    app.command("export")(export)
    app.command("convert")(convert)


@handle_errors
def export(
    scenario: ScenarioArg = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Destination .geojson file.")] = Path("backbone.geojson"),
    result: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--result", help="A result summary JSON whose \"map\" object adds per-link / per-site values.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Export sites (Points), links and candidate routes (LineStrings, split at the antimeridian; candidates
    have feature_type "candidate") as one GeoJSON file."""
    from backbone.errors import Problem, ValidationError
    from backbone.io.geojson import save_geojson

    if out.suffix.lower() not in GEOJSON_SUFFIXES:
        raise ValidationError(Problem(f"--out must end in {' or '.join(GEOJSON_SUFFIXES)}", file=str(out)))
    link_values, site_values = _map_values(result) if result is not None else (None, None)
    net = load(scenario)
    path = save_geojson(net, out, link_values=link_values, site_values=site_values)
    report = {"out": str(path), "sites": len(net.sites), "links": len(net.links), "candidates": len(net.candidates),
              "link_values": sorted(link_values or {}), "site_values": sorted(site_values or {})}
    if json_out:
        emit_json(report)
    else:
        from backbone.serialize import count_text

        err_console.print(f"wrote {count_text(report['sites'], 'site')} and {count_text(report['links'], 'link')} to "
                          f"{path}", highlight=False, soft_wrap=True)


def _map_values(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``link_values`` and ``site_values`` of a result summary's ``"map"`` object."""
    from backbone.errors import NotFoundError, Problem, ValidationError

    if not path.exists():
        raise NotFoundError(f"{path}: no such file")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(Problem(f"not valid JSON: {exc}", file=str(path))) from None
    found = doc.get("map") if isinstance(doc, dict) else None
    if found is None and isinstance(doc, dict) and isinstance(doc.get("summary"), dict):
        found = doc["summary"].get("map")
    if not isinstance(found, dict):
        raise ValidationError(Problem("no \"map\" object (expected a result summary)", file=str(path), field="map"))
    link_values, site_values = found.get("link_values") or {}, found.get("site_values") or {}
    if not isinstance(link_values, dict) or not isinstance(site_values, dict):
        raise ValidationError(Problem("map.link_values and map.site_values must be objects", file=str(path),
                                      field="map"))
    return link_values, site_values


@handle_errors
def convert(
    source: Annotated[Path, typer.Argument(help="GraphML, node-link JSON, SNDlib .txt or any scenario file.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Destination scenario folder, or a .json file.")],
    drop_uncoordinated: Annotated[bool, typer.Option(
        "--drop-uncoordinated", help="GraphML: drop nodes without coordinates (and their edges).")] = False,
    allow_missing_coordinates: Annotated[bool, typer.Option(
        "--allow-missing-coordinates",
        help="node-link: place networks without lon/lat on the documented made-up layout.")] = False,
    collapse_waypoints: Annotated[bool, typer.Option(
        "--collapse-waypoints", help="node-link: fold TopoHub cable waypoint nodes into link geometry.")] = False,
    default_capacity_gbps: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--default-capacity-gbps", help="Capacity of links whose file states none (default 100).")] = None,
    traffic_matrix: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--traffic-matrix", help="A src,dst,demand CSV (Teal) to use as the demands.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing destination.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Convert a topology file into a canonical scenario (folder of CSVs, or canonical JSON)."""
    from backbone.errors import NotFoundError, Problem, ValidationError
    from backbone.io import detect_format, load_scenario, save_scenario

    if not source.exists():
        raise NotFoundError(f"{source}: no such file or folder")
    if out.exists() and not overwrite:
        raise ValidationError(Problem("destination exists (use --overwrite to replace it)", file=str(out)))
    fmt = detect_format(source)
    options: dict[str, Any] = {}
    if default_capacity_gbps is not None:
        if not default_capacity_gbps > 0:
            raise ValidationError(Problem("--default-capacity-gbps must be > 0", field="default_capacity_gbps"))
        options["default_capacity_gbps"] = default_capacity_gbps
    if fmt == "graphml":
        from backbone.io.graphml import load_graphml

        net = load_graphml(source, drop_uncoordinated=drop_uncoordinated, **options)
    elif fmt == "node-link":
        from backbone.io.nodelink import load_node_link

        net = load_node_link(source, allow_missing_coordinates=allow_missing_coordinates,
                             collapse_waypoints=collapse_waypoints, **options)
    else:
        flags = [name for name, on in (("--drop-uncoordinated", drop_uncoordinated),
                                       ("--allow-missing-coordinates", allow_missing_coordinates),
                                       ("--collapse-waypoints", collapse_waypoints),
                                       ("--default-capacity-gbps", default_capacity_gbps is not None)) if on]
        if flags:
            raise ValidationError(Problem(f"{', '.join(flags)} only apply to GraphML and node-link files, "
                                          f"not {fmt}", file=str(source)))
        net = load_scenario(source)
    if traffic_matrix is not None:
        from backbone.io.nodelink import load_traffic_matrix_csv

        net = net.copy_with(demands=load_traffic_matrix_csv(traffic_matrix, net))
    path = save_scenario(net, out)
    s = net.summary()
    report = {"source": str(source), "format": fmt, "out": str(path), "sites": s["sites"], "links": s["links"],
              "demands": s["demands"], "candidates": s["candidates"], "import": net.meta.get("import", {})}
    if json_out:
        emit_json(report)
    else:
        from backbone.serialize import count_text

        cands = f", {count_text(s['candidates'], 'candidate')}" if s["candidates"] else ""
        err_console.print(f"wrote {path}: {count_text(s['sites'], 'site')}, {count_text(s['links'], 'link')}, "
                          f"{count_text(s['demands'], 'demand')}{cands} (from {fmt})", highlight=False, soft_wrap=True)
