"""A failure sweep run from a plain script: with or without ``if __name__ == "__main__":`` it finishes.

Spawned pool workers execute the main script again; a sweep at an unguarded top level used to start again
in every worker, which broke the pool (or hung). Each script runs in a subprocess with a timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from backbone.solver.core.processes import spawn_unsafe_reason

ROOT = Path(__file__).resolve().parents[2]

SWEEP = """
from backbone.solver.failures import FailureOptions, sweep
from backbone.validate import build_network

sites = [{"id": s, "lon": x, "lat": 0.0, "region": "NA"} for s, x in [("A", 0), ("B", 1), ("C", 2), ("D", 3)]]
links = [{"id": a + b, "site_a": a, "site_b": b, "capacity_gbps": 10} for a, b in
         [("A", "B"), ("B", "C"), ("C", "D"), ("A", "C"), ("B", "D"), ("A", "D")]]
net = build_network({"sites": sites, "links": links,
                     "demands": [{"id": "d", "src": "A", "dst": "D", "demand_gbps": 5}]})
"""
RUN = 'r = sweep(net, FailureOptions(kind="link", workers=2, batch_size=1))\nprint("scenarios", len(r.table()))\n'


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(body)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_unguarded_sweep_finishes(tmp_path: Path) -> None:
    done = _run(tmp_path, SWEEP + RUN)
    assert done.returncode == 0, done.stderr
    assert "scenarios 6" in done.stdout
    assert "without an 'if __name__" in done.stderr  # it says why it ran serially
    assert "BrokenProcessPool" not in done.stderr


@pytest.mark.slow
def test_sweep_piped_to_python_finishes(tmp_path: Path) -> None:
    """``python - < script.py``: worker processes cannot run a main read from stdin (this one hung)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-"], input=SWEEP + 'if __name__ == "__main__":\n'
                          + textwrap.indent(RUN, "    "), cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "scenarios 6" in done.stdout
    assert "not a file that worker processes can run" in done.stderr


@pytest.mark.slow
def test_guarded_sweep_uses_the_pool(tmp_path: Path) -> None:
    done = _run(tmp_path, SWEEP + 'if __name__ == "__main__":\n' + textwrap.indent(RUN, "    "))
    assert done.returncode == 0, done.stderr
    assert "scenarios 6" in done.stdout
    assert "running serially" not in done.stderr


def test_spawn_unsafe_reason_reads_the_guard(tmp_path: Path) -> None:
    body = textwrap.dedent("""
        from backbone.solver.core.processes import spawn_unsafe_reason

        def call():
            return spawn_unsafe_reason() is not None

        print("top", call())
        if __name__ == "__main__":
            with open(__file__):
                print("guarded", call())
        else:
            print("else", call())
        if __name__ != "__main__":
            pass
        for _ in range(1):
            print("loop", call())
    """)
    done = _run(tmp_path, body)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["top", "True", "guarded", "False", "loop", "True"]


@pytest.mark.parametrize("argv", [["-c", "from backbone.solver.core.processes import spawn_unsafe_reason as m; print(m())"]])
def test_no_main_file_is_safe(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, *argv], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "None", done.stderr
    assert spawn_unsafe_reason() is None  # under pytest: the caller is not a main script's top level
