"""One local process pool for many failure sweeps (:func:`sweep_pool`).

A sweep on the ``local`` engine starts a pool of spawned processes, and each of them imports the solver and builds its
sweep context before its first state. A survivable design sweeps every state after each MIP, and a roadmap runs one
design per period: dozens of sweeps, each paying that start-up again (on the shipped scenario ~4 CPU seconds per
process, 2 processes per sweep on a 2-core machine). Inside ``with sweep_pool():`` every local sweep with that many
workers runs on one pool kept for the block instead; its processes keep their imports and their candidate-path cache,
and adopt each new network's context (shipped with its batches) once.

The records do not change: every state is evaluated by the same deterministic function on the same network, context
and options (:func:`~backbone.solver.failures.evaluation.evaluate_scenario`), whichever process runs it.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from backbone.solver.core.processes import capped_workers, pool_initializer, spawn_unsafe_reason

__all__ = ["SharedPool", "active_pool", "sweep_pool"]

logger = logging.getLogger("backbone.solver.failures")


@dataclass
class SharedPool:
    """The pool a :func:`sweep_pool` block keeps.

    Attributes
    ----------
    executor
        The process pool (spawned processes that die with this one).
    workers
        Its number of processes; a sweep asking for another number starts its own pool.
    sweeps
        Sweeps it has run so far.
    broken
        Set when a process of it died: later sweeps start their own pool.
    """

    executor: ProcessPoolExecutor
    workers: int
    sweeps: int = 0
    broken: bool = False


_ACTIVE: SharedPool | None = None


def active_pool(workers: int) -> SharedPool | None:
    """The pool of the enclosing :func:`sweep_pool` block when it has ``workers`` processes and works, else None."""
    pool = _ACTIVE
    return pool if pool is not None and pool.workers == workers and not pool.broken else None


@contextmanager
def sweep_pool(workers: int | None = None) -> Iterator[SharedPool | None]:
    """Run the block's local sweeps of ``workers`` processes (default: the CPU count, capped like every pool) on one
    pool, started here and shut down at the end of the block. Nested blocks share the outer one's pool. Yields None
    (each sweep as before: serial, or a pool of its own) when one process is all it may use, in a daemonic process, or
    where spawned processes would break (:func:`~backbone.solver.core.processes.spawn_unsafe_reason`)."""
    global _ACTIVE
    if _ACTIVE is not None:
        yield _ACTIVE
        return
    n = capped_workers(workers)
    if n == 1 or mp.current_process().daemon or spawn_unsafe_reason() is not None:
        yield None
        return
    executor = ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn"), initializer=pool_initializer)
    _ACTIVE = SharedPool(executor, n)
    try:
        yield _ACTIVE
    finally:
        logger.debug("shared sweep pool: %d sweeps on %d processes", _ACTIVE.sweeps, n)
        _ACTIVE = None
        executor.shutdown(wait=True, cancel_futures=True)
