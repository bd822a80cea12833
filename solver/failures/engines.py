"""Where scenarios run: serially, on a local process pool or on a Dask cluster.

Scenarios run in batches on a local process pool (``engine="local"``) or on a Dask distributed
cluster (``engine="dask"``; with no scheduler address a local cluster is started). A configured scheduler is
reached within ``scheduler_timeout_s`` and must have a worker within it too, or the sweep fails with a
:class:`~backbone.errors.SolverError` (it never waits for a cluster that is not there); the batches are sized by
the cluster's worker threads. :func:`execute_sweep` says where the states ran (:class:`SweepEngineInfo`). A worker
keeps a :class:`SweepContext` per network -- the intact network, its baseline result and its
cached candidate paths -- and per scenario only re-derives what the failure changes: candidate
paths are those of the intact network minus the ones crossing failed links, with only the
pairs that lost a path searched again on the failed topology
(:func:`backbone.solver.paths.candidates.paths_after_failure`). Results do not depend on the engine or the batch
size: every scenario is evaluated by the same deterministic function.
"""

from __future__ import annotations

import json
import logging
import math
import pickle
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from backbone.errors import SolverError
from backbone.failure_policy import class_failure_policy
from backbone.model import Network
from backbone.solver.core.processes import capped_workers, die_with_parent, spawn_unsafe_reason
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.failures.evaluation import SweepContext, evaluate_scenario
from backbone.solver.failures.options import FailureOptions
from backbone.solver.failures.pool import SharedPool, active_pool
from backbone.solver.failures.records import ScenarioRecord
from backbone.solver.failures.scenarios import FailureScenario
from backbone.solver.failures.summary import SweepEngineInfo

if TYPE_CHECKING:
    from distributed import Client

logger = logging.getLogger("backbone.solver.failures")


_WORKER_CONTEXTS: dict[str, SweepContext] = {}
"""Per-process contexts, keyed by (network fingerprint, options): built once per worker."""


def _context_key(net: Network, options: FailureOptions) -> str:
    """The tables' fingerprint, the options that change a figure and the failure policy in force (the scenario's
    is in the metadata, which the fingerprint leaves out)."""
    policy = json.dumps(class_failure_policy(net.meta, options.failure_policy), sort_keys=True)
    return (net.fingerprint() + ":" + options.model_dump_json(exclude={"engine", "workers", "scheduler",
                                                                       "scheduler_timeout_s", "batch_size"})
            + ":" + policy)


def worker_context(net: Network, options: FailureOptions, progress: ProgressFn | None = None,
                   adopt: SweepContext | None = None) -> SweepContext:
    """This process's context for ``net`` and ``options``, built once (the previous one is dropped); ``adopt`` (the
    parent's, with its baseline) is taken instead of building one when this process has none for them; ``progress``
    hears about the baseline's solve when it is built here. The network's fingerprint is computed once per call."""
    key = _context_key(net, options)
    ctx = _WORKER_CONTEXTS.get(key)
    if ctx is None:
        _WORKER_CONTEXTS.clear()
        ctx = _WORKER_CONTEXTS[key] = adopt if adopt is not None else SweepContext.build(net, options, progress)
    return ctx


def _run_batch(net: Network, options: FailureOptions, batch: list[FailureScenario],
               ctx: SweepContext | None = None) -> list[ScenarioRecord]:
    context = worker_context(net, options, adopt=ctx)  # the parent's baseline adopted instead of solved again
    return [evaluate_scenario(context, s) for s in batch]


_POOL_CONTEXT: SweepContext | None = None


def _pool_init(net: Network, options: FailureOptions, ctx: SweepContext | None = None) -> None:
    global _POOL_CONTEXT
    die_with_parent()  # a pool process never outlives the sweep's process
    _POOL_CONTEXT = worker_context(net, options, adopt=ctx)  # adopted (or built) once per worker


def _pool_batch(batch: list[FailureScenario]) -> list[ScenarioRecord]:
    assert _POOL_CONTEXT is not None
    return [evaluate_scenario(_POOL_CONTEXT, s) for s in batch]


def _batches(scenarios: list[FailureScenario], workers: int, batch_size: int | None) -> list[list[FailureScenario]]:
    size = batch_size or max(1, min(16, math.ceil(len(scenarios) / max(1, workers * 4))))
    return [scenarios[i:i + size] for i in range(0, len(scenarios), size)]


def run_sweep(net: Network, scenarios: list[FailureScenario], options: FailureOptions,
              progress: ProgressFn | None = None, ctx: SweepContext | None = None) -> list[ScenarioRecord]:
    """Evaluate every scenario with the chosen engine; records in scenario order (:func:`execute_sweep`'s records).

    Raises
    ------
    SolverError
        When the Dask scheduler cannot be reached or has no worker, or a worker fails.
    """
    return execute_sweep(net, scenarios, options, progress, ctx)[0]


def execute_sweep(net: Network, scenarios: list[FailureScenario], options: FailureOptions,
                  progress: ProgressFn | None = None, ctx: SweepContext | None = None,
                  cluster: DaskCluster | None = None) -> tuple[list[ScenarioRecord], SweepEngineInfo | None]:
    """Evaluate every scenario with the chosen engine: the records in scenario order, and where they ran (None when
    there is no scenario).

    ``ctx`` (the intact network's baseline, when the caller has it) is shipped to the workers so
    they do not solve the baseline again; each still computes the intact candidate paths once. ``cluster`` (engine
    ``dask``: one :func:`dask_cluster` opened by the caller) is used instead of connecting here.

    Raises
    ------
    SolverError
        When the Dask scheduler cannot be reached or has no worker within ``options.scheduler_timeout_s``, or a
        worker fails.
    """
    progress = progress or no_progress
    if not scenarios:
        return [], None
    workers = capped_workers(options.workers)  # the CPU count, at most the process limit (API: per job)
    engine = options.engine
    if engine == "local" and workers == 1:
        engine = "serial"
    if engine == "local":
        import multiprocessing as mp

        if mp.current_process().daemon:  # a daemonic process (e.g. an API job worker) cannot start a pool
            logger.info("failure sweep in a daemonic process: running serially")
            engine = "serial"
        elif (reason := spawn_unsafe_reason()) is not None:  # worker processes would break or hang
            logger.warning("failure sweep runs serially: %s (use %d worker processes by running the sweep under "
                           "'if __name__ == \"__main__\":')", reason, workers)
            engine = "serial"
    if engine == "dask":
        return _run_dask(net, options, scenarios, progress, ctx, cluster)
    batches = _batches(scenarios, workers, options.batch_size)
    done = 0
    results: dict[int, list[ScenarioRecord]] = {}
    if engine == "serial":  # progress after every scenario
        context = worker_context(net, options, adopt=ctx)  # once per sweep: the fingerprint reads every table
        for i, b in enumerate(batches):
            results[i] = []
            for s in b:
                results[i].append(evaluate_scenario(context, s))
                done += 1
                progress(done / len(scenarios), f"{done}/{len(scenarios)} scenarios ({s.id})")
        return _in_order(results), SweepEngineInfo(engine="serial", workers=1, threads=1)
    shared = active_pool(workers)
    if shared is not None:  # the enclosing sweep_pool block's processes: no start-up
        return _run_shared(shared, net, options, batches, len(scenarios), progress, ctx), \
            SweepEngineInfo(engine="local", workers=workers, threads=workers)
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_pool_init,
                             initargs=(net, options, ctx)) as pool:
        futures = {pool.submit(_pool_batch, b): i for i, b in enumerate(batches)}
        for fut in as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            done += len(batches[i])
            progress(done / len(scenarios), f"{done}/{len(scenarios)} scenarios")
    return _in_order(results), SweepEngineInfo(engine="local", workers=workers, threads=workers)


def _shared_batch(key: str, payload: bytes, batch: list[FailureScenario]) -> list[ScenarioRecord]:
    """A batch on a shared pool's process: its context for ``key`` when it has one, else the one ``payload`` (the
    pickled network, options and parent's context) carries, adopted once."""
    ctx = _WORKER_CONTEXTS.get(key)
    if ctx is None:
        net, options, parent_ctx = pickle.loads(payload)  # pickled by this process's parent
        return _run_batch(net, options, batch, parent_ctx)
    return [evaluate_scenario(ctx, s) for s in batch]


def _run_shared(shared: SharedPool, net: Network, options: FailureOptions, batches: list[list[FailureScenario]],
                total: int, progress: ProgressFn, ctx: SweepContext | None) -> list[ScenarioRecord]:
    """The batches on the shared pool (:mod:`backbone.solver.failures.pool`), records in scenario order."""
    key = _context_key(net, options)
    payload = pickle.dumps((net, options, ctx), protocol=pickle.HIGHEST_PROTOCOL)
    shared.sweeps += 1
    results: dict[int, list[ScenarioRecord]] = {}
    done = 0
    try:
        futures = {shared.executor.submit(_shared_batch, key, payload, b): i for i, b in enumerate(batches)}
        for fut in as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            done += len(batches[i])
            progress(done / total, f"{done}/{total} scenarios")
    except BrokenProcessPool:
        shared.broken = True  # later sweeps start their own pool
        raise
    return _in_order(results)


def _in_order(results: dict[int, list[ScenarioRecord]]) -> list[ScenarioRecord]:
    return [r for i in range(len(results)) for r in results[i]]


@contextmanager
def dask_cluster(options: FailureOptions) -> Iterator[DaskCluster | None]:
    """The Dask cluster a sweep with ``options`` runs on, connected for the block (None unless ``engine="dask"``):
    the configured scheduler, reached and with a worker within ``options.scheduler_timeout_s``, or a local cluster
    of ``options.workers`` processes started for the block. :func:`~backbone.solver.failures.result.sweep` opens it
    before the baseline's solve, so an unreachable scheduler fails the sweep at once.

    Raises
    ------
    SolverError
        When the scheduler cannot be reached, or has no worker, within the timeout.
    """
    if options.engine != "dask":
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - distributed is a dependency
        raise SolverError(f"engine 'dask' needs the 'distributed' package: {exc}") from None
    local = None
    if options.scheduler:
        client = _connect(Client, options.scheduler, options.scheduler_timeout_s)
    else:
        local = LocalCluster(n_workers=capped_workers(options.workers), threads_per_worker=1, processes=True,
                             dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(local, set_as_default=False)
    try:
        nthreads = client.nthreads()
        yield DaskCluster(client, SweepEngineInfo(engine="dask", workers=len(nthreads),
                                                  threads=max(1, sum(nthreads.values())),
                                                  scheduler=options.scheduler or "local cluster"))
    finally:
        client.close()
        if local is not None:
            local.close()


@dataclass(frozen=True)
class DaskCluster:
    """A connected Dask client and what it reaches (:func:`dask_cluster`)."""

    client: Client
    where: SweepEngineInfo


def _connect(client_type: type[Client], address: str, wait_s: float) -> Client:
    """A client of the scheduler at ``address`` with at least one worker, each within ``wait_s`` seconds."""
    try:
        client = client_type(address, timeout=f"{wait_s}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise SolverError(f"cannot reach the Dask scheduler {address!r} within {wait_s:g} s: {exc}") from None
    try:
        client.wait_for_workers(1, timeout=wait_s)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise SolverError(f"the Dask scheduler {address!r} has no worker after {wait_s:g} s "
                          f"(start some with 'dask worker {address}'): {exc}") from None
    return client


def _run_dask(net: Network, options: FailureOptions, scenarios: list[FailureScenario], progress: ProgressFn,
              ctx: SweepContext | None, cluster: DaskCluster | None) -> tuple[list[ScenarioRecord], SweepEngineInfo]:
    if cluster is None:
        with dask_cluster(options) as opened:
            assert opened is not None
            return _run_dask(net, options, scenarios, progress, ctx, opened)
    import distributed

    client, where = cluster.client, cluster.where
    batches = _batches(scenarios, where.threads, options.batch_size)
    net_future = client.scatter(net, broadcast=True)
    ctx_future = client.scatter(ctx, broadcast=True) if ctx is not None else None
    run = uuid.uuid4().hex  # keys unique on a scheduler shared by many jobs and servers
    futures = [client.submit(_run_batch, net_future, options, b, ctx_future,
                             key=f"failures-batch-{run}-{i}", pure=False) for i, b in enumerate(batches)]
    index = {f.key: i for i, f in enumerate(futures)}
    results: dict[int, list[ScenarioRecord]] = {}
    done = 0
    for fut in distributed.as_completed(futures, loop=client.loop):
        i = index[fut.key]
        results[i] = fut.result()
        done += len(batches[i])
        progress(done / len(scenarios), f"{done}/{len(scenarios)} scenarios (dask, {where.workers} workers)")
    return _in_order(results), where
