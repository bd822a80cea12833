"""``backbone export``: write a scenario's sites and links as GeoJSON (QGIS, kepler.gl, geojson.io)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from api.cli.common import SCENARIO_HELP, emit_json, err_console, handle_errors, load

ScenarioArg = Annotated[Optional[Path], typer.Argument(help=SCENARIO_HELP, show_default=False)]  # noqa: UP045
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout only.")]

GEOJSON_SUFFIXES = (".geojson", ".json")


def register(app: typer.Typer) -> None:
    """Add ``export`` to ``app``."""
    app.command("export")(export)


@handle_errors
def export(
    scenario: ScenarioArg = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Destination .geojson file.")] = Path("backbone.geojson"),
    result: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--result", help="A result summary JSON whose \"map\" object adds per-link / per-site values.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Export sites (Points) and links (LineStrings, split at the antimeridian) as one GeoJSON file."""
    from backbone.errors import Problem, ValidationError
    from backbone.io.geojson import save_geojson

    if out.suffix.lower() not in GEOJSON_SUFFIXES:
        raise ValidationError(Problem(f"--out must end in {' or '.join(GEOJSON_SUFFIXES)}", file=str(out)))
    link_values, site_values = _map_values(result) if result is not None else (None, None)
    net = load(scenario)
    path = save_geojson(net, out, link_values=link_values, site_values=site_values)
    report = {"out": str(path), "sites": len(net.sites), "links": len(net.links),
              "link_values": sorted(link_values or {}), "site_values": sorted(site_values or {})}
    if json_out:
        emit_json(report)
    else:
        err_console.print(f"wrote {report['sites']:,} sites and {report['links']:,} links to {path}", highlight=False)


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
