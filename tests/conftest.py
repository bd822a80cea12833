"""Shared fixtures: the hand-built networks of :mod:`tests.nets`, the shipped scenario, and results that
several test files read (computed once per session).

Session-scoped results are computed with the defaults exactly as the tests that share them asked for them.
Networks are immutable (their tables are frozen), so one loaded network can be shared read-only. A shared
result's summary is handed to each test as a deep copy; its output folder is read-only by agreement: a
test that changes files copies the folder first (:func:`copy_of`).
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backbone.model import Network
from tests.nets import (  # noqa: F401  (re-exported: older imports name them from tests.conftest)
    make_network,
    small_world_network,
    submarine_cut_network,
    triangle_network,
)

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance"


def pytest_configure(config: pytest.Config) -> None:
    """With ``BACKBONE_TEST_INSTALLED=1`` (``.ci/run``'s run against the installed package) the tests must import
    the installed ``backbone``, never the checkout's folders, or that run would test the checkout twice."""
    import os

    if os.environ.get("BACKBONE_TEST_INSTALLED") != "1":
        return
    import backbone
    import backbone.api
    import backbone.solver

    # the checkout's package folders (a venv inside the checkout, as in CI, is the install, not the checkout)
    folders = [ROOT / name for name in ("backbone", "solver", "api")]
    inside = [m.__name__ for m in (backbone, backbone.solver, backbone.api)
              if any(Path(str(m.__file__)).resolve().is_relative_to(f) for f in folders)]
    if inside:
        raise pytest.UsageError(f"BACKBONE_TEST_INSTALLED=1 but {', '.join(inside)} import from the checkout {ROOT}")


def conformance_dir() -> Path:
    """../shared/conformance, or skip the calling test with a clear reason."""
    if not CONFORMANCE.exists():
        pytest.skip(f"conformance data not present at {CONFORMANCE}")
    return CONFORMANCE


@dataclass(frozen=True)
class SharedRun:
    """A task run once per session: its output folder (read it, do not write to it) and its summary's JSON
    document (:meth:`TaskResult.document`)."""

    out: Path
    summary: dict[str, Any]


def copy_of(run: SharedRun, dest: Path) -> SharedRun:
    """A private copy of a shared run (folder copied to ``dest``), for a test that changes what it reads."""
    shutil.copytree(run.out, dest)
    return SharedRun(dest, copy.deepcopy(run.summary))


@pytest.fixture
def triangle() -> Network:
    """:func:`tests.nets.triangle_network` (min-MLU optimum 0.75)."""
    return triangle_network()


@pytest.fixture
def submarine_cut() -> Network:
    """:func:`tests.nets.submarine_cut_network` (one corridor SRLG partitions two continents)."""
    return submarine_cut_network()


@pytest.fixture(scope="session")
def small_world() -> Iterator[Network]:
    """:func:`tests.nets.small_world_network`, built once (a Network's tables are read-only).

    At the end of the session it must still equal a freshly built one: no test changed it."""
    net = small_world_network()
    yield net
    assert net.equals(small_world_network()), "a test changed the shared small_world network"


@pytest.fixture(scope="session")
def shipped() -> Iterator[Network]:
    """The shipped global scenario (``load_scenario()``), loaded once; its tables are read-only.

    At the end of the session it must still equal a freshly loaded one: no test changed it."""
    from backbone.io import load_scenario

    net = load_scenario()
    yield net
    assert net.equals(load_scenario()), "a test changed the shared shipped scenario"


@pytest.fixture(scope="session")
def _small_world_default_plan(small_world: Network, tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    from backbone.solver.tasks import run_task

    out = tmp_path_factory.mktemp("small-world-plan") / "out"
    return SharedRun(out, run_task("plan", small_world, {}, out).document())


@pytest.fixture
def small_world_default_plan(_small_world_default_plan: SharedRun) -> SharedRun:
    """``run_task("plan", small_world, {}, out)``: the plan with every default, run once per session.

    The summary is a fresh deep copy for each test; ``out`` is shared (use :func:`copy_of` to change it).
    """
    return SharedRun(_small_world_default_plan.out, copy.deepcopy(_small_world_default_plan.summary))


@pytest.fixture(scope="session")
def _small_world_grown_plan(small_world: Network, tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    from backbone.solver.tasks import run_task

    out = tmp_path_factory.mktemp("small-world-grown-plan") / "out"
    options = {"demand_growth": 1.3}
    return SharedRun(out, run_task("plan", small_world, options, out).document())


@pytest.fixture
def small_world_grown_plan(_small_world_grown_plan: SharedRun) -> SharedRun:
    """``run_task("plan", small_world, {"demand_growth": 1.3}, out)``, run once per session: a second plan to
    compare with :func:`small_world_default_plan` (more GPUs, and a link upgrade so the Atlantic cut is carried).

    The summary is a fresh deep copy for each test; ``out`` is shared (use :func:`copy_of` to change it).
    """
    return SharedRun(_small_world_grown_plan.out, copy.deepcopy(_small_world_grown_plan.summary))


WHOLE_PLAN_FIXTURES = frozenset({"_small_world_default_plan", "_small_world_grown_plan"})
"""Session fixtures that run a whole plan (about 20 s): a test that needs one is in the slow lane."""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_itemcollected(item: pytest.Item) -> None:
    """Tests on a whole plan's output folder (:data:`WHOLE_PLAN_FIXTURES`) are ``slow``: the fast lane builds no
    plan."""
    if WHOLE_PLAN_FIXTURES & set(getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.slow)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The fast lane first: when slow tests are selected with the others (``-m "slow or not slow"``, the README's
    command), every test not marked ``slow`` runs before them, each lane in collection order."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is not None)
