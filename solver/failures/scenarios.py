"""Failure scenarios: what fails (links, SRLGs, sites, pairs of SRLGs, a planner's list) or is derated."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.solver.failures.options import DEFAULT_MAX_SCENARIOS, FailureKind

if TYPE_CHECKING:
    from backbone.solver.failures.records import ScenarioRecord


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
        ``link`` (every link), ``srlg`` (every SRLG, and every link in no SRLG as its own group, id
        ``link:<id>``), ``site`` (every site), ``srlg-pairs`` (every pair of those groups), ``srlg,link``
        (the single-SRLG states and every single-link state not already among them), ``list`` (the
        planner's ``scenarios``).
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
        out = [FailureScenario(_sid(tag, "link", lk), kind, (lk,), (lk,), derate=derate) for lk in net.links.index]
    elif kind == "srlg":
        out = [FailureScenario(sid, kind, failed, links, derate=derate) for sid, failed, links in _groups(net, tag)]
    elif kind == "srlg,link":
        out = _srlg_and_link(net, tag, derate)
    elif kind == "site":
        for s in net.sites.index:
            out.append(FailureScenario(f"site:{s}", kind, (s,), sites=(s,)))
    elif kind == "srlg-pairs":
        groups = _groups(net, tag)
        n = len(groups)
        total = n * (n - 1) // 2
        if total > max_scenarios:
            raise ValidationError(Problem(f"{total} SRLG pairs exceed the bound of {max_scenarios} scenarios; "
                                          f"{_RAISE.format(n=total)}", table="options", field="max_scenarios"))
        for (ia, fa, la), (ib, fb, lb) in itertools.combinations(groups, 2):
            members = set(la) | set(lb)
            out.append(FailureScenario(ia + "+" + ib.removeprefix(f"{tag}:" if tag else ""), kind, fa + fb,
                                       tuple(lk for lk in net.links.index if lk in members), derate=derate))
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


def _groups(net: Network, tag: str | None) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """The single-SRLG failure groups ``(scenario id, failed, links)``: every SRLG (``srlg:<id>``), then every
    link in no SRLG as its own implicit group (``link:<id>``: a link always shares its own conduit's fate, so an
    SRLG sweep that skipped it would never fail it)."""
    out: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
        (_sid(tag, "srlg", s), (str(s),), tuple(net.srlg_links([s]))) for s in net.srlgs.index]
    out += [(_sid(tag, "link", lk), (lk,), (lk,)) for lk in net.links_in_no_srlg()]
    return out


def _srlg_and_link(net: Network, tag: str | None, derate: float | None) -> list[FailureScenario]:
    """The union of the single-SRLG and single-link states; a link whose cut is already a state's is not
    repeated."""
    out = [FailureScenario(sid, "srlg", failed, links, derate=derate) for sid, failed, links in _groups(net, tag)]
    seen = {frozenset(s.links) for s in out}
    out += [FailureScenario(_sid(tag, "link", lk), "link", (lk,), (lk,), derate=derate)
            for lk in net.links.index if frozenset((lk,)) not in seen]
    return out


def implicit_groups(records: Sequence[ScenarioRecord]) -> list[str]:
    """The links swept as their own implicit group in an SRLG sweep's ``records`` (links in no SRLG)."""
    return [r.failed[0] for r in records if r.kind == "srlg" and r.scenario.split(":")[-2:-1] == ["link"]]


def implicit_groups_note(records: Sequence[ScenarioRecord]) -> str | None:
    """``"N links in no SRLG were swept as their own group"`` (with up to five ids), or None when none was."""
    links = implicit_groups(records)
    if not links:
        return None
    more = f", ... ({len(links) - 5} more)" if len(links) > 5 else ""
    return (f"{len(links)} link{'s' if len(links) != 1 else ''} in no SRLG {'were' if len(links) != 1 else 'was'} "
            f"swept as {'their' if len(links) != 1 else 'its'} own group ({', '.join(links[:5])}{more})")


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
