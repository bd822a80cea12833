"""Progress when stderr is not a terminal: plain, throttled lines (no ANSI codes); ``--json`` stdout stays JSON."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from backbone.api.cli.progress_lines import PlainProgress
from backbone.io import save_scenario
from backbone.model import Network

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^\[\s*\d+ s\] (?P<kind>[a-z]+)\s+\d+ %: (?P<message>.*)$")


class FakeClock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


def test_one_line_per_stage_and_at_most_one_per_interval_within_a_stage() -> None:
    lines: list[str] = []
    clock = FakeClock()
    plain = PlainProgress("plan", lines.append, interval_s=10.0, clock=clock)
    plain(0.0, "place: building the placement model")
    for i in range(1, 98):  # a sweep reporting every state, one every 0.5 s
        clock.now_s = 0.5 * i
        plain(i / 97, f"failures: {i}/97 scenarios (srlg:s{i})")
    clock.now_s = 60.0
    plain(0.9, "upgrades: iteration 1")
    plain.finish()
    assert lines[0] == "[    0 s] plan   0 %: place: building the placement model\n"
    assert lines[1].startswith("[    0 s] plan   1 %: failures: 1/97 scenarios")  # a new stage: at once
    times = [int(LINE.match(x.rstrip("\n")).group(0).split("]")[0].strip("[ s")) for x in lines]  # type: ignore[union-attr]
    failures = [t for t, x in zip(times, lines, strict=True) if ": failures:" in x]
    assert failures == [0, 10, 20, 30, 40]  # throttled: 97 messages, 5 lines
    assert lines[-2] == "[   60 s] plan  90 %: upgrades: iteration 1\n"
    assert lines[-1] == "[   60 s] plan 100 %: done\n"


@pytest.mark.slow
def test_a_silent_stage_still_gets_a_line_every_interval() -> None:
    """A long MIP reports nothing for minutes: the heartbeat repeats its last message, then stops with the run."""
    import time

    lines: list[str] = []
    with PlainProgress("roadmap", lines.append, interval_s=0.1) as plain:
        plain(0.4, "2027Q3: design MIP")
        time.sleep(0.65)
    n = len(lines)
    time.sleep(0.3)
    assert len(lines) == n  # stopped with the context
    assert 4 <= n <= 8 and all(x.endswith("roadmap  40 %: 2027Q3: design MIP\n") for x in lines)


@pytest.mark.slow
def test_a_piped_stderr_gets_plain_progress_lines_and_stdout_only_json(tmp_path: Path, triangle: Network) -> None:
    scenario = save_scenario(triangle, tmp_path / "triangle.json")
    p = subprocess.run([sys.executable, "-m", "backbone.api", "te", str(scenario), "--json"], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    json.loads(p.stdout)  # stdout carries only JSON
    assert "\x1b" not in p.stderr  # no colour or cursor codes in a log
    progress = [m for m in map(LINE.match, p.stderr.splitlines()) if m]
    assert progress and all(m.group("kind") == "te" for m in progress)
    assert progress[-1].group("message") == "done"
