"""``backbone diff`` (what changed between two scenarios, plans or roadmaps) and ``backbone deck`` (the review deck
of a plan or roadmap folder)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from backbone.api.cli.common import emit_json, err_console, handle_errors, out_console
from backbone.api.cli.options import options_command
from backbone.compare.options import DeckOptions, DiffOptions

if TYPE_CHECKING:
    import pandas as pd

    from backbone.compare import DiffResult

EXIT_CHANGED = 1
"""``backbone diff --fail-on-change`` exit code when anything changed."""

SideArg = Annotated[Path, typer.Argument(help="A scenario (folder or file), a plan output folder or a roadmap output "
                                              "folder.", show_default=False)]


def register(app: typer.Typer) -> None:
    """Add ``diff`` and ``deck`` to ``app``."""
    app.command("diff")(diff_command)
    app.command("deck")(deck_command)


def _fmt(value: Any, unit: str = "") -> str:
    from backbone.compare.text import value_text

    return value_text(value, unit)


def _signed(value: Any, unit: str = "") -> str:
    from backbone.compare.text import change_text

    return change_text(value, unit)


def _cell(record: dict[str, Any], column: str, unit: str) -> str:
    if column == "relative_change":
        return _fmt(record[column], "ratio")
    if column.endswith("_usd"):  # money reads in M USD everywhere (backbone.compare.text)
        return (_signed if "delta" in column else _fmt)(record[column], "USD")
    if "delta" in column:
        return _signed(record[column], unit)
    return _fmt(record[column], unit if column in ("before", "after") else "")


def _table(title: str, frame: pd.DataFrame, columns: list[str], rows: int, units: str | None = None,
           caption: str | None = None) -> None:
    from rich.table import Table

    if not len(frame):
        return
    t = Table(title=f"{title} ({len(frame)}{', first ' + str(rows) if len(frame) > rows else ''})",
              title_justify="left", caption=caption, caption_justify="left")
    for c in columns:
        t.add_column(c, justify="right" if c in ("before", "after", "delta", "relative_change") or c.endswith(("_gbps", "_usd")) else "left")
    for record in frame.head(rows).to_dict("records"):
        unit = str(record.get(units, "")) if units else ""
        t.add_row(*[_cell(record, c, unit) for c in columns])
    out_console.print(t)


def print_diff(result: DiffResult, rows: int) -> None:
    """The terminal view: a one-line summary, then each non-empty table, largest change first."""
    c = result.counts()
    out_console.print(f"[bold]{result.before.label}[/] ({result.before.kind}) → [bold]{result.after.label}[/] "
                      f"({result.after.kind}): " + (", ".join(f"{n} {k}" for k, n in c.items() if n) or "no change"),
                      highlight=False)
    for note in result.notes:
        err_console.print(f"  note: {note}", highlight=False)
    from backbone.compare.kpis import RANK_RULE

    _table("KPIs that changed, ranked", result.kpi_changed(), ["kpi", "before", "after", "delta", "relative_change",
                                                                "verdict"], rows, units="unit",
           caption=f"ranked by size of change: {RANK_RULE}; --json and --out keep every KPI")
    _table("Structural changes", result.structure, ["table", "id", "change", "field", "before", "after", "delta",
                                                    "unit"], rows)
    _table("Capacity by cable system", result.capacity_by_cable_system,
           ["cable_system", "capacity_before_gbps", "capacity_after_gbps", "delta_gbps"], rows)
    _table("Capacity by region", result.capacity_by_region,
           ["region", "capacity_before_gbps", "capacity_after_gbps", "delta_gbps"], rows)
    _table("GPUs and MW by region and site", result.placement,
           ["level", "id", "gpus_before", "gpus_after", "gpus_delta", "mw_delta"], rows)
    _table("Failures", result.failures, ["scenario", "change", "impact_before_gbps", "impact_after_gbps",
                                         "impact_delta_gbps"], rows)
    _table("Changeover (commit order)", result.changeover, ["order", "commit", "link", "change", "kind",
                                                            "modules_before", "modules_after", "cost_usd",
                                                            "lead_time_quarters", "lead_time_from"], rows,
           caption="earliest commit first, then the largest cost; Q-N: N quarters before the capacity is needed")


@options_command(DiffOptions)
@handle_errors
def diff_command(
    before: SideArg,
    after: SideArg,
    out: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--out", help="Folder for diff.json and diff_<table>.csv.", show_default=False)] = None,
    map_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--map", help="Also draw the map coloured by change: FILE.png, .svg, .pdf or .html (offline).",
        show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the diff as JSON on stdout only.")] = False,
    *,
    options: dict[str, Any],
) -> None:
    """What changed from BEFORE to AFTER: structural changes (every table), capacity per cable system and region,
    and between two plans (or roadmaps) the KPIs, GPUs per site and region, failures newly survived or broken
    and the changeover list in commit order. Exit 0 (also when something changed), 1 with --fail-on-change when
    anything changed, 2 when an input is missing or not a scenario, plan or roadmap."""
    from backbone.compare import diff
    from backbone.solver.core.options import validate_options

    opts = validate_options(DiffOptions, options)
    result = diff(before, after)
    if out is not None:
        files = result.save(out)
        err_console.print(f"wrote {len(files)} files to {out}", highlight=False)
    if map_file is not None:
        from backbone.compare.diffmap import save_diff_map

        save_diff_map(result, map_file)
        err_console.print(f"map: {map_file}", highlight=False)
    if json_out:
        emit_json(result.to_dict())
    else:
        print_diff(result, opts.rows)
    if opts.fail_on_change and result.changed:
        raise typer.Exit(EXIT_CHANGED)


@options_command(DeckOptions)
@handle_errors
def deck_command(
    folder: Annotated[Path, typer.Argument(help="A plan or roadmap output folder.", show_default=False)],
    after: Annotated[Optional[Path], typer.Argument(  # noqa: UP045
        help="A second folder: the deck presents it and adds a comparison slide of FOLDER -> AFTER, as "
             "'backbone diff FOLDER AFTER' does.", show_default=False)] = None,
    out: Annotated[Path, typer.Option("--out", help="The .pptx file to write.")] = Path("review.pptx"),
    template: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--template", help="A .pptx whose slide master and layouts the deck uses (its own slides are left out).",
        show_default=False)] = None,
    *,
    options: dict[str, Any],
) -> None:
    """Write an editable PowerPoint deck (native charts and tables) from a plan or roadmap output folder: title
    with the headline, the map after the plan, what to buy, worst failures, utilisation, GPUs by region, the
    roadmap timeline, a comparison slide when a second folder is given, and assumptions and caveats."""
    from backbone.review import build_deck
    from backbone.solver.core.options import validate_options

    opts = validate_options(DeckOptions, options)
    main, baseline = (after, folder) if after is not None else (folder, None)
    slides = build_deck(main, out, baseline=baseline, template=template, options=opts)
    err_console.print(f"deck: {out} ({slides} slides)", highlight=False)
