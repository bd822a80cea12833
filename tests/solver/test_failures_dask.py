"""Where a sweep ran (``ran_on``) and a Dask scheduler that is not there: the sweep fails at once, naming it, before
the baseline is solved (the API's jobs on a cluster: ``tests/api/test_api_dask.py``)."""

from __future__ import annotations

import socket
import time

import pytest

from backbone.errors import SolverError
from backbone.model import Network
from backbone.solver.failures import FailureOptions, SweepEngineInfo, sweep
from backbone.solver.failures import result as result_mod
from backbone.solver.failures.summary import ran_on_text


def test_a_sweep_says_where_it_ran(triangle: Network) -> None:
    res = sweep(triangle, FailureOptions(kind="link", engine="serial"))
    assert res.ran_on == SweepEngineInfo(engine="serial", workers=1, threads=1)
    assert res.summary()["ran_on"] == {"engine": "serial", "workers": 1, "threads": 1, "scheduler": None}
    assert ran_on_text(res.ran_on) == "this process"
    where = SweepEngineInfo(engine="dask", workers=2, threads=4, scheduler="tcp://10.0.0.5:8786")
    assert ran_on_text(where) == "dask tcp://10.0.0.5:8786 (2 workers, 4 threads)"


def test_unreachable_scheduler_fails_before_the_baseline(triangle: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        addr = f"tcp://127.0.0.1:{s.getsockname()[1]}"

    def no_baseline(*args: object, **kwargs: object) -> None:
        raise AssertionError("the baseline was solved before the scheduler was reached")

    monkeypatch.setattr(result_mod, "worker_context", no_baseline)
    t0 = time.monotonic()
    with pytest.raises(SolverError, match=r"cannot reach the Dask scheduler 'tcp://127\.0\.0\.1:\d+' within 0\.3 s"):
        sweep(triangle, FailureOptions(kind="link", engine="dask", scheduler=addr, scheduler_timeout_s=0.3))
    assert time.monotonic() - t0 < 10


def test_scheduler_timeout_is_bounded() -> None:
    with pytest.raises(ValueError, match="scheduler_timeout_s"):
        FailureOptions(scheduler_timeout_s=0)
