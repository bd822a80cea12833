"""Makes the job fork server die with the API server (imported by the fork server only).

:data:`backbone.api.jobs.PRELOAD` lists this module, so the fork server imports it while starting.
The fork server is a direct child of the API server; here it asks the kernel for SIGKILL when that
parent exits (``prctl(PR_SET_PDEATHSIG)``, Linux). Each job worker, a child of the fork server, asks
the same, so a kill -9 of the server takes the fork server, the workers and their pools with it.
Imported anywhere else (not from ``multiprocessing.forkserver.main``), it does nothing.
"""

from __future__ import annotations

import sys


def _in_fork_server() -> bool:
    """Whether the import runs inside ``multiprocessing.forkserver.main`` (the fork server's preload)."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    if forkserver is None:
        return False
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is forkserver.main.__code__:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


if _in_fork_server():
    from backbone.solver.core.processes import die_with_parent

    die_with_parent()
