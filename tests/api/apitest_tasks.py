"""Test-only planning tasks for the API's job machinery (registered through
``create_app(task_registry=...)``, never shipped): a slow task that reports progress, one that is
infeasible, one whose worker process dies."""

from __future__ import annotations

import os
import time
from pathlib import Path

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from backbone.errors import InfeasibleError
from backbone.model import Network
from backbone.solver.core.summary import TypedSummary
from backbone.solver.tasks import ProgressFn, TaskResult


class SleepySummary(TypedSummary):
    sites: int
    steps: int
    map: dict[str, Any]


class ProcessesSummary(TypedSummary):
    workers: int
    process_limit: int | None
    nice: int


class HogSummary(TypedSummary):
    bytes: int
    spins: int


class ExhaustSummary(TypedSummary):
    blocks: int
    library: str


class SleepyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    steps: int = Field(20, ge=1, le=10_000)
    step_s: float = Field(0.05, ge=0, le=10)


def run_sleepy_task(net: Network, opts: SleepyOptions, out_dir: Path | None, progress: ProgressFn) -> TaskResult:
    """Sleep ``steps * step_s`` seconds reporting progress; write a CSV of site ids."""
    for i in range(opts.steps):
        time.sleep(opts.step_s)
        progress((i + 1) / opts.steps, f"step {i + 1} of {opts.steps}")
    files = []
    if out_dir is not None:
        (out_dir / "sites.csv").write_text("id\n" + "\n".join(net.sites.index) + "\n", encoding="utf-8")
        files.append("sites.csv")
    return TaskResult("sleepy", SleepySummary(
        sites=len(net.sites), steps=opts.steps,
        map={"link_values": {"utilisation": dict.fromkeys(net.links.index, 0.5)}}), files)


run_sleepy_task.options_model = SleepyOptions  # type: ignore[attr-defined]
run_sleepy_task.idempotent = True  # type: ignore[attr-defined]  # a lost worker's sleepy job may run again


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


def run_infeasible_task(net: Network, opts: NoOptions, out_dir: Path | None, progress: ProgressFn) -> TaskResult:
    raise InfeasibleError("demand cannot be met", reasons=["d1: 15 Gbps over 10 Gbps of capacity"])


run_infeasible_task.options_model = NoOptions  # type: ignore[attr-defined]


def run_crashing_task(net: Network, opts: NoOptions, out_dir: Path | None, progress: ProgressFn) -> TaskResult:
    os._exit(7)


run_crashing_task.options_model = NoOptions  # type: ignore[attr-defined]

def run_leaky_task(net: Network, opts: NoOptions, out_dir: Path | None, progress: ProgressFn) -> TaskResult:
    raise OSError("cannot read /srv/secret: hunter2-do-not-leak")


run_leaky_task.options_model = NoOptions  # type: ignore[attr-defined]
class ProcessOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workers: int | None = Field(None, ge=1, le=256)


def run_processes_task(net: Network, opts: ProcessOptions, out_dir: Path | None, progress: ProgressFn) -> TaskResult:
    """Report how many pool processes this job would get (a sweep asks the same function)."""
    from backbone.solver.core.processes import capped_workers, process_limit

    return TaskResult("processes", ProcessesSummary(workers=capped_workers(opts.workers),
                                                    process_limit=process_limit(), nice=os.nice(0)))


run_processes_task.options_model = ProcessOptions  # type: ignore[attr-defined]


class HogOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memory_mb: int = Field(0, ge=0, le=1_000_000)
    cpu_s: float = Field(0, ge=0, le=3600)


def run_hog_task(net: Network, opts: HogOptions, out_dir: Path | None, progress: ProgressFn) -> TaskResult:
    """Allocate ``memory_mb`` and touch it, then spin the CPU for ``cpu_s`` seconds."""
    block = bytearray(opts.memory_mb * 1024 * 1024)
    t0 = time.process_time()
    x = 0
    while time.process_time() - t0 < opts.cpu_s:
        x += 1
    return TaskResult("hog", HogSummary(bytes=len(block), spins=x))


run_hog_task.options_model = HogOptions  # type: ignore[attr-defined]

class ExhaustOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    then: str = Field("thread", pattern="^(thread|import)$")


def run_exhaust_task(net: Network, opts: ExhaustOptions, out_dir: Path | None, progress: ProgressFn) -> TaskResult:
    """Fill the address space (RLIMIT_AS) in 1 MiB blocks, then start a thread whose 32 MiB stack does not fit
    in what is left (``RuntimeError: can't start new thread``), or import an extension module whose shared
    library does not fit (``ImportError: ...: failed to map segment from shared object``)."""
    import importlib
    import importlib.util
    import sys
    import threading

    extensions = ("_codecs_jp", "_codecs_kr", "_codecs_tw", "_codecs_hk", "_codecs_iso2022", "_dbm", "_curses",
                  "_lzma", "_bz2", "_decimal", "_sqlite3", "_ssl")
    library = next(n for n in extensions if n not in sys.modules and importlib.util.find_spec(n) is not None)
    threading.stack_size(32 * 1024 * 1024)
    blocks = []
    try:
        while True:
            blocks.append(bytearray(1024 * 1024))  # calloc: address space, no resident memory
    except MemoryError:
        if opts.then == "thread":
            del blocks[-2:]  # room for Python itself, not for the thread's stack
    if opts.then == "import":
        try:
            while True:
                blocks.append(bytearray(64 * 1024))  # what is left, to the last 64 KiB
        except MemoryError:
            pass
    if opts.then == "thread":
        threading.Thread(target=time.sleep, args=(0,)).start()
    else:
        importlib.import_module(library)  # an extension module not loaded yet
    return TaskResult("exhaust", ExhaustSummary(blocks=len(blocks), library=library))


run_exhaust_task.options_model = ExhaustOptions  # type: ignore[attr-defined]

REGISTRY = {
    "exhaust": "apitest_tasks:run_exhaust_task",
    "processes": "apitest_tasks:run_processes_task",
    "hog": "apitest_tasks:run_hog_task",
    "sleepy": "apitest_tasks:run_sleepy_task",
    "leaky": "apitest_tasks:run_leaky_task",
    "infeasible": "apitest_tasks:run_infeasible_task",
    "crashing": "apitest_tasks:run_crashing_task",
}


def lifeline_child(lifeline: object, report: object) -> None:
    """A stand-in job worker: tied to its parent by ``lifeline``, with a child of its own (``sleep``);
    reports both pids on ``report`` and waits."""
    import subprocess

    from backbone.api.jobs import tie_to_server

    tie_to_server(lifeline)
    child = subprocess.Popen(["sleep", "600"])
    report.put([os.getpid(), child.pid])  # type: ignore[attr-defined]
    time.sleep(600)
