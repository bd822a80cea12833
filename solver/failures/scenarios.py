"""Failure scenarios: what fails (links, SRLGs, sites, pairs of SRLGs, a planner's list) or is derated."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.solver.failures.options import DEFAULT_MAX_SCENARIOS, FailureKind


@dataclass(frozen=True)
class FailureScenario:
    """One what-if: elements down or derated.

    Attributes
    ----------
    id
        Stable identifier, e.g. ``srlg:red-sea`` or ``srlg:a+srlg:b``.
    kind
        ``link``, ``srlg``, ``site``, ``srlg-pairs`` or ``list``.
    failed
        The named elements (link, SRLG or site ids) as the planner gave them.
    links
        Link ids cut (or derated).
    sites
        Site ids lost (their links and demands go with them).
    derate
        When set, ``links`` keep this fraction of their capacity instead of failing.
    """

    id: str
    kind: str
    failed: tuple[str, ...]
    links: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()
    derate: float | None = None

    def apply(self, net: Network) -> Network:
        """The network as this scenario leaves it."""
        if self.derate is not None:
            return net.derate_links(self.links, self.derate) if self.links else net
        out = net.fail_sites(self.sites) if self.sites else net
        links = [lk for lk in self.links if lk in out.links.index]
        return out.fail_links(links) if links else out


def enumerate_scenarios(net: Network, kind: FailureKind, derate: float | None = None,
                        scenarios: Sequence[dict[str, Any]] | None = None,
                        max_scenarios: int = DEFAULT_MAX_SCENARIOS) -> list[FailureScenario]:
    """The failure set of ``kind``.

    Parameters
    ----------
    kind
        ``link`` (every link), ``srlg`` (every SRLG), ``site`` (every site), ``srlg-pairs``
        (every pair of SRLGs), ``list`` (the planner's ``scenarios``).
    derate
        Derate the elements to this fraction of capacity instead of failing them (not for sites).
    scenarios
        For ``list``: records ``{"id": ..., "links": [...], "srlgs": [...], "sites": [...],
        "derate": f}`` (any of the element lists).
    max_scenarios
        Refuse sweeps larger than this (a clear error, not hours of work).

    Raises
    ------
    ValidationError
        Unknown element ids, a bad derate, or too many scenarios.
    """
    if derate is not None and not 0.0 < derate < 1.0:
        raise ValidationError(Problem(f"derate must be in (0, 1), got {derate}", table="options", field="derate"))
    if derate is not None and kind == "site":
        raise ValidationError(Problem("sites cannot be derated; derate links or SRLGs", table="options",
                                      field="derate"))
    out: list[FailureScenario] = []
    tag = "derate" if derate is not None else None
    if kind == "link":
        for lk in net.links.index:
            out.append(FailureScenario(_sid(tag, "link", lk), kind, (lk,), (lk,), derate=derate))
    elif kind == "srlg":
        for s in net.srlgs.index:
            out.append(FailureScenario(_sid(tag, "srlg", s), kind, (s,), tuple(net.srlg_links([s])), derate=derate))
    elif kind == "site":
        for s in net.sites.index:
            out.append(FailureScenario(f"site:{s}", kind, (s,), sites=(s,)))
    elif kind == "srlg-pairs":
        n = len(net.srlgs)
        total = n * (n - 1) // 2
        if total > max_scenarios:
            raise ValidationError(Problem(f"{total} SRLG pairs exceed the bound of {max_scenarios} scenarios; "
                                          f"{_RAISE.format(n=total)}", table="options", field="max_scenarios"))
        for a, b in itertools.combinations(net.srlgs.index, 2):
            out.append(FailureScenario(_sid(tag, "srlg", a) + "+" + f"srlg:{b}", kind, (a, b),
                                       tuple(net.srlg_links([a, b])), derate=derate))
    elif kind == "list":
        out = _list_scenarios(net, scenarios or [], derate)
    else:
        raise ValidationError(Problem(f"unknown failure kind {kind!r}", table="options", field="kind"))
    if len(out) > max_scenarios:
        raise ValidationError(Problem(f"{len(out)} {kind} scenarios exceed the bound of {max_scenarios}; "
                                      f"{_RAISE.format(n=len(out))}", table="options", field="max_scenarios"))
    return out


_RAISE = ("to run them all raise max_scenarios (CLI: --max-scenarios {n}; Python: max_scenarios={n}; API job "
          "option max_scenarios, up to the server's BACKBONE_MAX_SCENARIOS), or sweep a chosen subset with kind "
          "'list'")
"""How to run a sweep larger than the bound (the refusal message's second half)."""


def _sid(tag: str | None, kind: str, element: str) -> str:
    return f"{tag + ':' if tag else ''}{kind}:{element}"


def _list_scenarios(net: Network, records: Sequence[dict[str, Any]], derate: float | None) -> list[FailureScenario]:
    problems: list[Problem] = []
    out: list[FailureScenario] = []
    if not records:
        problems.append(Problem("kind 'list' needs scenarios", table="options", field="scenarios"))
    for i, rec in enumerate(records):
        rid = str(rec.get("id") or f"scenario-{i + 1}")
        unknown_keys = set(rec) - {"id", "links", "srlgs", "sites", "derate"}
        problems += [Problem(f"unknown key {k!r}", table="scenarios", record=rid, field=k) for k in sorted(unknown_keys)]
        links = [str(x) for x in rec.get("links") or []]
        srlgs = [str(x) for x in rec.get("srlgs") or []]
        sites = [str(x) for x in rec.get("sites") or []]
        for table, ids, index in (("links", links, net.links.index), ("srlgs", srlgs, net.srlgs.index),
                                  ("sites", sites, net.sites.index)):
            problems += [Problem(f"unknown {table[:-1]} {x!r}", table="scenarios", record=rid, field=table)
                         for x in ids if x not in index]
        f = rec.get("derate", derate)
        if f is not None:
            try:
                f = float(f)
            except (TypeError, ValueError):
                problems.append(Problem(f"derate must be a number, got {f!r}", table="scenarios", record=rid,
                                        field="derate"))
                continue
            if not 0.0 < f < 1.0:
                problems.append(Problem(f"derate must be in (0, 1), got {f}", table="scenarios", record=rid,
                                        field="derate"))
            if sites:
                problems.append(Problem("sites cannot be derated", table="scenarios", record=rid, field="derate"))
        if not (links or srlgs or sites):
            problems.append(Problem("scenario fails nothing", table="scenarios", record=rid))
        if problems:
            continue
        all_links = list(dict.fromkeys([*links, *net.srlg_links(srlgs)]))
        out.append(FailureScenario(rid, "list", tuple([*links, *srlgs, *sites]), tuple(all_links), tuple(sites),
                                   derate=f))
    if problems:
        raise ValidationError(problems)
    return out


def load_scenario_list(path: str | Path) -> list[dict[str, Any]]:
    """Read a planner's scenario list: YAML/JSON (a list of records, or ``{"scenarios": [...]}``).

    Raises
    ------
    ValidationError
        When the file is unreadable or not a list of records.
    """
    import json

    import yaml

    p = Path(path)
    if not p.exists():
        raise ValidationError(Problem("file not found", file=str(p)))
    try:
        text = p.read_text(encoding="utf-8")
        doc = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValidationError(Problem(f"not valid {p.suffix.lstrip('.').upper() or 'YAML'}: {exc}".splitlines()[0],
                                      file=str(p))) from None
    if isinstance(doc, dict):
        doc = doc.get("scenarios")
    if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
        raise ValidationError(Problem("expected a list of scenario records", file=str(p)))
    return doc
