"""SNDlib native solution files: link configurations and routings per state, parsed into an
:class:`SndlibSolution` (the writer, which needs a design, is :func:`backbone.solver.design.sndlib.write_solution`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from backbone.errors import Problem, ValidationError


@dataclass(frozen=True)
class SndlibSolution:
    """A parsed solution file: ``configurations`` {link: [(capacity, count)]} and ``routings``
    {state: {demand: [(flow, [link ids])]}}."""

    configurations: dict[str, list[tuple[float, float]]]
    routings: dict[str, dict[str, list[tuple[float, list[str]]]]]

    def capacities(self) -> dict[str, float]:
        """Installed capacity per link (pre-installed included)."""
        return {lk: sum(c * n for c, n in mods) for lk, mods in self.configurations.items()}


def parse_solution(path: str | Path, text: str | None = None) -> SndlibSolution:
    """Read an SNDlib native solution file.

    Raises
    ------
    ValidationError
        For malformed content (file and line).
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="replace") if text is None else text
    toks: list[tuple[str, int]] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if raw.lstrip().startswith("?"):
            continue
        toks += [(m.group(0), n) for m in re.finditer(r"\(|\)|[^\s()]+", raw.split("#", 1)[0])]
    i = 0
    configs: dict[str, list[tuple[float, float]]] = {}
    routings: dict[str, dict[str, list[tuple[float, list[str]]]]] = {}

    def fail(msg: str, line: int) -> ValidationError:
        return ValidationError(Problem(msg, file=str(p), record=f"line {line}"))

    def group(j: int) -> tuple[list[str], int]:
        if j >= len(toks) or toks[j][0] != "(":
            raise fail("expected '('", toks[min(j, len(toks) - 1)][1] if toks else 0)
        out: list[str] = []
        j += 1
        while j < len(toks) and toks[j][0] != ")":
            out.append(toks[j][0])
            j += 1
        if j >= len(toks):
            raise fail("unclosed '('", toks[-1][1])
        return out, j + 1

    try:
        while i < len(toks):
            word, line = toks[i]
            if word in ("LINK-CONFIGURATIONS", "LINK_CONFIGURATIONS"):
                i += 2
                while toks[i][0] != ")":
                    lid = toks[i][0]
                    vals, i = group(i + 1)
                    nums = [float(v) for v in vals]
                    configs[lid] = list(zip(nums[0::2], nums[1::2], strict=False))
                i += 1
            elif word in ("ROUTINGS", "ROUTING"):
                state = toks[i + 1][0]
                i += 3
                routing: dict[str, list[tuple[float, list[str]]]] = {}
                while toks[i][0] != ")":
                    did = toks[i][0]
                    i += 2
                    paths = []
                    while toks[i][0] != ")":
                        amount = float(toks[i][0])
                        links, i = group(i + 1)
                        paths.append((amount, links))
                    routing[did] = paths
                    i += 1
                routings[state] = routing
                i += 1
            else:
                raise fail(f"unexpected {word!r}", line)
    except (IndexError, ValueError) as exc:
        raise fail(f"malformed solution file ({exc})", toks[min(i, len(toks) - 1)][1] if toks else 0) from None
    return SndlibSolution(configs, routings)
