"""docs/examples/notebook_tour.py runs end to end on the shipped scenario, as a plain script without a
``__main__`` guard (its sweeps then run serially rather than hang), and prints what docs/notebook.md shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOUR = ROOT / "docs" / "examples" / "notebook_tour.py"


@pytest.mark.slow
def test_notebook_tour_runs(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    done = subprocess.run([sys.executable, str(TOUR), str(out)], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout
    assert "tables are read-only" in lines
    assert "overrides in the shipped links table" in lines
    assert "min-MLU: MLU" in lines and "utilisation" in lines
    assert "at their max_capacity_gbps: MLU" in lines
    assert "SRLG sweep: 192 scenarios" in lines  # 98 SRLGs and 94 conduit groups (#32, +Seattle-Santa Clara)
    assert "placement: " in lines
    assert "report.html: True" in lines
    assert "failure sweep runs serially" in done.stderr  # unguarded script: serial, not a broken pool
    plan = json.loads((out / "plan.json").read_text())
    assert plan["kind"] == "plan"
    # upgrading the busiest links to their limit does not raise the MLU
    mlu = float(lines.split("min-MLU: MLU ")[1].split()[0])
    after = float(lines.split("at their max_capacity_gbps: MLU ")[1].split()[2].rstrip(";"))
    assert after <= mlu + 1e-3


PYTHON_LONG = ("placement = backbone.place(", "backbone.plan(", "backbone.deck(")
"""README Python lines left to the tour above (minutes on two cores)."""


def readme_python_block() -> str:
    """The README's "From Python" code block, without :data:`PYTHON_LONG` lines."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## From Python \(a notebook\)\s+```python\n(.*?)```", text, re.S)
    assert block, "README has no 'From Python' block"
    lines = block.group(1).splitlines()
    assert sum(line.startswith(PYTHON_LONG) for line in lines) == 3
    return "\n".join(line for line in lines if not line.startswith(PYTHON_LONG)) + "\n"


@pytest.mark.slow
def test_readme_python_block_runs_as_written(tmp_path: Path) -> None:
    code = readme_python_block() + "print(te.links['utilisation'].max(), more.links.at['t-new-york-ashburn', " \
                                   "'capacity_gbps'], net.links.at['t-new-york-ashburn', 'capacity_gbps'])\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    mlu, after, before = map(float, done.stdout.split())
    assert 0 < mlu <= 1 and after == 160_000.0 and before < after
