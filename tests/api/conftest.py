"""API test fixtures: settings on a temporary data dir, the app over SQLite and PostgreSQL, tokens, and the
fork server every app of the session forks its job and document workers from.

PostgreSQL runs when ``BACKBONE_TEST_POSTGRES_URL`` is set (``.ci/run`` sets it); without it those
parameters skip, unless ``BACKBONE_REQUIRE_POSTGRES=1`` (then they fail).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from apitest_helpers import postgres_schema_url, postgres_url
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.settings import Settings
from backbone.api.store import Store


@pytest.fixture(scope="session", autouse=True)
def _worker_fork_server() -> None:
    """The jobs' fork server (:func:`backbone.api.jobs.worker_context`), started once for the session from the
    main thread.

    The fork server asks for SIGKILL when the thread that started it ends (parent-death signal, so it dies with a
    killed API server). Under ``uvicorn`` that is the main thread, alive as long as the server. Under
    :class:`~fastapi.testclient.TestClient` the app's lifespan runs in a portal thread that ends with the client,
    so without this fixture every test's fork server died with its client and the next test started a new one,
    importing :data:`~backbone.api.jobs.PRELOAD` again (1-3 s per test). Started here, it lives for the session;
    each app's ``JobManager.start`` finds it running, as a server finds the one it started itself.
    """
    from multiprocessing import forkserver

    from backbone.api.jobs import worker_context

    if worker_context().get_start_method() == "forkserver":
        forkserver.ensure_running()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a private schema in the PostgreSQL test database
    (dropped afterwards), so test runs sharing one PostgreSQL server do not disturb each other.

    The PostgreSQL parameter is in the slow lane (it doubles every API test); the fast lane runs SQLite."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'api.db'}"
        return
    url, drop = postgres_schema_url(postgres_url())
    try:
        yield url
    finally:
        drop()


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    return Settings(data_dir=tmp_path / "data", database_url=db_url, workers=2, max_sites=50, max_links=100,
                    max_body_bytes=256 * 1024)


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database migrated to head once per session (``alembic upgrade head`` on an empty file).

    Do not open it; :func:`client` copies it. Tests of the migrations themselves use ``db_url``, which
    stays an empty database."""
    path = tmp_path_factory.mktemp("migrated-sqlite") / "api.db"
    store = Store(f"sqlite:///{path}")
    store.upgrade()
    store.dispose()
    return path


@pytest.fixture
def client(settings: Settings, request: pytest.FixtureRequest) -> Iterator[TestClient]:
    """A TestClient with the app's lifespan (migrations, job supervisor) running.

    On SQLite the empty database file starts as a copy of :func:`migrated_sqlite`, the state the app's own
    ``alembic upgrade head`` would leave; the app still runs the upgrade (then a no-op) as it starts."""
    url = settings.resolved_database_url()
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), url.removeprefix("sqlite:///"))
    app = create_app(settings, task_registry=REGISTRY)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def tokens(client: TestClient) -> dict[str, str]:
    """One plaintext token per scope (made through the store, as ``backbone token create`` does)."""
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    return {scope: store.create_token(scope, f"test-{scope}")[1] for scope in ("viewer", "planner", "admin")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``sqlite_only`` run on SQLite alone: their PostgreSQL variant is deselected (and counted as
    deselected), since their time is the job's computing and the database layer runs on PostgreSQL in the others."""
    drop = {item for item in items if item.get_closest_marker("sqlite_only") is not None
            and getattr(getattr(item, "callspec", None), "params", {}).get("db_url") == "postgresql"}
    if drop:
        config.hook.pytest_deselected(items=[item for item in items if item in drop])
        items[:] = [item for item in items if item not in drop]
