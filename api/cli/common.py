"""Shared CLI plumbing: error handling, JSON output, scenario loading, consoles."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer
from rich.console import Console, ConsoleDimensions

F = TypeVar("F", bound=Callable[..., Any])

PIPE_WIDTH = 1000
"""Line width when output goes to a pipe or a file (and COLUMNS is not set): tables keep every
column whole instead of being cut to rich's 80-column default."""


class CliConsole(Console):
    """A rich console that is only as narrow as a terminal it writes to.

    On a terminal (or with ``COLUMNS`` set) it uses that width; writing to a pipe or a file it
    uses :data:`PIPE_WIDTH`, so ``backbone te > te.txt`` keeps whole table rows.
    """

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        if self._width is not None or self.is_terminal or self._environ.get("COLUMNS", "").isdigit():
            return dims
        return ConsoleDimensions(PIPE_WIDTH, dims.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


err_console = CliConsole(stderr=True)
"""Everything human goes to stderr when --json is set; progress always does."""
out_console = CliConsole()

EXIT_UNEXPECTED = 1
"""Exit codes: 2 bad input (validation, unknown file/id), 3 infeasible (or a best-effort ``partial``
placement, written in full), 4 solver error, 5 ``--verify`` found a violation, 6 the server's storage (data
directory or database) cannot be written, 1 unexpected internal error."""
EXIT_VERIFY = 5
"""Exit code of every command whose ``--verify`` check found a violation."""
EXIT_STORAGE = 6
"""Exit code of ``backbone serve`` (and the token, team and database commands) when the data directory or the
database cannot be written."""

SCENARIO_HELP = "Scenario folder, YAML/JSON, SNDlib .txt, GraphML or node-link JSON (default: shipped global scenario)."

ScenarioArg = Annotated[Optional[Path], typer.Argument(help=SCENARIO_HELP, show_default=False)]  # noqa: UP045
"""The optional scenario argument every command that reads a scenario takes (default: the shipped one)."""

SurviveOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--survive", help="Failure kinds the design survives: srlg, link, srlg,link (every single SRLG and every single "
                      "link, in one design), site or none; default srlg. Sets design.survive (the sweep before the "
                      "design follows it).")]
"""``--survive KIND``: the failure kinds a plan's or roadmap's design survives (``design.survive``)."""

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout only.")]
"""``--json``: machine-readable output on stdout, everything human on stderr."""

FailurePolicyOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--failure-policy", help="Failure policy per traffic class for this run, CLASS=survive|pause[,CLASS=...], over "
                             "the scenario's (scenario.yaml failure_policy) and the defaults (training-sync pauses, "
                             "every other class survives). A pausing class is not offered in a failure state: "
                             "paused Gbps are shown beside unmet. Sets the failure_policy option.")]
"""``--failure-policy training-sync=survive,checkpoint=pause``: the run's ``failure_policy`` option."""


def failure_policy_flag(text: str | None) -> dict[str, str] | None:
    """The ``failure_policy`` option of ``--failure-policy`` ``CLASS=POLICY[,CLASS=POLICY]`` (None when not given);
    the options model checks the classes and policies.

    Raises
    ------
    ValidationError
        An item is not ``CLASS=POLICY``.
    """
    from backbone.errors import Problem, ValidationError

    if text is None:
        return None
    out: dict[str, str] = {}
    for item in (x.strip() for x in text.split(",") if x.strip()):
        cls, sep, policy = item.partition("=")
        if not sep or not cls.strip() or not policy.strip():
            raise ValidationError(Problem(f"expected CLASS=survive or CLASS=pause, got {item!r}", table="options",
                                          field="failure_policy"))
        out[cls.strip()] = policy.strip()
    return out


OPTION_FLAGS: ContextVar[Mapping[str, str] | None] = ContextVar("OPTION_FLAGS", default=None)
"""Option name -> its flag (``k_paths`` -> ``--k-paths``) of the command running (set by
:func:`backbone.api.cli.options.options_command`), so a bad option's message names the flag to fix."""


def problem_text(problem: Any) -> str:
    """One problem as printed: with the flag of a bad option given on the command line (``(--k-paths)``)."""
    flag = (OPTION_FLAGS.get() or {}).get(problem.field) if problem.table == "options" and not problem.file else None
    return f"{problem} ({flag})" if flag else str(problem)


def handle_errors(func: F) -> F:
    """Map package errors to one readable message on stderr and a distinct exit code; never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from backbone.errors import BackboneError, ValidationError

        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except ValidationError as exc:
            err_console.print(f"[bold red]error:[/] {len(exc.problems)} problem(s) in the input", highlight=False)
            for p in exc.problems:
                err_console.print(f"  {problem_text(p)}", highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except BackboneError as exc:
            from rich.markup import escape

            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err_console.print("[yellow]interrupted[/]")
            raise typer.Exit(130) from None
        except Exception as exc:
            from rich.markup import escape

            err_console.print(f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}",
                              highlight=False, soft_wrap=True)
            err_console.print("  (set BACKBONE_DEBUG=1 for a traceback)", highlight=False)
            import os

            if os.environ.get("BACKBONE_DEBUG"):
                raise
            raise typer.Exit(EXIT_UNEXPECTED) from None

    return wrapper  # type: ignore[return-value]


def emit_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (and nothing else)."""
    from backbone.artifacts import json_text

    sys.stdout.write(json_text(obj) + "\n")
    sys.stdout.flush()


def load(scenario: Path | None) -> Any:
    """Load a scenario (default: the shipped one)."""
    from backbone.io import load_scenario

    return load_scenario(scenario)


def run_with_progress(kind: str, net: Any, options: dict[str, Any], out_dir: Path | None,
                      transient: bool = True, on_message: Callable[[Any, str], None] | None = None) -> Any:
    """Run planning task ``kind`` with progress on stderr; returns its TaskResult.

    On a terminal a rich progress bar; otherwise (a pipe, a log file) plain lines, one per stage and at most one
    every :data:`~backbone.api.cli.progress_lines.PLAIN_INTERVAL_S` seconds within a stage
    (:class:`~backbone.api.cli.progress_lines.PlainProgress`, which repeats the last message while a stage is
    silent), so a long run is never silent and a log holds no
    cursor or colour codes. ``on_message(console, message)`` sees every progress message (``backbone plan``
    ticks off finished stages with it).
    """
    from backbone.solver.tasks import run_task

    if not err_console.is_terminal:
        from backbone.api.cli.progress_lines import PlainProgress

        def write(line: str) -> None:
            stream = err_console.file
            stream.write(line)
            stream.flush()

        with PlainProgress(kind, write) as plain:

            def progress_line(fraction: float, message: str) -> None:
                if on_message is not None:
                    on_message(err_console, message)
                plain(fraction, message)

            result = run_task(kind, net, options, out_dir, progress_line)
            plain.finish()
        return result

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(f"[bold]{kind}[/]"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TextColumn("{task.description}"), TimeElapsedColumn(), console=err_console,
                  transient=transient) as bar:
        task = bar.add_task("starting", total=1.0)

        def progress(fraction: float, message: str) -> None:
            if on_message is not None:
                on_message(bar.console, message)
            bar.update(task, completed=fraction, description=message[:90])

        return run_task(kind, net, options, out_dir, progress)
