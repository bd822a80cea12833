"""The store on SQLite and PostgreSQL: migrations, immutable versions, compare-and-set under
concurrent writers, job state transitions and start-up recovery."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backbone.api.store import SYSTEM, ConflictError, GoneError, Principal, Store, decode_document

WHO = Principal("t1", "tester", "planner")
COUNTS = {"sites": 1, "links": 0, "demands": 0}


def doc(name: str, lon: float = 0.0) -> dict[str, object]:
    return {"name": name, "sites": [{"id": "A", "lon": lon, "lat": 0.0, "region": "NA"}]}


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    s.upgrade()
    yield s
    s.dispose()


def test_versions_are_immutable(store: Store) -> None:
    sc, v1 = store.create_scenario(doc("one"), COUNTS, "canonical-json", WHO)
    _, v2 = store.update_scenario(sc.id, doc("two", 5.0), COUNTS, "canonical-json", WHO, expected_version=1)
    assert (v1.version, v2.version) == (1, 2)
    assert decode_document(store.get_version(sc.id, 1).content)["name"] == "one"
    assert store.scenario_document(sc.id, 2)["sites"][0]["lon"] == 5.0  # type: ignore[index]
    with pytest.raises(ConflictError):
        store.update_scenario(sc.id, doc("three"), COUNTS, "canonical-json", WHO, expected_version=1)
    store.delete_scenario(sc.id, WHO, expected_version=2)
    with pytest.raises(GoneError):
        store.get_scenario(sc.id)
    # a deleted scenario's versions stay readable for the jobs that used them
    assert store.scenario_document(sc.id, 1, include_deleted=True)["name"] == "one"
    assert [a.action for a in store.list_audit()] == ["scenario.delete", "scenario.update", "scenario.create"]


def test_concurrent_writers_exactly_one_wins(store: Store) -> None:
    sc, _ = store.create_scenario(doc("base"), COUNTS, "canonical-json", WHO)
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def writer(i: int) -> None:
        barrier.wait()
        try:
            store.update_scenario(sc.id, doc(f"w{i}"), COUNTS, "canonical-json", WHO, expected_version=1)
            outcomes.append("won")
        except ConflictError:
            outcomes.append("conflict")
        except Exception as exc:  # SQLite may report a lock as an OperationalError
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("won") == 1, outcomes
    assert [v.version for v in store.list_versions(sc.id)] == [1, 2]


def test_job_transitions_and_recovery(store: Store) -> None:
    sc, _ = store.create_scenario(doc("base"), COUNTS, "canonical-json", WHO)
    a = store.create_job(sc.id, 1, "te", {}, WHO)
    b = store.create_job(sc.id, 1, "te", {}, WHO)
    claimed = store.claim_next_job()
    assert claimed is not None and claimed.id == a.id and claimed.status == "running"
    store.set_progress(a.id, 0.4, "halfway")
    assert store.get_job(a.id).progress == pytest.approx(0.4)
    # the server dies: at start-up the running job fails with a reason, the queued one stays queued
    assert store.fail_interrupted_jobs("server restarted") == [a.id]
    failed = store.get_job(a.id)
    assert failed.status == "failed" and failed.message == "server restarted"
    assert store.get_job(b.id).status == "queued"
    # a final job cannot be finished or cancelled again
    assert not store.finish_job(a.id, "succeeded", "late")
    with pytest.raises(ConflictError):
        store.cancel_job(a.id, WHO)
    assert store.cancel_job(b.id, WHO).status == "cancelled"
    assert store.claim_next_job() is None
    assert store.count_jobs_by_status() == {"queued": 0, "running": 0, "succeeded": 0, "failed": 1,
                                            "cancelled": 1}


def test_tokens(store: Store) -> None:
    tok, plain = store.create_token("viewer", "v")
    assert store.authenticate(plain) == Principal(tok.id, "v", "viewer")
    assert store.authenticate(plain + "x") is None
    store.revoke_token(tok.id, SYSTEM)
    assert store.authenticate(plain) is None
    with pytest.raises(ValueError, match="scope"):
        store.create_token("root", "r")


@pytest.mark.slow
def test_retention_frees_versions_jobs_results_and_audit(tmp_path: Path) -> None:
    """Deleted scenarios, old versions, finished jobs with their result folders and old audit entries
    are freed by the retention sweep; what a queued job still needs stays."""
    from apitest_helpers import FINAL, auth, wait_for
    from apitest_tasks import REGISTRY
    from fastapi.testclient import TestClient

    from backbone.api.app import create_app
    from backbone.api.settings import Settings

    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1,
                        max_versions_per_scenario=2, maintenance_interval_s=3600)
    doc = {"name": "tri", "sites": [{"id": s, "name": s, "lon": i, "lat": 0, "region": "NA"}
                                    for i, s in enumerate("ABC")],
           "links": [{"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 10}]}
    with TestClient(create_app(settings, task_registry=REGISTRY)) as client:
        store = client.app.state.store  # type: ignore[attr-defined]
        manager = client.app.state.jobs  # type: ignore[attr-defined]
        tok = store.create_token("planner", "p")[1]
        keep = client.post("/v1/scenarios", json=doc, headers=auth(tok)).json()["id"]
        job = client.post(f"/v1/scenarios/{keep}/jobs", json={"kind": "sleepy", "options": {"steps": 1, "step_s": 0}},
                          headers=auth(tok)).json()["id"]  # runs on version 1, which therefore stays
        wait_for(lambda: client.get(f"/v1/jobs/{job}", headers=auth(tok)).json(), lambda j: j["status"] in FINAL)
        for _ in range(4):
            assert client.put(f"/v1/scenarios/{keep}", json=doc, headers=auth(tok)).status_code == 200
        gone = client.post("/v1/scenarios", json=doc, headers=auth(tok)).json()["id"]
        assert client.delete(f"/v1/scenarios/{gone}", headers=auth(tok)).status_code == 204
        results = settings.data_dir / "results" / job
        assert results.is_dir()

        # nothing is old enough yet: only versions beyond the newest two that no job uses go
        report = manager.maintain()
        assert report.counts() == {"jobs": 0, "scenarios": 0, "versions": 2, "audit_entries": 0}
        versions = [v["version"] for v in client.get(f"/v1/scenarios/{keep}/versions", headers=auth(tok)).json()]
        assert versions == [1, 4, 5]
        assert client.get(f"/v1/scenarios/{keep}", params={"version": 2}, headers=auth(tok)).status_code == 404

        # everything finished or deleted is now past its retention
        settings.deleted_retention_days = settings.job_retention_days = 1e-9
        settings.audit_retention_days = 1e-9
        time.sleep(0.1)
        report = manager.maintain()
        assert report.job_ids == [job] and report.scenarios == 1 and report.versions == 2
        assert report.audit_entries > 10
        assert not results.exists()
        assert client.get(f"/v1/jobs/{job}", headers=auth(tok)).status_code == 404
        versions = [v["version"] for v in client.get(f"/v1/scenarios/{keep}/versions", headers=auth(tok)).json()]
        assert versions == [4, 5]
        with store.session() as s:
            from sqlalchemy import select

            from backbone.api.models import AuditEntry, Scenario, ScenarioVersion

            assert s.get(Scenario, gone) is None
            assert not list(s.scalars(select(ScenarioVersion).where(ScenarioVersion.scenario_id == gone)))
            actions = [a.action for a in s.scalars(select(AuditEntry))]
        assert actions == ["store.purge"]
