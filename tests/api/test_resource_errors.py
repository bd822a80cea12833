"""The classification of failures that are the environment, not a defect (backbone.api.resource_errors):
every way a job dies at its memory or CPU limit, and every way storage refuses a write."""

from __future__ import annotations

import errno
import signal
import sqlite3
from typing import Any

import pytest

from backbone.api.resource_errors import (
    MEMORY_EXIT_CODE,
    death_document,
    memory_failure,
    report_failure,
    storage_failure,
)

MIB = 1024 * 1024


def _chained(outer: BaseException, cause: BaseException) -> BaseException:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise outer from inner
    except BaseException as exc:
        return exc


def _numpy_memory_error() -> BaseException:
    import numpy as np

    try:
        from numpy._core._exceptions import _ArrayMemoryError
    except ImportError:  # numpy < 2
        from numpy.core._exceptions import _ArrayMemoryError  # type: ignore[no-redef]
    return _ArrayMemoryError((2**50,), np.dtype(np.uint8))  # type: ignore[no-any-return]


MEMORY = {
    "MemoryError": MemoryError(),
    "numpy _ArrayMemoryError": _numpy_memory_error(),
    "thread": RuntimeError("can't start new thread"),
    "ENOMEM": OSError(errno.ENOMEM, "Cannot allocate memory"),
    "mmap OSError": OSError("libssl.so.3: failed to map segment from shared object"),
    "shared-library ImportError": ImportError("/usr/lib/python3.11/lib-dynload/_ssl.so: failed to map segment "
                                              "from shared object"),
    "static TLS ImportError": ImportError("libgomp.so.1: cannot allocate memory in static TLS block"),
    "chained": _chained(ValueError("solver failed"), MemoryError()),
}
NOT_MEMORY = {
    "RuntimeError": RuntimeError("boom"),
    "ENOENT": FileNotFoundError(errno.ENOENT, "No such file or directory"),
    "missing module": ImportError("No module named 'highspy'"),
    "ValueError": ValueError("can't start new sweep"),
}


@pytest.mark.parametrize("exc", MEMORY.values(), ids=MEMORY.keys())
def test_allocation_failures_are_memory(exc: BaseException) -> None:
    assert memory_failure(exc)


@pytest.mark.parametrize("exc", NOT_MEMORY.values(), ids=NOT_MEMORY.keys())
def test_other_failures_are_not_memory(exc: BaseException) -> None:
    assert not memory_failure(exc)


class Events:
    """A stand-in for the worker's queue; ``fail`` is raised by ``put``."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.sent: list[Any] = []
        self.fail = fail

    def put(self, msg: Any) -> None:
        if self.fail is not None:
            raise self.fail
        self.sent.append(msg)


def _internal(exc: BaseException) -> dict[str, Any]:
    return {"title": "Internal error", "status": 500, "detail": type(exc).__name__, "errors": []}


@pytest.mark.parametrize("exc", MEMORY.values(), ids=MEMORY.keys())
def test_a_worker_reports_an_allocation_failure_under_its_limit_as_the_memory_limit(exc: BaseException) -> None:
    events = Events()
    report_failure("j1", exc, events, 512 * MIB, _internal)
    [(what, job, doc)] = events.sent
    assert (what, job, doc["title"]) == ("error", "j1", "Memory limit"), doc
    assert "512 MiB" in doc["detail"] and "BACKBONE_WORKER_MEMORY_MB" in doc["detail"]


def test_without_a_memory_limit_only_memory_error_is_out_of_memory() -> None:
    events = Events()
    report_failure("j1", MemoryError(), events, 0, _internal)
    report_failure("j2", RuntimeError("can't start new thread"), events, 0, _internal)
    assert [m[2]["title"] for m in events.sent] == ["Out of memory", "Internal error"]


def test_a_worker_that_cannot_even_report_the_limit_exits_with_the_memory_code(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    def fake_exit(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(os, "_exit", fake_exit)
    with pytest.raises(SystemExit) as out:
        report_failure("j1", MemoryError(), Events(fail=RuntimeError("can't start new thread")), 512 * MIB, _internal)
    assert out.value.code == MEMORY_EXIT_CODE
    with pytest.raises(ValueError, match="queue closed"):  # any other failure to report is not hidden
        report_failure("j1", RuntimeError("boom"), Events(fail=ValueError("queue closed")), 512 * MIB, _internal)


@pytest.mark.parametrize(("exitcode", "title", "named"), [
    (-signal.SIGXCPU, "CPU time limit", ["60 s", "BACKBONE_WORKER_CPU_S"]),
    (-signal.SIGKILL, "Resource limit", ["60 s", "512 MiB", "SIGKILL"]),
    (-signal.SIGABRT, "Memory limit", ["512 MiB", "exit code -6"]),
    (MEMORY_EXIT_CODE, "Memory limit", ["512 MiB"]),
    (1, "Worker died", ["exit code 1"]),
    (-signal.SIGSEGV, "Worker died", ["exit code -11"]),
])
def test_a_worker_death_is_named_by_its_exit_code(exitcode: int, title: str, named: list[str]) -> None:
    doc = death_document(exitcode, 512 * MIB, 60)
    assert doc["title"] == title and doc["status"] == 500, doc
    for text in named:
        assert text in doc["detail"], (text, doc)


def test_a_sigkill_without_server_limits_still_says_killed() -> None:
    doc = death_document(-signal.SIGKILL, 0, 0)
    assert doc["title"] == "Resource limit" and "ran out of memory" in doc["detail"]
    assert death_document(-signal.SIGABRT, 0, 0)["title"] == "Worker died"


def _sqlalchemy(message: str) -> BaseException:
    from sqlalchemy.exc import OperationalError

    return OperationalError("INSERT INTO jobs ...", (), sqlite3.OperationalError(message))


STORAGE = {
    "ENOSPC": OSError(errno.ENOSPC, "No space left on device"),
    "EDQUOT": OSError(errno.EDQUOT, "Disk quota exceeded"),
    "EROFS": OSError(errno.EROFS, "Read-only file system"),
    "EIO": OSError(errno.EIO, "Input/output error"),
    "sqlite full": _sqlalchemy("database or disk is full"),
    "sqlite read-only": _sqlalchemy("attempt to write a readonly database"),
    "raw sqlite full": sqlite3.OperationalError("database or disk is full"),
    "chained": _chained(RuntimeError("could not save"), OSError(errno.ENOSPC, "No space left on device")),
}
NOT_STORAGE = {
    "ENOENT": FileNotFoundError(errno.ENOENT, "No such file or directory"),
    "sqlite syntax": _sqlalchemy("no such table: jobs"),
    "ValueError": ValueError("disk is full of cats"),
}


@pytest.mark.parametrize("exc", STORAGE.values(), ids=STORAGE.keys())
def test_storage_failures_are_recognised(exc: BaseException) -> None:
    assert storage_failure(exc)


@pytest.mark.parametrize("exc", NOT_STORAGE.values(), ids=NOT_STORAGE.keys())
def test_other_errors_are_not_storage_failures(exc: BaseException) -> None:
    assert storage_failure(exc) is None
