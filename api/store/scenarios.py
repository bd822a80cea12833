"""The scenario repository: versioned scenario documents (compressed canonical JSON), optimistic
concurrency through If-Match versions, read-only shared scenarios and soft deletion."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from backbone.api.models import Scenario, ScenarioVersion, utcnow
from backbone.api.store.audit import record_audit
from backbone.api.store.base import (
    UNCONDITIONAL_RETRIES,
    ConflictError,
    Database,
    EncodedDocument,
    GoneError,
    Principal,
    ReadOnlyError,
    clean_text,
    decode_document,
    new_id,
    same_team,
)


class ScenarioRepository:
    """Scenarios and their versions, visible per team (read-only scenarios to every team)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create_scenario(self, doc: dict[str, Any] | EncodedDocument, counts: dict[str, int], source_format: str,
                        who: Principal, read_only: bool = False) -> tuple[Scenario, ScenarioVersion]:
        """Store a new scenario at version 1, owned by the caller's team (``read_only``: nobody may
        change or delete it, every team may read it). ``doc`` may come encoded (:class:`EncodedDocument`)."""
        sid = new_id()
        now = utcnow()
        doc = EncodedDocument.of(doc)
        name = clean_text(doc.name or "scenario")
        with self.db.session() as s:
            sc = Scenario(id=sid, name=name, head_version=1, created_at=now, updated_at=now, created_by=who.name,
                          team_id=who.team_id, read_only=read_only, created_by_token=who.token_id)
            s.add(sc)
            s.flush()
            ver = self.add_version(s, sid, 1, doc, counts, source_format, who, now)
            record_audit(s, who, "scenario.create", "scenario", sid,
                         {"version": 1, "name": name, "format": source_format, **counts})
        return sc, ver

    @staticmethod
    def add_version(s: Session, sid: str, version: int, doc: EncodedDocument, counts: dict[str, int],
                     source_format: str, who: Principal, now: datetime) -> ScenarioVersion:
        """Add version ``version`` of scenario ``sid`` to session ``s`` (the caller moves the head)."""
        ver = ScenarioVersion(scenario_id=sid, version=version,
                              name=clean_text(doc.name or "scenario"),
                              sha256=doc.sha256, content=doc.content, size_bytes=doc.size_bytes, sites=counts["sites"],
                              links=counts["links"], demands=counts["demands"], source_format=source_format,
                              created_at=now, created_by=who.name, created_by_token=who.token_id)
        s.add(ver)
        return ver

    def get_scenario(self, sid: str, who: Principal | None = None) -> tuple[Scenario, ScenarioVersion]:
        """A live scenario and its head version (visible to ``who``; None: no check). Raises GoneError."""
        with self.db.session() as s:
            sc = s.get(Scenario, sid)
            if sc is None or sc.deleted_at is not None or (who is not None and not who.sees(sc.team_id, sc.read_only)):
                raise GoneError(f"no scenario {sid}")
            ver = s.get(ScenarioVersion, (sid, sc.head_version))
            assert ver is not None
            return sc, ver

    def get_version(self, sid: str, version: int, include_deleted: bool = False,
                    who: Principal | None = None) -> ScenarioVersion:
        """One version of a scenario (visible to ``who``; None: no check). Raises GoneError."""
        with self.db.session() as s:
            sc = s.get(Scenario, sid)
            if sc is None or (sc.deleted_at is not None and not include_deleted) or \
                    (who is not None and not who.sees(sc.team_id, sc.read_only)):
                raise GoneError(f"no scenario {sid}")
            ver = s.get(ScenarioVersion, (sid, version))
            if ver is None:
                raise GoneError(f"scenario {sid} has no version {version}")
            return ver

    def list_scenarios(self, limit: int = 100, offset: int = 0,
                       who: Principal | None = None) -> list[tuple[Scenario, ScenarioVersion]]:
        """Live scenarios (those ``who`` sees) with their head versions, newest first."""
        with self.db.session() as s:
            q = (select(Scenario, ScenarioVersion)
                 .join(ScenarioVersion, (ScenarioVersion.scenario_id == Scenario.id)
                       & (ScenarioVersion.version == Scenario.head_version))
                 .where(Scenario.deleted_at.is_(None))
                 .order_by(Scenario.created_at.desc(), Scenario.id).limit(limit).offset(offset))
            if who is not None and not who.is_admin:
                q = q.where(same_team(Scenario.team_id, who.team_id) | Scenario.read_only.is_(True))
            return [(sc, ver) for sc, ver in s.execute(q).all()]

    def list_versions(self, sid: str, who: Principal | None = None) -> list[ScenarioVersion]:
        """Every version of a live scenario, oldest first. Raises GoneError."""
        with self.db.session() as s:
            sc = s.get(Scenario, sid)
            if sc is None or sc.deleted_at is not None or (who is not None and not who.sees(sc.team_id, sc.read_only)):
                raise GoneError(f"no scenario {sid}")
            return list(s.scalars(select(ScenarioVersion).where(ScenarioVersion.scenario_id == sid)
                                  .order_by(ScenarioVersion.version)))

    def update_scenario(self, sid: str, doc: dict[str, Any] | EncodedDocument, counts: dict[str, int], source_format: str,
                        who: Principal, expected_version: int | None) -> tuple[Scenario, ScenarioVersion]:
        """Add a new head version; ``expected_version`` (from If-Match) guards against lost updates.

        Raises
        ------
        GoneError
            Unknown or deleted scenario.
        ConflictError
            When the head is no longer ``expected_version``. Without ``expected_version`` the
            write is unconditional: a concurrent writer that wins the race makes this one retry on
            the new head, never fail.
        """
        for attempt in range(UNCONDITIONAL_RETRIES):
            try:
                return self._update_scenario_once(sid, EncodedDocument.of(doc), counts, source_format, who,
                                                  expected_version)
            except ConflictError as exc:
                if expected_version is not None or isinstance(exc, ReadOnlyError) or \
                        attempt == UNCONDITIONAL_RETRIES - 1:
                    raise
                time.sleep(0.005 * (attempt + 1))
        raise AssertionError("unreachable")

    def _update_scenario_once(self, sid: str, doc: EncodedDocument, counts: dict[str, int], source_format: str,
                              who: Principal, expected_version: int | None) -> tuple[Scenario, ScenarioVersion]:
        now = utcnow()
        with self.db.session() as s:
            sc = s.get(Scenario, sid)
            self.check_scenario_writable(sc, sid, who)
            assert sc is not None
            head = sc.head_version
            if expected_version is not None and expected_version != head:
                raise ConflictError(f"scenario {sid} is at version {head}, not {expected_version}")
            # compare-and-set in the database too, so two concurrent writers cannot both win
            res = s.execute(update(Scenario).where(Scenario.id == sid, Scenario.head_version == head,
                                                   Scenario.deleted_at.is_(None))
                            .values(head_version=head + 1, updated_at=now,
                                    name=clean_text(doc.name or sc.name)))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                raise ConflictError(f"scenario {sid} was changed concurrently")
            ver = self.add_version(s, sid, head + 1, doc, counts, source_format, who, now)
            record_audit(s, who, "scenario.update", "scenario", sid, {"version": head + 1, **counts})
        sc2, _ = self.get_scenario(sid)
        return sc2, ver

    def check_writable(self, sid: str, who: Principal) -> None:
        """Raise GoneError / ReadOnlyError unless ``who`` may replace or delete the scenario (checked
        before a large body is read; the write itself checks again)."""
        with self.db.session() as s:
            self.check_scenario_writable(s.get(Scenario, sid), sid, who)

    @staticmethod
    def check_scenario_writable(sc: Scenario | None, sid: str, who: Principal) -> None:
        """GoneError unless ``who`` sees the scenario; ReadOnlyError when it is read-only; ConflictError-free
        otherwise. A planner of another team gets 404 (the scenario's existence is not revealed)."""
        if sc is None or sc.deleted_at is not None or not who.sees(sc.team_id, sc.read_only):
            raise GoneError(f"no scenario {sid}")
        if sc.read_only:
            raise ReadOnlyError(f"scenario {sid} ({sc.name}) is read-only; copy it to change it")
        if not who.owns(sc.team_id):
            raise GoneError(f"no scenario {sid}")

    def delete_scenario(self, sid: str, who: Principal, expected_version: int | None) -> None:
        """Mark a scenario deleted (its versions stay, so jobs keep their inputs); unconditional
        (retried past concurrent updates) without ``expected_version``."""
        for attempt in range(UNCONDITIONAL_RETRIES):
            try:
                self._delete_scenario_once(sid, who, expected_version)
                return
            except ConflictError as exc:
                if expected_version is not None or isinstance(exc, ReadOnlyError) or \
                        attempt == UNCONDITIONAL_RETRIES - 1:
                    raise
                time.sleep(0.005 * (attempt + 1))

    def _delete_scenario_once(self, sid: str, who: Principal, expected_version: int | None) -> None:
        now = utcnow()
        with self.db.session() as s:
            sc = s.get(Scenario, sid)
            self.check_scenario_writable(sc, sid, who)
            assert sc is not None
            if expected_version is not None and expected_version != sc.head_version:
                raise ConflictError(f"scenario {sid} is at version {sc.head_version}, not {expected_version}")
            res = s.execute(update(Scenario).where(Scenario.id == sid, Scenario.head_version == sc.head_version,
                                                   Scenario.deleted_at.is_(None)).values(deleted_at=now))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                raise ConflictError(f"scenario {sid} was changed concurrently")
            record_audit(s, who, "scenario.delete", "scenario", sid, {"version": sc.head_version})

    def scenario_document(self, sid: str, version: int, include_deleted: bool = False) -> dict[str, Any]:
        """The canonical JSON document of one version."""
        return decode_document(self.get_version(sid, version, include_deleted).content)

