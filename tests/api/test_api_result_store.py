"""Results in an S3-compatible object store (``BACKBONE_RESULT_STORE=s3://bucket/prefix``), against a real S3 server
on loopback (moto's server mode, the ``test`` extra): a job run through the API by the server itself, and one run by
a ``backbone worker`` process with no folder shared with the server, store their files in the bucket and not in a
results folder; the API lists them and streams them with the same types and checks as from the folder; the
stored-bytes quota counts them; and a store that cannot be used stops ``serve`` and ``worker`` at start with one
line. The results folder (the default) is what every other API test uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from backbone.api.app import create_app
from backbone.api.cli.main import app as cli_app
from backbone.api.jobs import apply_retention
from backbone.api.result_store import ObjectResultStore, parse_result_store
from backbone.api.settings import Settings
from backbone.api.store import Store
from backbone.io import network_to_dict
from backbone.model import Network

PREFIX = "team-results/backbone"


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A real S3 API (moto's threaded server) on a free loopback port."""
    pytest.importorskip("s3fs", reason="the s3 extra (s3fs) is part of the test extra")
    server_mod = pytest.importorskip("moto.server", reason="moto[server] is part of the test extra")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{server._server.port}"  # moto keeps the bound port there
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An empty bucket of its own on the S3 server, reached through the standard AWS variables (as a deployment
    would), and a boto3 client on it."""
    import boto3

    for name, value in {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "test-key",
                        "AWS_SECRET_ACCESS_KEY": "test-secret", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    client = boto3.client("s3")
    name = f"results-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    client.bucket_name = name
    return client


def _objects(bucket: Any, job_id: str) -> dict[str, int]:
    prefix = f"backbone/{job_id}/"
    listed = bucket.list_objects_v2(Bucket=bucket.bucket_name, Prefix=prefix).get("Contents", [])
    return {o["Key"][len(prefix):]: o["Size"] for o in listed}


def _client(settings: Settings) -> TestClient:
    return TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False)


def _run_te(client: TestClient, tok: str, net: Network) -> dict[str, Any]:
    sid = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok)).json()["id"]
    job = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {}}, headers=auth(tok))
    assert job.status_code == 202, job.text
    done = wait_for(lambda: client.get(f"/v1/jobs/{job.json()['id']}", headers=auth(tok)).json(),
                    lambda j: j["status"] in FINAL, timeout_s=120)
    assert done["status"] == "succeeded", done
    return done


def _check_downloads(client: TestClient, tok: str, job: dict[str, Any], bucket: Any, endpoint: str) -> None:
    """Files listed and streamed from the bucket, byte for byte, with the folder store's types and checks."""
    stored = _objects(bucket, job["id"])
    assert "te.json" in stored and stored.keys() <= set(job["files"]), (stored, job["files"])
    listing = client.get(f"/v1/jobs/{job['id']}/files", headers=auth(tok))
    assert listing.status_code == 200
    assert {f["name"]: f["size_bytes"] for f in listing.json()} == stored
    csv_name = next(n for n in stored if n.endswith(".csv"))
    got = client.get(f"/v1/jobs/{job['id']}/files/{csv_name}", headers=auth(tok))
    body = bucket.get_object(Bucket=bucket.bucket_name, Key=f"backbone/{job['id']}/{csv_name}")["Body"].read()
    assert got.status_code == 200 and got.content == body and len(body) == stored[csv_name]
    assert got.headers["content-type"].startswith("text/csv")
    assert got.headers["content-length"] == str(len(body))
    assert got.headers["content-disposition"] == f'attachment; filename="{csv_name.rsplit("/", 1)[-1]}"'
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok))
    assert result.status_code == 200 and result.headers["content-type"] == "application/json"
    assert result.json()["kind"] == "te"
    # the allow-list and the path checks hold: a name the job did not list, or one leaving its folder, is 404
    assert client.get(f"/v1/jobs/{job['id']}/files/other.csv", headers=auth(tok)).status_code == 404
    assert client.get(f"/v1/jobs/{job['id']}/files/..%2F..%2Fx", headers=auth(tok)).status_code == 404
    # no response names the store: not its endpoint, not its bucket
    for text in (listing.text, client.get(f"/v1/jobs/{job['id']}", headers=auth(tok)).text):
        assert endpoint.split("//")[1] not in text and bucket.bucket_name not in text and "s3://" not in text


def test_parse_result_store_names_what_is_wrong() -> None:
    assert parse_result_store("") is None
    assert parse_result_store("s3://bucket") == ("bucket", "")
    assert parse_result_store("s3://my.bucket-1/a/b/") == ("my.bucket-1", "a/b")
    for bad, says in (("ftp://bucket/x", "not an s3://bucket/prefix URL"), ("/shared/results", "not an s3"),
                      ("s3://", "no valid bucket"), ("s3://user@host/x", "no valid bucket"),
                      ("s3://bucket/a/../b", "'..'")):
        with pytest.raises(ValueError) as caught:
            parse_result_store(bad)
        assert says in str(caught.value), (bad, caught.value)


@pytest.mark.slow
def test_a_job_run_by_the_server_stores_its_result_in_the_bucket(tmp_path: Path, db_url: str, bucket: Any,
                                                                 s3_endpoint: str, triangle: Network) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=db_url, workers=1,
                        result_store=f"s3://{bucket.bucket_name}/backbone", max_stored_bytes_per_team=1)
    with _client(settings) as client:
        store: Store = client.app.state.store  # type: ignore[attr-defined]
        tok = store.create_token("planner", "p")[1]
        job = _run_te(client, tok, triangle)
        _check_downloads(client, tok, job, bucket, s3_endpoint)
        # nothing of the job in the local results folder or staging
        assert not (settings.data_dir / "results" / job["id"]).exists()
        assert not list((settings.data_dir / "staging").iterdir())
        # a map of the result draws from a copy of the bucket's files, removed after the request
        drawn = client.get(f"/v1/scenarios/{job['scenario_id']}/map", params={"job": job["id"], "format": "geojson"},
                           headers=auth(tok))
        assert drawn.status_code == 200 and drawn.headers["content-type"].startswith("application/geo+json")
        util = [f["properties"].get("utilisation") for f in json.loads(drawn.content)["features"]]
        assert max(u for u in util if u is not None) == pytest.approx(0.75, abs=1e-3)  # the triangle's optimum
        assert not list((settings.data_dir / "staging").iterdir())
        # the quota counts the bytes stored in the bucket: the team is now over its 1 byte
        usage = client.get("/v1/usage", headers=auth(tok)).json()
        assert usage["stored_bytes"] == sum(_objects(bucket, job["id"]).values()) > 0
        refused = client.post(f"/v1/scenarios/{job['scenario_id']}/jobs", json={"kind": "te", "options": {}},
                              headers=auth(tok))
        assert refused.status_code == 403
        assert refused.json()["errors"][0]["field"] == "BACKBONE_MAX_STORED_BYTES_PER_TEAM"
        # a file gone from the store is 404 (not a 500) and no longer listed
        bucket.delete_object(Bucket=bucket.bucket_name, Key=f"backbone/{job['id']}/te.json")
        assert client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).status_code == 404
        assert "te.json" not in {f["name"] for f in client.get(f"/v1/jobs/{job['id']}/files",
                                                                 headers=auth(tok)).json()}
        # retention deletes a purged job's objects
        report = apply_retention(store, settings.model_copy(update={"job_retention_days": 1e-9}),
                                 client.app.state.results)  # type: ignore[attr-defined]
        assert job["id"] in report.job_ids and _objects(bucket, job["id"]) == {}


@pytest.mark.slow
def test_a_worker_without_a_shared_folder_stores_the_result_the_server_serves(
        tmp_path: Path, db_url: str, bucket: Any, s3_endpoint: str, triangle: Network) -> None:
    """The server (queue mode) and a ``backbone worker`` process share the database and the bucket, no folder."""
    store_url = f"s3://{bucket.bucket_name}/backbone"
    settings = Settings(data_dir=tmp_path / "server", database_url=db_url, workers=1, job_execution="queue",
                        job_lease_s=5, job_heartbeat_s=0.5, result_store=store_url)
    worker_dir = tmp_path / "worker"
    env = dict(os.environ, BACKBONE_DATA_DIR=str(worker_dir), BACKBONE_DATABASE_URL=settings.resolved_database_url(),
               BACKBONE_RESULT_STORE=store_url, BACKBONE_JOB_LEASE_S="5", BACKBONE_JOB_HEARTBEAT_S="0.5")
    with _client(settings) as client:
        store: Store = client.app.state.store  # type: ignore[attr-defined]
        tok = store.create_token("planner", "p")[1]
        log = worker_dir.parent / "worker.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "backbone.api", "worker", "--concurrency", "1",
                                     "--drain-s", "5"], env=env, stdout=out, stderr=out)
        try:
            job = _run_te(client, tok, triangle)
            _check_downloads(client, tok, job, bucket, s3_endpoint)
        finally:
            proc.terminate()
            proc.wait(30)
        assert proc.returncode == 0, log.read_text()
        assert f"results in {store_url}" in log.read_text()
        assert not (settings.data_dir / "results" / job["id"]).exists()
        assert not (worker_dir / "results" / job["id"]).exists()
        assert not [p for p in (worker_dir / "results" / ".staging").rglob("*") if p.is_file()]


def _one_line(result: Any, exit_code: int, *named: str) -> None:
    assert result.exit_code == exit_code, (result.exit_code, result.output)
    assert "Traceback" not in result.output and result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for text in named:
        assert text in lines[0], (text, lines[0])


def test_a_bad_result_store_url_stops_serve_and_worker_with_one_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    def no_server(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the server started with a result store it cannot use")

    monkeypatch.setattr(uvicorn, "run", no_server)
    monkeypatch.setenv("BACKBONE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", f"sqlite:///{tmp_path / 'api.db'}")
    for url in ("s3://", "gs://bucket/results", "/shared/results"):
        monkeypatch.setenv("BACKBONE_RESULT_STORE", url)
        for command in (["serve", "--port", "0"], ["worker"]):
            result = CliRunner().invoke(cli_app, command, env={"COLUMNS": "300"})
            assert result.exit_code == 2, (url, command, result.output)
            assert "Traceback" not in result.output and "BACKBONE_RESULT_STORE" in result.stderr, result.stderr


def test_a_bucket_that_cannot_be_written_stops_serve_and_worker_at_start(tmp_path: Path, bucket: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    def no_server(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the server started with a result store it cannot use")

    monkeypatch.setattr(uvicorn, "run", no_server)
    monkeypatch.setenv("BACKBONE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", f"sqlite:///{tmp_path / 'api.db'}")
    missing = f"s3://{bucket.bucket_name}-missing/backbone"
    monkeypatch.setenv("BACKBONE_RESULT_STORE", missing)
    for command in (["serve", "--port", "0"], ["worker"]):
        result = CliRunner().invoke(cli_app, command, env={"COLUMNS": "300"})
        _one_line(result, 6, missing, "cannot be written", "BACKBONE_RESULT_STORE")
    # the bucket that exists passes the same check, and the probe object is removed
    ObjectResultStore(f"s3://{bucket.bucket_name}/backbone").check()
    assert bucket.list_objects_v2(Bucket=bucket.bucket_name).get("KeyCount", 0) == 0
