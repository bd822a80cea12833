"""The ``backbone`` console command: registers every command module.

Command modules import heavy libraries inside their functions so ``backbone info`` starts fast; the planning
commands, whose flags come from the solver's options models, are registered only when they run (or for
``--help``).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer


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

COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "backbone.api.cli.model_cmds": ("info", "validate", "route"),
    "backbone.api.cli.demand_cmds": ("demand",),
    "backbone.api.cli.map_cmds": ("map", "chart"),
    "backbone.api.cli.export_cmds": ("export", "convert"),  # GeoJSON export, importers to canonical
    "backbone.api.cli.te_cmds": ("te",),
    "backbone.api.cli.place_cmds": ("place",),
    "backbone.api.cli.failures_cmds": ("failures",),
    "backbone.api.cli.design_cmds": ("design",),
    "backbone.api.cli.server_cmds": ("serve", "token", "db"),
    "backbone.api.cli.worker_cmds": ("worker",),
    "backbone.api.cli.plan_cmds": ("plan",),
    "backbone.api.cli.roadmap_cmds": ("roadmap",),
    "backbone.api.cli.calibrate_cmds": ("calibrate",),
    "backbone.api.cli.compare_cmds": ("diff", "deck"),
    "backbone.api.cli.workload_cmds": ("workloads",),
}
"""Each module has ``register(app)`` adding the commands listed; add new command groups here. The planning
commands' flags are generated from their options models, which import the solver: :func:`run` registers only
the module of the command being run, so ``backbone info`` does not pay for them."""


def build_app(command: str | None = None) -> typer.Typer:
    """The ``backbone`` application with every command, or only the module holding ``command`` (when it is
    one of :data:`COMMAND_MODULES`' commands)."""
    app = typer.Typer(
        name="backbone",
        help="Plan a global AI backbone: where GPUs go, how traffic flows, what breaks, what to buy.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    modules = [m for m, names in COMMAND_MODULES.items() if command in names] or list(COMMAND_MODULES)
    for name in modules:  # every listed module ships with the package: a missing one is an error, not skipped
        importlib.import_module(name).register(app)
    app.callback()(_main)
    from backbone.api.cli.help_text import plain_app_help

    plain_app_help(app)  # --help shows plain text, not the docstrings' reStructuredText markup
    return app


def _print_version(value: bool) -> None:
    if value:
        from backbone import __version__

        typer.echo(f"backbone {__version__}")
        raise typer.Exit(0)


def _main(version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                       callback=_print_version, is_eager=True)) -> None:
    """Plan a global AI backbone: where GPUs go, how traffic flows, what breaks, what to buy."""


def __getattr__(name: str) -> Any:
    """``app``: the application with every command, built on first use (tests and ``typer`` tooling)."""
    if name == "app":
        built = build_app()
        globals()["app"] = built
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run() -> None:
    """Console-script entry point: builds only the command being run (every command for ``--help``)."""
    first = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    build_app(first)()
