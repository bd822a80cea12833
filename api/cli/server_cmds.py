"""``backbone serve``, ``backbone token create|list|revoke|rotate``, ``backbone team create|list`` (and ``team
quota``, :mod:`.quota_cmds`) and ``backbone db upgrade|seed|purge``.

Storage is configured by ``BACKBONE_DATA_DIR`` and ``BACKBONE_DATABASE_URL`` (see docs/api.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from backbone.api.cli.common import EXIT_STORAGE, JsonOpt, emit_json, err_console, handle_errors, out_console
from backbone.errors import BackboneError

if TYPE_CHECKING:
    from backbone.api.settings import Settings

token_app = typer.Typer(help="Create, list and revoke API tokens (stored hashed).", no_args_is_help=True)
db_app = typer.Typer(help="Database maintenance.", no_args_is_help=True)
team_app = typer.Typer(help="Create and list teams (they own scenarios and jobs), and set their quotas.",
                       no_args_is_help=True)


HEADER_MARGIN_BYTES = 8 * 1024
"""Bytes beyond ``BACKBONE_MAX_HEADER_BYTES`` the HTTP parser buffers for an incomplete header block, so
blocks a little over the limit reach the app and get its 431 problem document."""


def register(app: typer.Typer) -> None:
    """Add the server commands to ``app``."""
    app.command("serve")(serve)
    app.add_typer(token_app, name="token")
    app.add_typer(db_app, name="db")
    token_app.command("create")(token_create)
    token_app.command("list")(token_list)
    token_app.command("revoke")(token_revoke)
    token_app.command("rotate")(token_rotate)
    app.add_typer(team_app, name="team")
    team_app.command("create")(team_create)
    team_app.command("list")(team_list)
    from backbone.api.cli import quota_cmds

    quota_cmds.register(team_app)
    db_app.command("upgrade")(db_upgrade)
    db_app.command("seed")(db_seed)
    db_app.command("purge")(db_purge)


class StorageUnusableError(BackboneError):
    """The data directory or the database cannot be written (read-only, full, missing permissions)."""

    exit_code = EXIT_STORAGE
    http_status = 503
    title = "Storage unavailable"


def load_settings(**overrides: Any) -> Settings:
    """The ``BACKBONE_*`` settings with ``overrides`` (options given on the command line; None = not given).

    Raises
    ------
    backbone.errors.ValidationError
        A setting out of range, naming its environment variable (exit code 2, no traceback).
    """
    import pydantic

    from backbone.api.settings import Settings
    from backbone.errors import Problem, ValidationError

    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except pydantic.ValidationError as exc:
        problems = [Problem(str(e["msg"]), file="settings",
                            field="BACKBONE_" + "_".join(str(p) for p in e["loc"]).upper() if e["loc"] else "")
                    for e in exc.errors()]
        raise ValidationError(problems) from None


def check_storage(settings: Settings) -> None:
    """Check that the server can write its data directory and its database, before it starts.

    Creates the data directory's sub-folders, writes and removes a probe file in each (a real write, so the
    check holds for root too, whom file modes do not stop), writes and removes a probe object in an object store
    (``BACKBONE_RESULT_STORE``), migrates the database and makes one write to it in a transaction that is rolled
    back.

    Raises
    ------
    StorageUnusableError
        One sentence naming the directory (or the database, password hidden) and the reason.
    """
    import tempfile

    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from backbone.api.store import Store

    folder = settings.data_dir
    try:
        settings.ensure_dirs()
        for sub in (folder, folder / "results", folder / "staging", folder / "uploads"):
            with tempfile.TemporaryFile(dir=sub, prefix=".write-probe-"):
                pass
    except OSError as exc:
        raise StorageUnusableError(f"the data directory {folder} is not writable ({exc.strerror or exc}); "
                                   "set BACKBONE_DATA_DIR to a writable folder") from None
    check_result_store(settings)
    url = settings.resolved_database_url()
    try:
        store = Store(url)
        try:
            store.upgrade()
            with store.engine.connect() as conn, conn.begin() as tx:
                conn.execute(text("UPDATE alembic_version SET version_num = version_num"))
                tx.rollback()
        finally:
            store.dispose()
    except Exception as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:200]
        shown = make_url(url).render_as_string(hide_password=True)
        raise StorageUnusableError(f"the database {shown} cannot be opened for writing ({reason})") from None


def check_result_store(settings: Settings) -> None:
    """Check that an object store named by ``BACKBONE_RESULT_STORE`` takes a write (a probe object, removed);
    nothing for the results folder, which the caller checks with the data directory.

    Raises
    ------
    StorageUnusableError
        One sentence naming the store (``s3://bucket/prefix``) and the reason.
    """
    from backbone.api.result_store import ObjectResultStore, ResultStoreError, open_result_store

    results = open_result_store(settings.result_store, settings.data_dir / "results")
    if not isinstance(results, ObjectResultStore):
        return
    try:
        results.check()
    except ResultStoreError as exc:
        raise StorageUnusableError(f"{exc}; check BACKBONE_RESULT_STORE and the AWS_* variables") from None


def open_store() -> object:
    """The store of ``BACKBONE_DATABASE_URL`` (migrated; the folders made), for the admin commands; a
    :class:`~backbone.api.store.Store` (typed ``object`` so this module does not import the store at start)."""
    from backbone.api.store import Store

    settings = load_settings()
    check_storage(settings)  # creates the folders and migrates the database, or says in one line why it cannot
    return Store(settings.resolved_database_url(), token_max_lifetime_days=settings.token_max_lifetime_days)


@handle_errors
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[int | None, typer.Option(help="Jobs run at the same time (default BACKBONE_WORKERS or 2).",
                                                min=1, max=64)] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    keep_alive_s: Annotated[int, typer.Option(help="Seconds an idle keep-alive connection stays open.",
                                              min=1, max=3600)] = 30,
) -> None:
    """Run the REST API (uvicorn). Migrates the database to the newest schema first."""
    import logging

    import uvicorn

    from backbone.api.app import create_app

    settings = load_settings(workers=workers)
    check_storage(settings)  # one line and exit code 6 on a read-only or full data dir, not a traceback
    logging.basicConfig(level=logging.INFO if log_level in ("info", "debug") else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    err_console.print(f"backbone API on http://{host}:{port}  (docs /docs, data dir {settings.data_dir})",
                      highlight=False)
    from backbone.api.limits import header_deadline

    # idle keep-alive connections close after keep_alive_s; request headers must arrive within
    # BACKBONE_HEADER_TIMEOUT_S (uvicorn's h11 protocol wrapped, with a middleware that marks requests the app
    # has). Header blocks over BACKBONE_MAX_HEADER_BYTES get 431 from the app
    # (backbone.api.guards.HeaderSizeLimit); h11 refuses, with a 400, those that arrive in pieces and
    # grow past that plus a margin before they are complete.
    app, protocol = header_deadline(create_app(settings), settings.header_timeout_s, http="h11")
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=log_level == "debug",
                timeout_keep_alive=keep_alive_s, http=protocol,
                h11_max_incomplete_event_size=settings.max_header_bytes + HEADER_MARGIN_BYTES)


@handle_errors
def token_create(
    scope: Annotated[str, typer.Option(help="viewer (read), planner (also write and run jobs) or admin.")],
    name: Annotated[str, typer.Option(help="A label for the token.")] = "",
    team: Annotated[str | None, typer.Option(help="Team (id or name) the token acts for; its scope is its "
                                                  "role there.")] = None,
    expires_in_days: Annotated[int, typer.Option(help="Lifetime in days.", min=1, max=3650)] = 90,
    json_out: JsonOpt = False,
) -> None:
    """Create an API token; the token is the LAST word of the output (shown once, stored hashed)."""
    from backbone.api.store import SCOPES, GoneError, Store
    from backbone.errors import Problem, ValidationError

    if scope not in SCOPES:
        raise ValidationError(Problem(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}", field="scope"))
    store = open_store()
    assert isinstance(store, Store)
    try:
        tok, plain = store.create_token(scope, name or f"{scope}-token", team=team, expires_in_days=expires_in_days)
    except GoneError as exc:
        raise ValidationError(Problem(str(exc), field="team")) from None
    finally:
        store.dispose()
    if json_out:
        emit_json({"id": tok.id, "name": tok.name, "scope": tok.scope, "team_id": tok.team_id,
                   "expires_at": tok.expires_at.isoformat() if tok.expires_at else None, "token": plain})
        return
    out_console.print(f"created {scope} token {tok.name!r} (id {tok.id}): {plain}", highlight=False, soft_wrap=True)


@handle_errors
def token_list(json_out: JsonOpt = False) -> None:
    """List tokens (never their values)."""
    from backbone.api.store import Store

    store = open_store()
    assert isinstance(store, Store)
    rows = store.list_tokens()
    store.dispose()
    data: list[dict[str, str | None]] = [{"id": t.id, "name": t.name, "scope": t.scope, "team_id": t.team_id,
             "created_at": t.created_at.isoformat(),
             "expires_at": t.expires_at.isoformat() if t.expires_at else None,
             "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None,
             "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None} for t in rows]
    if json_out:
        emit_json(data)
        return
    from rich.table import Table

    table = Table(title="API tokens")
    for col in ("id", "name", "scope", "team", "created", "expires", "revoked", "last used"):
        table.add_column(col, overflow="fold")
    for d in data:
        table.add_row(*((d[k] or "")[:19] if k.endswith("_at") else (d[k] or "")
                        for k in ("id", "name", "scope", "team_id", "created_at", "expires_at", "revoked_at",
                                  "last_used_at")))
    out_console.print(table)


@handle_errors
def token_revoke(token_id: Annotated[str, typer.Argument(help="Token id (from `backbone token list`).")]) -> None:
    """Revoke a token."""
    from backbone.api.store import GoneError, Store
    from backbone.errors import NotFoundError

    store = open_store()
    assert isinstance(store, Store)
    try:
        store.revoke_token(token_id)
    except GoneError as exc:
        raise NotFoundError(str(exc)) from None
    finally:
        store.dispose()
    err_console.print(f"revoked token {token_id}", highlight=False)


@handle_errors
def token_rotate(token_id: Annotated[str, typer.Argument(help="Token id (from `backbone token list`).")],
                 json_out: JsonOpt = False) -> None:
    """Replace a token by a new one (same name, scope, team, lifetime) and revoke the old one; the new
    token is the LAST word of the output."""
    from backbone.api.store import ConflictError, GoneError, Store
    from backbone.errors import NotFoundError, ValidationError

    store = open_store()
    assert isinstance(store, Store)
    try:
        tok, plain = store.rotate_token(token_id)
    except GoneError as exc:
        raise NotFoundError(str(exc)) from None
    except ConflictError as exc:
        raise ValidationError(str(exc)) from None
    finally:
        store.dispose()
    if json_out:
        emit_json({"id": tok.id, "name": tok.name, "scope": tok.scope, "rotated_from": token_id, "token": plain})
        return
    out_console.print(f"rotated token {token_id} -> {tok.id}: {plain}", highlight=False, soft_wrap=True)


@handle_errors
def team_create(name: Annotated[str, typer.Argument(help="Team name (unique).")], json_out: JsonOpt = False) -> None:
    """Create a team; give it tokens with `backbone token create --team NAME`."""
    from backbone.api.store import ConflictError, Store
    from backbone.errors import Problem, ValidationError

    if not name.strip():
        raise ValidationError(Problem("a team needs a name", field="name"))
    store = open_store()
    assert isinstance(store, Store)
    try:
        team = store.create_team(name)
    except ConflictError as exc:
        raise ValidationError(Problem(str(exc), field="name")) from None
    finally:
        store.dispose()
    if json_out:
        emit_json({"id": team.id, "name": team.name})
        return
    out_console.print(f"created team {team.name!r} (id {team.id})", highlight=False)


@handle_errors
def team_list(json_out: JsonOpt = False) -> None:
    """List teams."""
    from backbone.api.store import Store

    store = open_store()
    assert isinstance(store, Store)
    rows = [{"id": t.id, "name": t.name, "created_at": t.created_at.isoformat()} for t in store.list_teams()]
    store.dispose()
    if json_out:
        emit_json(rows)
        return
    for r in rows:
        out_console.print(f"{r['id']}  {r['name']}", highlight=False)


@handle_errors
def db_seed() -> None:
    """Store the shipped scenario as a read-only scenario every team can read and plan on (once)."""
    from backbone.api.store import SYSTEM, Store
    from backbone.io import load_scenario, network_to_dict

    store = open_store()
    assert isinstance(store, Store)
    try:
        net = load_scenario(None)
        existing = [sc for sc, _ in store.list_scenarios(limit=1000) if sc.read_only and sc.name == net.name]
        if existing:
            err_console.print(f"shipped scenario already stored: {existing[0].id}", highlight=False)
            return
        counts = {"sites": len(net.sites), "links": len(net.links), "demands": len(net.demands)}
        sc, _ver = store.create_scenario(network_to_dict(net), counts, "shipped", SYSTEM, read_only=True)
    finally:
        store.dispose()
    out_console.print(f"stored the shipped scenario {sc.name!r} read-only: {sc.id}", highlight=False)


@handle_errors
def db_upgrade() -> None:
    """Create or migrate the database to the newest schema (the server also does this at start-up)."""
    from backbone.api.store import Store

    settings = load_settings()
    settings.ensure_dirs()
    store = Store(settings.resolved_database_url())
    store.upgrade()
    store.dispose()
    err_console.print(f"database up to date: {store.engine.url.render_as_string(hide_password=True)}",
                      highlight=False)


@handle_errors
def db_purge(json_out: JsonOpt = False) -> None:
    """Apply the retention settings now: free finished jobs and their results, deleted scenarios, old
    versions and old audit entries (the server also does this every BACKBONE_MAINTENANCE_INTERVAL_S)."""
    from backbone.api.jobs import apply_retention
    from backbone.api.store import Store

    store = open_store()
    assert isinstance(store, Store)
    try:
        counts = apply_retention(store, load_settings()).counts()
    finally:
        store.dispose()
    if json_out:
        emit_json(counts)
        return
    err_console.print("freed " + ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in counts.items()),
                      highlight=False)
