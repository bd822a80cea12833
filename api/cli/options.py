"""CLI options generated from a task's pydantic options model: one flag per field, so a command declares only
what is special to it (its scenario argument, files, output) and the flags can never drift from the model.

Each field of a simple type (``bool``, ``int``, ``float``, ``str``, a ``Literal``, each optionally ``None``)
becomes ``--field-name`` with the field's default and its ``Field(description=...)`` as help; a ``Literal`` is a
choice; a ``bool`` is ``--x/--no-x``; a command may add short flags (``-k``). Fields of other types (lists,
mappings, nested models) are left to an options file. Only the flags given on the command line reach the task:
the others keep the model's defaults (or an options file's values).

Example
-------
>>> @options_command(TEOptions, flags={"k_paths": ("-k",)})     # doctest: +SKIP
... def te(scenario: ScenarioArg = None, *, options: dict[str, Any]) -> None:
...     run_with_progress("te", load(scenario), options, None)
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, Union

import typer

from backbone.api.cli.common import OPTION_FLAGS

F = TypeVar("F", bound=Callable[..., Any])

SIMPLE_TYPES: tuple[type, ...] = (bool, int, float, str)
"""Python types a generated flag takes (besides ``Literal`` choices)."""


@dataclass(frozen=True)
class GeneratedOption:
    """How one model field appears on the command line.

    Attributes
    ----------
    field
        The option's own name (the model's field name).
    param
        The ``inspect.Parameter`` typer reads (default: a ``typer.Option`` with the flag names and help).
    flags
        The flag names, the field's own first (``--k-paths``, then a command's short flag such as ``-k``).
    choices
        For a ``Literal`` field: the command-line spelling -> the model's value (``"24"`` -> ``24``).
    """

    field: str
    param: inspect.Parameter
    flags: tuple[str, ...]
    choices: Mapping[str, Any] | None = None


def flag_name(name: str) -> str:
    """``k_paths`` -> ``--k-paths``."""
    return "--" + name.replace("_", "-")


def simple_type(annotation: Any) -> tuple[Any, bool] | None:
    """(the flag's type, whether None is allowed) for a field type a flag can carry, else None.

    ``Literal[...]`` comes back as itself; ``X | None`` as (X, True); anything else (lists, dicts, models, unions
    of several types) as None.
    """
    origin = typing.get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1 or len(args) == len(typing.get_args(annotation)):
            return None
        inner = simple_type(args[0])
        return None if inner is None else (inner[0], True)
    if origin is Literal:
        return annotation, False
    if origin is typing.Annotated:
        return simple_type(typing.get_args(annotation)[0])
    if annotation in SIMPLE_TYPES:
        return annotation, False
    return None


def model_options(model: Any, *, exclude: Iterable[str] = (), flags: Mapping[str, Sequence[str]] | None = None,
                  help: Mapping[str, str] | None = None, defaults: Mapping[str, Any] | None = None,
                  ) -> list[GeneratedOption]:
    """One typer option per simple field of ``model`` (see the module docstring), in the model's field order.

    Parameters
    ----------
    model
        A pydantic options model (``TEOptions``, ``PlaceOptions``, ...).
    exclude
        Fields left off the command line (the command declares them itself, or they are API-only).
    flags
        Extra flag names per field (``{"k_paths": ("-k",)}``).
    help
        Help text per field where the CLI says it better than the field's description.
    defaults
        The default shown per field where the command's differs from the model's (e.g. a stage default).
    """
    from pydantic_core import PydanticUndefined

    skip = set(exclude)
    out: list[GeneratedOption] = []
    for name, info in model.model_fields.items():
        kind = simple_type(info.annotation)
        if name in skip or kind is None or info.alias:
            continue
        annotation, optional = kind
        if defaults and name in defaults:
            default = defaults[name]
        elif info.default is not PydanticUndefined:
            default = info.default
        else:
            continue  # required or built by a factory: an options file sets it
        names = [flag_name(name), *(flags or {}).get(name, ())]
        text = (help or {}).get(name) or info.description or ""
        choices: dict[str, Any] | None = None
        option_type: Any = annotation
        if typing.get_origin(annotation) is Literal:  # a choice, spelled as text on the command line
            choices = {str(v): v for v in typing.get_args(annotation)}
            option_type = Literal.__getitem__(tuple(choices))
            default = None if default is None else str(default)
        if option_type is bool and not optional:
            decls = [f"{n}/--no-{n[2:]}" if n.startswith("--") else n for n in names]
            option = typer.Option(default, *decls, help=text)
        else:
            option = typer.Option(default, *names, help=text, show_default=default is not None)
        hint = typing.Optional[option_type] if optional or default is None else option_type  # noqa: UP045
        param = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=hint)
        out.append(GeneratedOption(name, param, tuple(names), choices))
    return out


CONTEXT_PARAM = "cli_context"
"""The generated command's extra parameter typer fills with the running command's context."""


def given_on_command_line(context: Any, name: str) -> bool:
    """Whether parameter ``name`` of the running command was given (not left at its default); True without a
    context (a direct call passes what it means)."""
    if context is None:
        return True
    source = context.get_parameter_source(name)
    return source is not None and getattr(source, "name", "") not in ("DEFAULT", "DEFAULT_MAP")


def options_command(model: Any, *, exclude: Iterable[str] = (), flags: Mapping[str, Sequence[str]] | None = None,
                    help: Mapping[str, str] | None = None, defaults: Mapping[str, Any] | None = None,
                    ) -> Callable[[F], F]:
    """Decorate a command so its flags are generated from ``model`` (:func:`model_options`).

    The command declares its own parameters (the scenario, files, ``--json``, ``--out``, and any option it
    treats specially: those fields are not generated) and a keyword ``options: dict``, which receives the
    options given on the command line by their own names (Literal choices converted back to the model's
    values). Apply it under ``app.command`` and over ``handle_errors``.
    """
    def decorate(func: F) -> F:
        own = inspect.signature(func, eval_str=True)  # the command module's names (ScenarioArg) resolved
        if "options" not in own.parameters:
            raise TypeError(f"{func.__name__} needs a keyword parameter 'options' to receive the generated options")
        mine = [p for n, p in own.parameters.items() if n != "options"]
        generated = model_options(model, exclude={*exclude, *(p.name for p in mine)}, flags=flags, help=help,
                                  defaults=defaults)
        by_name = {g.field: g for g in generated}

        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            context = kwargs.pop(CONTEXT_PARAM, None)
            options: dict[str, Any] = {}
            for name, g in by_name.items():
                value = kwargs.pop(name, None)
                if not given_on_command_line(context, name):
                    continue
                if g.choices is not None and value is not None:
                    value = g.choices[str(value)]
                options[name] = value
            token = OPTION_FLAGS.set({name: g.flags[0] for name, g in by_name.items()})
            try:
                return func(**kwargs, options=options)
            finally:
                OPTION_FLAGS.reset(token)

        own_params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if p.kind is p.POSITIONAL_OR_KEYWORD else p
                      for p in mine]
        # the command's first parameter (its scenario argument), the model's options, then the command's others
        params = own_params[:1] + [g.param for g in generated] + own_params[1:] + [
            inspect.Parameter(CONTEXT_PARAM, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)]
        command.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer reads the generated signature, not the function's own
        command.generated_options = generated  # type: ignore[attr-defined]
        return command  # type: ignore[return-value]

    return decorate
