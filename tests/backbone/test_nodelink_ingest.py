"""Node-link demand ingest is column-wise, and gives exactly what the record-by-record validator gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from backbone.errors import ValidationError
from backbone.io.nodelink import load_node_link
from backbone.validate import build_network

NODES = [{"id": i, "pos": [float(i), float(i) / 2]} for i in range(5)] + [
    {"id": "a-b", "pos": [9.0, 9.0]}, {"id": "a", "pos": [8.0, 8.0]}, {"id": "b-0", "pos": [7.0, 7.0]}]
LINKS = [{"source": i, "target": i + 1} for i in range(4)] + [
    {"source": 4, "target": "a-b"}, {"source": "a-b", "target": "a"}, {"source": "a", "target": "b-0"}]


def _write(tmp_path: Path, demands: dict[str, Any]) -> Path:
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"nodes": NODES, "links": LINKS, "graph": {"demands": demands}}))
    return p


def _reference(p: Path) -> pd.DataFrame:
    """The demand table the record-by-record validator builds from the same rows."""
    doc = json.loads(p.read_text())
    rows = [{"id": f"{s}-{d}", "src": s, "dst": d, "demand_gbps": v}
            for s, row in doc["graph"]["demands"].items() for d, v in row.items() if s != d]
    sites = [{"id": str(n["id"]), "lon": n["pos"][0], "lat": n["pos"][1], "region": "EMEA"} for n in NODES]
    return build_network({"sites": sites, "demands": rows}, files={"demands": str(p)}).demands


def test_plain_rows_give_the_validators_table(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    demands = {str(s): {str(d): float(rng.uniform(0, 100)) for d in range(5) if d != s} for s in range(5)}
    demands["0"]["0"] = 5.0  # a self-demand is dropped
    demands["1"]["2"] = 7  # an int
    demands["2"]["3"] = 0.0
    p = _write(tmp_path, demands)
    got = load_node_link(p).demands
    pd.testing.assert_frame_equal(got, _reference(p), check_dtype=True)
    assert got.index[0] == "0-1" and len(got) == 20


def test_odd_but_valid_rows_are_validated_and_keep_their_place(tmp_path: Path) -> None:
    demands = {"0": {"1": 1.5, "2": "12", " 3": 4.0, "4": 2.0}, "1": {"0": 3.0}}
    p = _write(tmp_path, demands)
    got = load_node_link(p).demands
    assert got.index.tolist() == ["0-1", "0-2", "0- 3", "0-4", "1-0"]  # file order kept
    assert got["dst"].tolist() == ["1", "2", "3", "4", "0"]  # the padded site id is stripped, as validated
    assert got["demand_gbps"].tolist() == [1.5, 12.0, 4.0, 2.0, 3.0]
    pd.testing.assert_frame_equal(got, _reference(p), check_dtype=True)


@pytest.mark.parametrize(("row", "record", "field", "fragment"), [
    ({"1": "lots"}, "0-1", "demand_gbps", "expected a number"),
    ({"1": True}, "0-1", "demand_gbps", "expected a number"),
    ({"1": -2.0}, "0-1", "demand_gbps", "must be >= 0"),
    ({"1": None}, "0-1", "demand_gbps", "missing required value"),
    ({"9": 1.0}, "0-9", "dst", "unknown site '9'"),
    ({"1": [1, 2]}, "0-1", "demand_gbps", "expected a number"),
])
def test_bad_rows_are_named_by_file_record_and_field(tmp_path: Path, row: dict[str, Any], record: str, field: str,
                                                      fragment: str) -> None:
    p = _write(tmp_path, {"0": {"2": 1.0, **row}, "3": {"4": 1.0}})
    with pytest.raises(ValidationError) as err:
        load_node_link(p)
    found = [(q.file, q.table, q.record, q.field) for q in err.value.problems if fragment in q.message]
    assert found == [(str(p), "demands", record, field)], err.value.problems


def test_colliding_ids_are_duplicates(tmp_path: Path) -> None:
    # "a-b" -> "0" and "a" -> "b-0" both make the id "a-b-0"
    p = _write(tmp_path, {"a-b": {"0": 1.0}, "a": {"b-0": 2.0}})
    with pytest.raises(ValidationError) as err:
        load_node_link(p)
    assert [(q.table, q.record, q.field, q.message) for q in err.value.problems] == [
        ("demands", "a-b-0", "id", "duplicate id (first at row 2)")]


def test_site_problems_are_reported_with_demand_problems(tmp_path: Path) -> None:
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"nodes": NODES, "links": [*LINKS, {"source": 0, "target": 2, "capacity_gbps": -1}],
                             "graph": {"demands": {"0": {"9": 1.0}}}}))
    with pytest.raises(ValidationError) as err:
        load_node_link(p)
    tables = {q.table for q in err.value.problems}
    assert "demands" in tables and "links" in tables


def test_world_scale_ingest_matches_the_validator_on_a_sample(tmp_path: Path) -> None:
    """Many rows: the column-wise table equals the validator's on the same rows (a sample checked)."""
    n = 60
    nodes = [{"id": i, "pos": [float(i % 180), float(i % 80)]} for i in range(n)]
    links = [{"source": i, "target": i + 1} for i in range(n - 1)]
    rng = np.random.default_rng(1)
    demands = {str(s): {str(d): float(rng.uniform(0, 10)) for d in range(n) if d != s} for s in range(n)}
    p = tmp_path / "w.json"
    p.write_text(json.dumps({"nodes": nodes, "links": links, "graph": {"demands": demands}}))
    got = load_node_link(p).demands
    assert len(got) == n * (n - 1)
    sites = [{"id": str(i), "lon": float(i % 180), "lat": float(i % 80), "region": "EMEA"} for i in range(n)]
    rows = [{"id": f"{s}-{d}", "src": s, "dst": d, "demand_gbps": v} for s, row in demands.items() for d, v in row.items()]
    pd.testing.assert_frame_equal(got, build_network({"sites": sites, "demands": rows}).demands, check_dtype=True)
