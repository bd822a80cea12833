"""The ``backbone`` console command: registers every command module.

Command modules import heavy libraries inside their functions so ``backbone --help`` and
``backbone info`` start fast.
"""

from __future__ import annotations

import importlib
import importlib.util

import typer

app = typer.Typer(
    name="backbone",
    help="Plan a global AI backbone: where GPUs go, how traffic flows, what breaks, what to buy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

COMMAND_MODULES = (
    "backbone.api.cli.model_cmds",  # info, validate, route
    "backbone.api.cli.demand_cmds",  # demand generation
    "backbone.api.cli.map_cmds",  # map, chart
    "backbone.api.cli.export_cmds",  # export (GeoJSON), convert (importers to canonical)
    "backbone.api.cli.te_cmds",  # te
    "backbone.api.cli.place_cmds",  # place
    "backbone.api.cli.failures_cmds",  # failures
    "backbone.api.cli.design_cmds",  # design
    "backbone.api.cli.server_cmds",  # serve, token, db
    "backbone.api.cli.plan_cmds",  # plan
    "backbone.api.cli.calibrate_cmds",  # calibrate
)
"""Each module has ``register(app)``; add new command groups here."""

for _name in COMMAND_MODULES:
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name).register(app)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        from backbone import __version__

        typer.echo(__version__)
        raise typer.Exit(0)


def run() -> None:
    """Console-script entry point."""
    app()
