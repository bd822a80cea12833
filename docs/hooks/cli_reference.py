"""MkDocs hook: the CLI reference page (``reference/cli.md``), generated from the ``backbone`` command itself
when the site is built, so every command, argument, option, default and help text is the one the CLI has."""

from __future__ import annotations

from typing import Any

PAGE = "reference/cli.md"


def _default(param: Any) -> str:
    value = param.default
    if value is None or callable(value) or value == () or value == "":
        return ""
    return f"`{value}`"


def _param_row(param: Any, ctx: Any) -> str:
    names = ", ".join(f"`{n}`" for n in [*param.opts, *getattr(param, "secondary_opts", [])])
    kind = param.display_type(ctx).strip("<>").replace("|", " \\| ")
    if param.param_type_name == "argument":
        kind = f"argument ({kind})"
    help_text = " ".join((getattr(param, "help", None) or "").split()).replace("|", "\\|")
    required = " (required)" if param.required else ""
    return f"| {names} | {kind}{required} | {_default(param)} | {help_text} |"


def _command_section(path: str, cmd: Any, depth: int) -> list[str]:
    import typer

    ctx = typer.Context(cmd)
    lines = [f"{'#' * min(depth, 4)} `{path}`", ""]
    text = (cmd.help or "").replace("``", "`").strip()
    if text:
        lines += [text, ""]
    params = [p for p in cmd.params if p.name != "help" and not getattr(p, "hidden", False)]
    if params:
        lines += ["| name | type | default | help |", "|---|---|---|---|", *(_param_row(p, ctx) for p in params), ""]
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _command_section(f"{path} {name}", sub, depth + 1)
    return lines


def cli_reference_markdown() -> str:
    """The whole CLI reference as Markdown: one section per command, one table row per parameter."""
    import typer

    from backbone.api.cli.main import app

    root = typer.main.get_command(app)
    head = ["# CLI reference", "",
            "Generated from the `backbone` command when this site is built (`docs/hooks/cli_reference.py`); "
            "`backbone COMMAND --help` prints the same. Exit codes and the options' meaning: "
            "[Command line](../guide/cli.md).", ""]
    return "\n".join(head + _command_section("backbone", root, 2)) + "\n"


def on_files(files: Any, config: Any) -> Any:
    """Add the generated page to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=cli_reference_markdown()))
    return files
