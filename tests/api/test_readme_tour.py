"""The README's "A short tour" runs as written, with the installed ``backbone`` command, in an empty folder.

Every command of the tour's code block is run through the shell exactly as printed (redirections
included) except the three long ones, ``failures --kind srlg`` (~2 minutes on two cores) and
``plan`` and ``roadmap`` (several minutes); they are covered by tests/solver/test_failures.py,
tests/solver/test_plan.py and tests/solver/test_roadmap.py, and ``diff`` and ``deck``, which read those plans'
folders (tests/backbone/test_compare.py, test_deck.py). A command added to the tour is run here automatically.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LONG = ("backbone failures ", "backbone plan ", "backbone roadmap ")
"""Tour commands left to their own tests (too slow for this one)."""
NEEDS_PLANS = ("backbone diff plan-out ", "backbone deck plan-out ")
"""Tour commands that read plan folders the long commands write (tests/backbone/test_compare.py and
test_deck.py run them on plans of their own)."""


def tour_commands() -> list[str]:
    """The commands of the README's tour block, comments stripped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## A short tour\s+```bash\n(.*?)```", text, re.S)
    assert block, "README has no tour block"
    commands = []
    for line in block.group(1).splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command:
            commands.append(command)
    return commands


def test_the_tour_block_is_what_this_test_expects() -> None:
    commands = tour_commands()
    assert len(commands) >= 8 and all(c.startswith("backbone ") for c in commands)
    assert sum(c.startswith(LONG) for c in commands) == 3
    assert sum(c.startswith(NEEDS_PLANS) for c in commands) == 2


@pytest.fixture(scope="module")
def tour_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tour")


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in tour_commands() if not c.startswith(LONG + NEEDS_PLANS)])
def test_tour_command_runs_as_written(command: str, tour_dir: Path) -> None:
    exe = shutil.which("backbone") or str(Path(sys.executable).with_name("backbone"))
    if not Path(exe).exists():
        pytest.skip("the backbone console script is not installed")
    env = {**os.environ, "PATH": f"{Path(exe).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(command, shell=True, cwd=tour_dir, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, f"{command!r} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    if "--json" in command and ">" not in command:
        json.loads(proc.stdout)
    if "> place.json" in command:
        placed = json.loads((tour_dir / "place.json").read_text())
        # on a loaded machine the MIP can reach its 60 s limit with a proven near-optimal incumbent
        assert placed["status"] == "optimal" or (placed["status"] == "feasible" and placed["gap"] <= 0.01)
        assert placed["served_share"] == pytest.approx(1.0)
    if "--verify" in command:
        assert "verified" in proc.stderr
    if "map --out world.png" in command:
        assert (tour_dir / "world.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if '"-33.87,151.21"' in command:
        assert "sydney" in proc.stdout
