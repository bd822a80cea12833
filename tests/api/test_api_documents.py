"""Issue #26 items 1-3 and the 0-site scenario: a document that arrives over HTTP is self-contained, its
expansion is bounded, and it is parsed (and maps drawn) in bounded workers, not in the API process.

Every test plants a canary file in the server's data dir (where another team's results live) and checks
that its content never comes back in a response or a stored scenario.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from backbone.api.app import create_app
from backbone.api.settings import Settings
from backbone.io import network_to_dict, save_scenario
from backbone.model import Network

CANARY = "canary-7f3e-never-leak"
SNDLIB = Path(__file__).resolve().parent.parent / "data" / "sndlib"
IMPORTERS = Path(__file__).resolve().parent.parent / "data" / "importers"


@pytest.fixture
def canary(settings: Settings) -> Path:
    """Another team's result table on the server's disk, as a plan job leaves it."""
    folder = settings.data_dir / "results" / "other-team-plan" / "scenario_after"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sites.csv").write_text(f"id,name,lon,lat,region\n{CANARY},{CANARY},0,0,NA\n", encoding="utf-8")
    return folder / "sites.csv"


def _upload(client: TestClient, tok: str, name: str, data: bytes) -> Any:
    return client.post("/v1/scenarios", files={"file": (name, data)}, headers=auth(tok))


def _fields(r: Any) -> set[str]:
    return {e["field"] for e in r.json()["errors"]}


def _stored(client: TestClient, tok: str) -> str:
    """Every stored scenario's content, as one text (to look for the canary)."""
    listing = client.get("/v1/scenarios", headers=auth(tok)).json()
    return "".join(client.get(f"/v1/scenarios/{s['id']}", headers=auth(tok)).text for s in listing)


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _folder_members(net: Network, tmp: Path) -> dict[str, bytes]:
    save_scenario(net, tmp / "scn")
    return {f"scn/{p.name}": p.read_bytes() for p in sorted((tmp / "scn").iterdir())}


# ---------------------------------------------------------------------- 1. no server file through an upload
def test_the_reported_attack_reads_nothing(client: TestClient, tokens: dict[str, str], canary: Path) -> None:
    """Issue #26's document: a YAML manifest whose tables name another team's result files (relative and absolute)."""
    tok = tokens["planner"]
    for path in ("../results/other-team-plan/scenario_after/sites.csv", str(canary), "/etc/passwd", "/etc",
                 "/dev/zero", "../results"):
        doc = f"name: stolen\ntables:\n  sites: {path}\n  links: {path}\n".encode()
        r = _upload(client, tok, "stolen.yaml", doc)
        assert r.status_code == 422, (path, r.text)
        assert _fields(r) == {"tables.sites", "tables.links"}
        assert CANARY not in r.text and "root:" not in r.text and "not found" not in r.text
    assert client.get("/v1/scenarios", headers=auth(tok)).json() == []


@pytest.mark.parametrize("fmt", ["yaml", "json", "json-body", "node-link", "zip-manifest", "zip-member",
                                 "graphml-entity", "sndlib-meta", "geojson"])
def test_a_file_reference_is_refused_in_every_format(client: TestClient, tokens: dict[str, str], canary: Path,
                                                     triangle: Network, tmp_path: Path, fmt: str) -> None:
    tok = tokens["planner"]
    doc = network_to_dict(triangle)
    ref = str(canary)
    if fmt == "yaml":
        import yaml

        r = _upload(client, tok, "t.yaml", yaml.safe_dump({**doc, "tables": {"demands": ref}}).encode())
        want = {"tables.demands"}
    elif fmt == "json":
        r = _upload(client, tok, "t.json", json.dumps({**doc, "tables": {"sites": ref}}).encode())
        want = {"tables.sites"}
    elif fmt == "json-body":
        r = client.post("/v1/scenarios", json={**doc, "tables": {"sites": ref}}, headers=auth(tok))
        want = {"tables.sites"}
    elif fmt == "node-link":
        nodes = [{"id": "A", "lat": 0, "lon": 0}, {"id": "B", "lat": 1, "lon": 1}]
        body = {"nodes": nodes, "links": [{"source": "A", "target": "B"}], "tables": {"sites": ref}}
        r = _upload(client, tok, "nl.json", json.dumps(body).encode())
        want = {"tables.sites"}
    elif fmt == "zip-manifest":
        members = _folder_members(triangle, tmp_path)
        manifest = members["scn/scenario.yaml"].decode().replace("sites: sites.csv", f"sites: {ref}")
        r = _upload(client, tok, "t.zip", _zip({**members, "scn/scenario.yaml": manifest.encode()}))
        want = {"tables.sites"}
    elif fmt == "zip-member":
        members = _folder_members(triangle, tmp_path)
        r = _upload(client, tok, "t.zip", _zip({**members, "../sites.csv": canary.read_bytes()}))
        want = {"../sites.csv"}
    elif fmt == "graphml-entity":
        xml = (f'<?xml version="1.0"?><!DOCTYPE g [<!ENTITY x SYSTEM "file://{ref}">]>'
               '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"><graph edgedefault="undirected">'
               '<node id="a"><data key="d">&x;</data></node></graph></graphml>')
        r = _upload(client, tok, "t.graphml", xml.encode())
        want = {"DOCTYPE"}
    elif fmt == "sndlib-meta":
        import yaml

        body = {**doc, "meta": {**doc["meta"], "sndlib": {"file": ref}}}
        r = _upload(client, tok, "t.yaml", yaml.safe_dump(body).encode())
        want = {"meta.sndlib.file"}
    else:  # GeoJSON is an export format: refused by type, and never read as a path
        r = _upload(client, tok, "t.geojson", json.dumps({"type": "FeatureCollection", "tables": ref}).encode())
        want = {"file"}
    assert r.status_code == 422, r.text
    assert _fields(r) == want, r.text
    assert CANARY not in r.text and ref not in r.json()["detail"] or fmt == "zip-manifest"
    assert CANARY not in _stored(client, tok)


def test_a_zipped_scenario_folder_uploads(client: TestClient, tokens: dict[str, str], triangle: Network,
                                          tmp_path: Path) -> None:
    r = _upload(client, tokens["planner"], "tri.zip", _zip(_folder_members(triangle, tmp_path)))
    assert r.status_code == 201, r.text
    assert (r.json()["sites"], r.json()["links"], r.json()["source_format"]) == (3, 3, "zip")
    content = client.get(f"/v1/scenarios/{r.json()['id']}", headers=auth(tokens["planner"])).json()["content"]
    assert content["sites"] == network_to_dict(triangle)["sites"]
    assert "backbone-doc-" not in json.dumps(content)  # no scratch path leaks into the stored scenario


def test_a_zip_bomb_is_refused(client: TestClient, tokens: dict[str, str], triangle: Network, tmp_path: Path) -> None:
    """A member of 40 MB of zeros (a few KB compressed) stops at the body limit (256 KiB in the test settings)."""
    members = _folder_members(triangle, tmp_path)
    bomb = _zip({**members, "scn/demands.csv": b"id,src,dst,demand_gbps\n" + b"0" * 40_000_000})
    assert len(bomb) < 256 * 1024
    r = _upload(client, tokens["planner"], "bomb.zip", bomb)
    assert r.status_code == 422 and "uncompressed" in r.json()["errors"][0]["message"], r.text


# ---------------------------------------------------------------------- 2. bounded expansion
def test_a_yaml_alias_bomb_is_refused_at_once(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    import yaml

    base = yaml.safe_dump(network_to_dict(triangle))
    lines = ['meta:', '  a0: &a0 ["xxxxxxxxxx"]']
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]  # 10^7 leaves
    bomb = base.replace("meta:", "\n".join(lines) + "\n  x:", 1).encode()
    assert len(bomb) < 4096
    t0 = time.monotonic()
    r = _upload(client, tokens["planner"], "bomb.yaml", bomb)
    assert r.status_code == 422 and "aliases" in r.json()["errors"][0]["message"], r.text
    assert r.json()["errors"][0]["record"].startswith("line ")
    assert time.monotonic() - t0 < 20
    assert client.get("/v1/scenarios", headers=auth(tokens["planner"])).json() == []


def test_a_5000_digit_integer_is_a_client_error(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    body = json.dumps(network_to_dict(triangle)).replace('"meta": {', '"meta": {"n": ' + "9" * 5000 + ", ", 1)
    assert "9" * 5000 in body
    r = client.post("/v1/scenarios", content=body, headers=auth(tokens["planner"], **{"Content-Type": "application/json"}))
    assert r.status_code == 422, r.text
    r = _upload(client, tokens["planner"], "big.json", body.encode())
    assert r.status_code == 422, r.text


def test_a_scenario_without_sites_is_refused(client: TestClient, tokens: dict[str, str]) -> None:
    r = client.post("/v1/scenarios", json={"name": "empty", "sites": []}, headers=auth(tokens["planner"]))
    assert r.status_code == 422 and _fields(r) == {""} and r.json()["errors"][0]["table"] == "sites", r.text
    r = _upload(client, tokens["planner"], "empty.yaml", b"name: empty\nsites: []\n")
    assert r.status_code == 422 and r.json()["errors"][0]["table"] == "sites", r.text


# ---------------------------------------------------------------------- 3. bounded workers
def _client_with(tmp_path: Path, **overrides: Any) -> TestClient:
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1,
                        **overrides)
    return TestClient(create_app(settings), raise_server_exceptions=False)


def _planner(c: TestClient) -> str:
    return c.app.state.store.create_token("planner", "p")[1]  # type: ignore[attr-defined,no-any-return]


def test_parsing_runs_under_the_memory_limit(tmp_path: Path, triangle: Network) -> None:
    """A worker memory limit smaller than any parse: the upload is refused as 413 "memory limit", the server lives."""
    with _client_with(tmp_path, worker_memory_mb=1) as c:
        tok = _planner(c)
        r = c.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok))
        assert r.status_code == 413, r.text
        assert r.json()["errors"][0]["field"] == "memory limit" and "1 MiB" in r.json()["detail"]
        assert c.get("/healthz").status_code == 200


def test_parsing_runs_under_the_time_limit(tmp_path: Path, triangle: Network) -> None:
    with _client_with(tmp_path, document_timeout_s=0.001) as c:
        tok = _planner(c)
        r = c.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok))
        assert r.status_code == 413 and r.json()["errors"][0]["field"] == "time limit", r.text


def test_the_stored_size_is_capped(tmp_path: Path, triangle: Network) -> None:
    with _client_with(tmp_path, max_document_bytes=1024) as c:
        tok = _planner(c)
        r = c.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok))
        assert r.status_code == 413 and r.json()["errors"][0]["field"] == "max_document_bytes", r.text
        assert "BACKBONE_MAX_DOCUMENT_BYTES" in r.json()["detail"]


def test_caps_name_their_setting(client: TestClient, tokens: dict[str, str]) -> None:
    sites = [{"id": f"s{i}", "lon": i * 0.1, "lat": 0, "region": "NA"} for i in range(51)]
    r = client.post("/v1/scenarios", json={"name": "big", "sites": sites}, headers=auth(tokens["planner"]))
    assert r.status_code == 422 and "BACKBONE_MAX_SITES" in r.json()["errors"][0]["message"], r.text


@pytest.mark.slow
def test_a_map_is_drawn_in_a_bounded_worker(tmp_path: Path, triangle: Network) -> None:
    """The same memory limit stops map rendering with 413, not the API process."""
    with _client_with(tmp_path) as c:
        tok = _planner(c)
        sid = c.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
        assert c.get(f"/v1/scenarios/{sid}/map?format=svg&size=320x200", headers=auth(tok)).status_code == 200
        c.app.state.documents.limits = type(c.app.state.documents.limits)(1024 * 1024, 0, 60.0)  # type: ignore[attr-defined]
        r = c.get(f"/v1/scenarios/{sid}/map?format=png&size=320x200", headers=auth(tok))
        assert r.status_code == 413 and r.json()["errors"][0]["field"] == "memory limit", r.text


def test_get_streams_the_stored_content(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    r = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok))
    sid, etag = r.json()["id"], r.headers["ETag"]
    with client.stream("GET", f"/v1/scenarios/{sid}", headers=auth(tok)) as resp:
        assert resp.headers.get("content-length") is None  # streamed, not built whole
        chunks = list(resp.iter_bytes())
    got = json.loads(b"".join(chunks))
    assert resp.headers["ETag"] == f"W/{etag}" and got["etag"] == etag and got["version"] == 1  # W/: gzip'd
    assert got["content"]["sites"] == network_to_dict(triangle)["sites"]


# ---------------------------------------------------------------------- fuzz: random documents in every format
_NAMES = ["t.yaml", "t.json", "t.txt", "t.graphml", "t.zip", "t.geojson", "t.yml"]
_PATHS = ["../results/other-team-plan/scenario_after/sites.csv", "/etc/passwd", "/etc", "/dev/zero", "."]


def _document(kind: str, payload: Any, path: str) -> bytes:
    import yaml

    if kind == "yaml":
        return yaml.safe_dump({"name": "f", "tables": {"sites": path}, "x": payload}).encode()
    if kind == "json":
        return json.dumps({"sites": [{"id": path, "lon": 0, "lat": 0}], "meta": {"p": payload}}).encode()
    if kind == "zip":
        return _zip({"scenario.yaml": f"tables: {{sites: {path}}}".encode(), "sites.csv": str(payload).encode()})
    if kind == "graphml":
        return f'<!DOCTYPE g [<!ENTITY x SYSTEM "file://{path}">]><graphml>&x;{payload}</graphml>'.encode()
    return f"NODES (\n {payload} ( 0 0 )\n)\nfile {path}\n".encode()


@pytest.mark.slow
@hyp_settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(_NAMES), kind=st.sampled_from(["yaml", "json", "zip", "graphml", "sndlib", "raw"]),
       payload=st.recursive(st.none() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                                        max_size=4), max_leaves=12),
       path=st.sampled_from(_PATHS), raw=st.binary(max_size=300))
def test_fuzz_uploads_never_5xx_and_never_read_a_server_file(fuzz_client: tuple[TestClient, str], name: str,
                                                             kind: str, payload: Any, path: str, raw: bytes) -> None:
    client, tok = fuzz_client
    data = raw if kind == "raw" else _document(kind, payload, path)
    r = _upload(client, tok, name, data)
    assert r.status_code < 500, r.text
    assert CANARY not in r.text and "root:x:" not in r.text


@pytest.fixture(scope="module")
def fuzz_client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("fuzz")
    with _client_with(tmp, max_body_bytes=256 * 1024) as c:
        folder = tmp / "data" / "results" / "other-team-plan" / "scenario_after"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "sites.csv").write_text(f"id,name,lon,lat,region\n{CANARY},{CANARY},0,0,NA\n", encoding="utf-8")
        tok = _planner(c)
        yield c, tok
        assert CANARY not in _stored(c, tok)


@pytest.mark.slow
def test_the_api_process_never_loads_the_data_stack() -> None:
    """The API process stays light: building the app loads neither pandas nor numpy (parsing, maps, diffs and
    decks load them in the document workers), so its memory is not a scenario's."""
    import subprocess
    import sys

    code = ("import sys; from backbone.api.app import create_app; create_app(); "
            "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_fork_server_that_died_is_started_again(tmp_path: Path, triangle: Network,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The fork server dies with the thread that started it: a worker start answered with EOF is tried again,
    and the upload succeeds (seen as a 500 under load before)."""
    import multiprocessing.context as mpc

    real = mpc.ForkServerProcess.start
    calls = {"n": 0}

    def flaky(self: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise EOFError("unexpected EOF")
        real(self)

    with _client_with(tmp_path) as c:
        tok = _planner(c)
        monkeypatch.setattr(mpc.ForkServerProcess, "start", flaky)
        r = c.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok))
        assert r.status_code == 201, r.text
        assert calls["n"] == 2
