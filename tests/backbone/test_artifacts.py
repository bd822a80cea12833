"""The one artifact writer: atomic files, the list of files recorded, NaN as null, nothing without a folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from backbone.artifacts import ArtifactWriter, write_bytes_atomic


def test_writer_records_each_file_once_and_writes_nan_as_null(tmp_path: Path) -> None:
    writer = ArtifactWriter(tmp_path / "out")
    frame = pd.DataFrame({"link": ["a", "b"], "utilisation": [0.5, np.nan]})
    writer.csv("t.csv", frame)
    writer.json("t.json", {"mlu": float("nan"), "worst": np.float64(np.inf), "n": np.int64(3)})
    writer.text("r.html", "<p>ü</p>")
    writer.csv("t.csv", frame)  # rewritten, listed once
    writer.directory("scen", lambda path: (path.mkdir(), (path / "x.csv").write_text("id\n")))
    assert writer.files == ["t.csv", "t.json", "r.html", "scen/"]
    assert json.loads((tmp_path / "out" / "t.json").read_text()) == {"mlu": None, "worst": None, "n": 3}
    assert pd.read_csv(tmp_path / "out" / "t.csv")["utilisation"].isna().tolist() == [False, True]
    assert (tmp_path / "out" / "r.html").read_text(encoding="utf-8") == "<p>ü</p>"
    assert not [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]  # no temporary files


def test_without_a_folder_nothing_is_written_or_listed(tmp_path: Path) -> None:
    writer = ArtifactWriter(None)
    writer.csv("t.csv", pd.DataFrame({"a": [1]}))
    writer.json("t.json", {})
    assert not writer.enabled and writer.files == []
    with pytest.raises(ValueError):
        writer.path("t.csv")


def test_names_stay_inside_the_folder(tmp_path: Path) -> None:
    writer = ArtifactWriter(tmp_path)
    for name in ("../escape.txt", "/etc/passwd"):
        with pytest.raises(ValueError):
            writer.text(name, "x")
    assert writer.files == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = write_bytes_atomic(tmp_path / "t.json", b"old")

    class Broken:
        def to_csv(self, fh: object, index: bool = False) -> None:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        ArtifactWriter(tmp_path).csv("t.json", Broken())  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
