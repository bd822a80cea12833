"""Help text as a terminal shows it: the docstrings and option descriptions typer prints carry reStructuredText
markup (``--verify``, :func:`~backbone.solver.te.solve_te`) written for the API docs; :func:`plain_help` turns it
into plain text and :func:`plain_app_help` applies it to every command, group and option of an app."""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any

import typer

__all__ = ["plain_app_help", "plain_help"]

_ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|obj|exc|ref|doc|const):`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``(.+?)``", re.S)


def plain_help(text: str | None) -> str | None:
    """``text`` without reStructuredText markup: ````x```` -> ``x``, ``:func:`~a.b.c``` -> ``c`` (the last part
    when the name starts with ``~``, else the whole name), so ``--help`` never shows raw backticks."""
    if not text:
        return text

    def role(m: re.Match[str]) -> str:
        name = m.group(1).strip()
        return name.rsplit(".", 1)[-1] if m.group(0).split("`", 1)[1].startswith("~") else name

    return _LITERAL.sub(r"\1", _ROLE.sub(role, text))


def _plain_params(callback: Any) -> None:
    """Make the help of each typer option/argument of ``callback`` plain (in place)."""
    try:
        sig = inspect.signature(callback)
    except (TypeError, ValueError):
        return
    for p in sig.parameters.values():
        extras = typing.get_args(p.annotation)[1:] if typing.get_origin(p.annotation) is typing.Annotated else ()
        infos = [p.default, *extras]
        for info in infos:
            if isinstance(info, typer.models.ParameterInfo) and info.help:
                info.help = plain_help(info.help)


def plain_app_help(app: typer.Typer) -> None:
    """Make every command's and group's help, and every option's, plain text (in place), sub-apps included."""
    if app.info.help:
        app.info.help = plain_help(app.info.help)
    for cmd in app.registered_commands:
        cmd.help = plain_help(cmd.help or (inspect.getdoc(cmd.callback) if cmd.callback else None))
        if cmd.callback is not None:
            _plain_params(cmd.callback)
    for group in app.registered_groups:
        if group.help:
            group.help = plain_help(group.help)
        if group.typer_instance is not None:
            plain_app_help(group.typer_instance)
    if app.registered_callback is not None and app.registered_callback.callback is not None:
        _plain_params(app.registered_callback.callback)
