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

def _hide_flag_placeholders() -> None:
    """Help shows ``--verify`` rather than ``--verify <bool>``: flags take no value, so this typer
    version's type column (``<bool>``) is dropped for them (other options keep ``<int>``, ...)."""
    from typer.core import TyperOption

    if getattr(TyperOption.display_type_rich, "_flags_hidden", False):
        return
    original = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: typer.Context) -> str | None:
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return original(self, ctx)

    display_type_rich._flags_hidden = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign,assignment]


_hide_flag_placeholders()

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
    "backbone.api.cli.roadmap_cmds",  # roadmap
    "backbone.api.cli.calibrate_cmds",  # calibrate
)
"""Each module has ``register(app)``; add new command groups here."""

for _name in COMMAND_MODULES:
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name).register(app)


def _print_version(value: bool) -> None:
    if value:
        from backbone import __version__

        typer.echo(f"backbone {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                       callback=_print_version, is_eager=True)) -> None:
    """Plan a global AI backbone: where GPUs go, how traffic flows, what breaks, what to buy."""


def run() -> None:
    """Console-script entry point."""
    app()
