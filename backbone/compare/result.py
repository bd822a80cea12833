"""The comparison of two scenarios, plans or roadmaps (:func:`diff`) and its typed result (:class:`DiffResult`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from backbone.artifacts import ArtifactWriter
from backbone.compare.changes import changeover, failure_changes
from backbone.compare.inputs import ComparedInput, load_input
from backbone.compare.kpis import kpi_changes, placement_changes, rank_kpis
from backbone.compare.structure import capacity_summary, network_changes
from backbone.compare.text import change_text, value_text
from backbone.model import Network

__all__ = ["TABLE_NAMES", "DiffResult", "diff", "report_section"]

logger = logging.getLogger(__name__)

TABLE_NAMES: tuple[str, ...] = ("structure", "capacity_by_cable_system", "capacity_by_region", "kpis", "placement",
                                "failures", "changeover")
"""The result's tables, in the order they are shown and written (``diff_<name>.csv``)."""


@dataclass(frozen=True)
class DiffResult:
    """What changed from ``before`` to ``after``.

    Attributes
    ----------
    before, after
        The two sides as read (kind, label, network, documents).
    structure
        One row per structural change: ``table, id, change, field, before, after, delta, unit, relative_change``
        (:func:`backbone.compare.structure.network_changes`), largest first.
    capacity_by_cable_system, capacity_by_region
        Link capacity before and after per cable system and per region (pair), where it changed.
    kpis
        The plans' (or roadmaps') KPIs with ``before, after, delta, sign, verdict`` (empty for scenarios).
    placement
        GPUs and MW per site and region where they changed (plans).
    failures
        Failure states newly survived, newly broken or with a changed impact (plans).
    changeover
        The purchases that differ, in commit order (plans and roadmaps).
    notes
        What could not be compared, in words.
    """

    before: ComparedInput
    after: ComparedInput
    structure: pd.DataFrame
    capacity_by_cable_system: pd.DataFrame
    capacity_by_region: pd.DataFrame
    kpis: pd.DataFrame
    placement: pd.DataFrame
    failures: pd.DataFrame
    changeover: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by name (:data:`TABLE_NAMES`)."""
        return {name: getattr(self, name) for name in TABLE_NAMES}

    def kpi_changed(self) -> pd.DataFrame:
        """The KPI rows whose value changed (or is known on one side only), largest change first
        (:data:`backbone.compare.kpis.RANK_RULE`); :attr:`kpis` keeps every KPI in its fixed order."""
        k = self.kpis
        if not len(k):
            return k
        return rank_kpis(k[k["sign"].isin(["+", "-"]) | (k["before"].isna() != k["after"].isna())])

    @property
    def changed(self) -> bool:
        """Whether anything differs: a structural change, a KPI, a placement, a failure state or a purchase."""
        return bool(len(self.structure) or len(self.kpi_changed()) or len(self.placement) or len(self.failures)
                    or len(self.changeover))

    def counts(self) -> dict[str, int]:
        """Rows per table (KPIs: those that changed)."""
        out = {name: len(t) for name, t in self.tables().items()}
        out["kpis"] = len(self.kpi_changed())
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``backbone diff --json``, ``diff.json``, the API): NaN becomes null when written
        (:func:`backbone.serialize.json_safe`)."""
        return {
            "kind": "diff",
            "before": {"label": self.before.label, "kind": self.before.kind, "scenario": self.before.network.name,
                       "fingerprint": self.before.network.fingerprint()},
            "after": {"label": self.after.label, "kind": self.after.kind, "scenario": self.after.network.name,
                      "fingerprint": self.after.network.fingerprint()},
            "changed": self.changed,
            "counts": self.counts(),
            "notes": list(self.notes),
            **{name: _records(t) for name, t in self.tables().items()},
        }

    def save(self, out_dir: str | Path) -> list[str]:
        """Write ``diff.json`` and one ``diff_<table>.csv`` per table to ``out_dir``; returns the file names."""
        writer = ArtifactWriter(Path(out_dir))
        for name, table in self.tables().items():
            writer.csv(f"diff_{name}.csv", table, index=False)
        writer.json("diff.json", self.to_dict())
        return list(writer.files)


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return table.astype(object).where(table.notna(), None).to_dict("records")


def _notes(a: ComparedInput, b: ComparedInput) -> list[str]:
    notes = []
    if a.kind != b.kind:
        notes.append(f"a {a.kind} is compared with a {b.kind}: only the backbones are compared "
                     "(a plan's scenario_after, a roadmap's last period)")
    elif a.kind == "scenario":
        notes.append("two scenarios: structural changes only (plan both to compare KPIs)")
    if a.kind == "roadmap" and b.kind == "roadmap":
        notes.append("roadmaps: KPIs per period and the builds; the structure is the last period's backbone")
    return notes


def diff(a: str | Path | Network | ComparedInput, b: str | Path | Network | ComparedInput) -> DiffResult:
    """Compare two scenarios, plan folders or roadmap folders (``a`` before, ``b`` after).

    Parameters
    ----------
    a, b
        Scenario paths (any format :func:`backbone.io.load_scenario` reads) or :class:`Network` objects, or
        plan / roadmap output folders.

    Returns
    -------
    DiffResult
        Empty tables (``changed`` false) when the two are the same.

    Raises
    ------
    ValidationError
        When a side is missing or is neither a scenario nor a plan or roadmap folder.

    Example
    -------
    >>> d = backbone.diff("q2-plan", "q3-plan")  # doctest: +SKIP
    >>> d.kpis[["kpi", "before", "after", "delta"]]  # doctest: +SKIP
    """
    before = a if isinstance(a, ComparedInput) else load_input(a)
    after = b if isinstance(b, ComparedInput) else load_input(b)
    na, nb = before.network, after.network
    logger.info("diff %s (%s) -> %s (%s)", before.label, before.kind, after.label, after.kind)
    return DiffResult(
        before=before, after=after,
        structure=network_changes(na, nb),
        capacity_by_cable_system=capacity_summary(na, nb, "cable_system"),
        capacity_by_region=capacity_summary(na, nb, "region"),
        kpis=kpi_changes(before, after),
        placement=placement_changes(before, after),
        failures=failure_changes(before, after),
        changeover=changeover(before, after),
        notes=_notes(before, after),
    )


def report_section(result: DiffResult, rows: int = 25) -> dict[str, Any]:
    """The report's "compared with" section as plain values (:func:`backbone.report.render_report` draws it):
    ``label``, ``counts``, ``notes``, and the first ``rows`` records of the changed KPIs (with ``before_text``,
    ``after_text``, ``change_text`` as :mod:`backbone.compare.text` writes them), the failures, the changeover and
    the structural changes."""
    kpis = result.kpi_changed().head(rows)
    units = kpis["unit"].astype(str)
    shown = kpis.assign(before_text=[value_text(v, u) for v, u in zip(kpis["before"], units, strict=True)],
                        after_text=[value_text(v, u) for v, u in zip(kpis["after"], units, strict=True)],
                        change_text=[change_text(v, u) for v, u in zip(kpis["delta"], units, strict=True)])
    return {"label": result.before.label, "kind": result.before.kind, "changed": result.changed,
            "counts": result.counts(), "notes": list(result.notes), "kpis": _records(shown), "failures": _records(result.failures.head(rows)),
            "changeover": _records(result.changeover.head(rows)),
            "structure": _records(result.structure.head(rows))}
