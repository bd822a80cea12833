"""``backbone team quota set|show|clear``: a team's own quotas, on the database directly (as the other admin
commands), with the same validation, audit entries and output fields as ``PUT/GET/DELETE /v1/teams/{team}/quotas``.

Each change is audited as the CLI's principal (``system``), as ``backbone team create`` is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from backbone.api.cli.common import JsonOpt, emit_json, handle_errors, out_console

if TYPE_CHECKING:
    from backbone.api.schemas import TeamQuotasPublic
    from backbone.api.store import EffectiveQuotas, JobQuotas, Store

quota_app = typer.Typer(help="Set, show and clear a team's own quotas (CPU seconds in a window, stored result "
                             "bytes); unset quotas are the server's.", no_args_is_help=True)

TeamArg = Annotated[str, typer.Argument(help="Team id or name.")]


def register(team_app: typer.Typer) -> None:
    """Add ``quota set|show|clear`` to the ``team`` command group."""
    team_app.add_typer(quota_app, name="quota")
    quota_app.command("set")(quota_set)
    quota_app.command("show")(quota_show)
    quota_app.command("clear")(quota_clear)


def _with_store(team: str, action: Callable[[Store, JobQuotas], EffectiveQuotas]) -> TeamQuotasPublic:
    """Run ``action`` on the database of ``BACKBONE_*`` with the server's quotas; the public form of its answer."""
    from backbone.api.cli.server_cmds import load_settings, open_store
    from backbone.api.job_limits import server_quotas
    from backbone.api.schemas import TeamQuotasPublic
    from backbone.api.store import GoneError, Store
    from backbone.errors import NotFoundError

    store = open_store()
    assert isinstance(store, Store)
    try:
        effective = action(store, server_quotas(load_settings()))
        return TeamQuotasPublic.of(effective, store.get_team(str(effective.team_id)).name)
    except GoneError as exc:
        raise NotFoundError(f"{exc}; see `backbone team list`") from None
    finally:
        store.dispose()


def _show(public: TeamQuotasPublic, json_out: bool) -> None:
    if json_out:
        emit_json(public.model_dump(mode="json"))
        return
    src = public.quota_sources
    out_console.print(f"team {public.team_name!r} (id {public.team_id})", highlight=False)
    for label, value, source in (
            ("max_cpu_s", "none" if public.max_cpu_s is None else f"{public.max_cpu_s:g}", src.max_cpu_s),
            ("cpu_window_h", f"{public.cpu_window_h:g}", src.cpu_window_h),
            ("max_stored_bytes", "none" if public.max_stored_bytes is None else str(public.max_stored_bytes),
             src.max_stored_bytes)):
        out_console.print(f"  {label:<17} {value:<16} ({'team setting' if source == 'team' else 'server default'})",
                          highlight=False)


@handle_errors
def quota_set(team: TeamArg,
              max_cpu_s: Annotated[float | None, typer.Option(help="CPU seconds the team's jobs may use in the "
                                                                  "window; 0: no quota for this team.")] = None,
              cpu_window_h: Annotated[float | None, typer.Option(help="The window of --max-cpu-s, in hours.")] = None,
              max_stored_bytes: Annotated[int | None, typer.Option(help="Bytes of job results the team may store; "
                                                                        "0: no quota for this team.")] = None,
              json_out: JsonOpt = False) -> None:
    """Set a team's own quotas; they replace its settings (an option left out falls back to the server's)."""
    import pydantic

    from backbone.api.schemas import TeamQuotasUpdate
    from backbone.api.store import TeamQuotaSettings
    from backbone.errors import Problem, ValidationError

    try:
        body = TeamQuotasUpdate(max_cpu_s=max_cpu_s, cpu_window_h=cpu_window_h, max_stored_bytes=max_stored_bytes)
    except pydantic.ValidationError as exc:
        raise ValidationError([Problem(e["msg"], table="quotas", field="--" + str(e["loc"][0]).replace("_", "-"))
                               for e in exc.errors()]) from None
    settings = TeamQuotaSettings(**body.model_dump())
    _show(_with_store(team, lambda store, server: store.set_team_quotas(team, settings, server)), json_out)


@handle_errors
def quota_show(team: TeamArg, json_out: JsonOpt = False) -> None:
    """Show the quotas that hold for a team and whether each is the team's setting or the server's default."""
    _show(_with_store(team, lambda store, server: store.team_quotas(team, server)), json_out)


@handle_errors
def quota_clear(team: TeamArg, json_out: JsonOpt = False) -> None:
    """Clear a team's own quotas: the server's settings hold for it again."""
    _show(_with_store(team, lambda store, server: store.clear_team_quotas(team, server)), json_out)
