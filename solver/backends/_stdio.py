"""Keep solver banners off stdout (``--json`` promises stdout carries only JSON)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def stdout_to_stderr(discard: bool = False) -> Iterator[None]:
    """Redirect file descriptor 1 to 2 (or to /dev/null when ``discard``) for the duration:
    C libraries print to fd 1 directly."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield
        return
    target = os.open(os.devnull, os.O_WRONLY) if discard else 2
    try:
        os.dup2(target, 1)
        yield
    finally:
        try:
            sys.stdout.flush()
        except ValueError:
            pass
        os.dup2(saved, 1)
        os.close(saved)
        if discard:
            os.close(target)
