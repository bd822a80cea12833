"""Child processes of the solver: how many a run may start, and tying their life to their parent's.

A sweep or a path search may start a process pool. On a laptop the CLI uses every CPU; inside the
API server each job is one worker process and the server caps how many processes that job may
start (``BACKBONE_JOB_PROCESSES``). The cap is process-wide state set once by the API's worker
(:func:`set_process_limit`), read by every pool (:func:`capped_workers`).

:func:`die_with_parent` asks Linux to SIGKILL the calling process when its parent exits
(``prctl(PR_SET_PDEATHSIG)``), so pool processes do not keep computing after the process that
started them died; elsewhere it does nothing.

:func:`spawn_unsafe_reason` tells whether spawned pool processes would break: a plain script that
starts a sweep at its top level, outside ``if __name__ == "__main__":``, is executed again by every
spawned child (that is how spawn finds ``__main__``), which then starts a pool of its own while
bootstrapping; a script piped to ``python -`` cannot be run by the children at all. Either way the
pool breaks or hangs; sweeps run serially instead.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import ctypes.util
import functools
import os
import signal
import sys
from types import FrameType

_PROCESS_LIMIT: int | None = None
PR_SET_PDEATHSIG = 1
"""``prctl`` option number (linux/prctl.h)."""


def set_process_limit(limit: int | None) -> None:
    """Cap the processes any pool of this process may start (None: no cap, use every CPU)."""
    global _PROCESS_LIMIT
    if limit is not None and limit < 1:
        raise ValueError(f"process limit must be at least 1, got {limit}")
    _PROCESS_LIMIT = limit


def process_limit() -> int | None:
    """The cap set by :func:`set_process_limit` (None when there is none)."""
    return _PROCESS_LIMIT


def capped_workers(requested: int | None) -> int:
    """Processes a pool may start: ``requested`` (default: the CPU count), at most the process limit."""
    n = requested or os.cpu_count() or 1
    if _PROCESS_LIMIT is not None:
        n = min(n, _PROCESS_LIMIT)
    return max(1, n)


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Have the kernel send ``sig`` to this process when its parent exits (Linux only).

    Returns True when the request was registered. If the parent is already gone (re-parented to
    init or a subreaper) the process exits at once, so no orphan keeps computing.
    """
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        ok = libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
    if parent == 1 or os.getppid() != parent:  # died before the request took effect
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), sig)
        os._exit(1)
    return ok


def pool_initializer() -> None:
    """Initializer for solver process pools: each pool process dies with the process that started it."""
    die_with_parent()


def spawn_unsafe_reason() -> str | None:
    """Why spawned pool processes would break when started from the calling code (None: they would not).

    Spawn prepares every child by running the main module again as ``__mp_main__`` (a script run as
    ``python script.py`` or ``python -m module``; not a package's ``__main__``, ``python -c``, an
    interactive session or a notebook). Two cases break a pool:

    * the main script's file does not exist (``python - < script.py``): every child fails to start;
    * the calling code runs at the top level of the main script outside an ``if __name__ ==
      "__main__":`` block: every child runs it again and starts a pool of its own while bootstrapping.

    A main script whose source cannot be parsed counts as guarded.
    """
    main = sys.modules.get("__main__")
    if main is None:
        return None
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    if spec_name is not None and (spec_name == "__main__" or spec_name.endswith(".__main__")):
        return None  # multiprocessing does not run a package's __main__ again
    path = getattr(main, "__file__", None)
    if not path:
        return None  # -c, interactive or a notebook: nothing is run again
    if spec_name is None and not os.path.isfile(path):
        return f"the main script {path!r} is not a file that worker processes can run"
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            if _guarded(os.path.abspath(path), frame.f_lineno):
                return None
            return (f"started at the top level of {os.path.basename(path)} (line {frame.f_lineno}) without an "
                    "'if __name__ == \"__main__\":' guard, which every worker process would run again")
        frame = frame.f_back
    return None  # the main script's top level has finished: nothing it runs again calls us


@functools.lru_cache(maxsize=8)
def _main_tree(path: str) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as f:
            return ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None


def _guarded(path: str, line: int) -> bool:
    """Whether ``line`` of the script at ``path`` lies inside an ``if __name__ == "__main__":`` body."""
    tree = _main_tree(path)
    if tree is None:
        return True
    body: list[ast.stmt] = list(tree.body)
    while True:
        stmt = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if stmt is None:
            return False
        if isinstance(stmt, ast.If) and _is_main_test(stmt.test):
            if any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in stmt.body):
                return True
            body = list(stmt.orelse)
            continue
        inner = [s for name in ("body", "orelse", "finalbody", "handlers") for s in getattr(stmt, name, [])
                 if isinstance(s, ast.stmt)]
        if not inner:
            return False
        body = inner + [s for h in getattr(stmt, "handlers", []) for s in h.body]


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either order)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))
