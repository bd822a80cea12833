"""The canonical scenario format: a folder of CSV tables plus a YAML manifest.

::

    my-scenario/
      scenario.yaml      name, description, version, parameters, sources, tables: {sites: sites.csv, ...}
      sites.csv          one row per site (columns: backbone.schema.SITES)
      links.csv          ...
      srlgs.csv          ``links`` column holds member link ids as ``a;b;c``
      metros.csv
      demands.csv
      candidates.csv     optional: buildable routes (``srlgs`` column as ``a;b;c``); written only when
                         the scenario has candidates
      datasets.csv       optional: training datasets (``home_sites``, ``residency`` as ``a;b;c``); written only
                         when the scenario has datasets
      training_jobs.csv  optional: training jobs (``datasets``, ``regions``, ``sites`` as ``a;b;c``); written
                         only when the scenario has training jobs

The same content as one JSON/YAML document (``{"name": ..., "sites": [records], ...}``) is the
canonical JSON form the API accepts. Both round-trip exactly: ``load(save(net))`` equals ``net``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from backbone.artifacts import write_text_atomic
from backbone.errors import NotFoundError, Problem, ValidationError, one_line
from backbone.model import Network, table_records
from backbone.schema import OPTIONAL_TABLES, TABLES
from backbone.validate import build_network

MANIFEST = "scenario.yaml"
FORMAT_VERSION = 1


def load_folder(path: str | Path) -> Network:
    """Load a scenario folder (or its ``scenario.yaml``).

    Raises
    ------
    ValidationError
        When the manifest or any table is malformed (every problem listed).
    NotFoundError
        When the folder or manifest does not exist.
    """
    path = Path(path)
    manifest_path = path / MANIFEST if path.is_dir() else path
    if not manifest_path.exists():
        raise NotFoundError(f"{manifest_path}: no such scenario manifest")
    manifest = _read_yaml(manifest_path)
    if not isinstance(manifest, dict):
        raise ValidationError(Problem("manifest must be a mapping", file=str(manifest_path)))
    base = manifest_path.parent
    table_files = manifest.get("tables") or {t: f"{t}.csv" for t in TABLES
                                             if t not in OPTIONAL_TABLES or (base / f"{t}.csv").exists()}
    if not isinstance(table_files, dict):
        raise ValidationError(Problem("'tables' must map table names to CSV files", file=str(manifest_path),
                                      field="tables"))
    problems: list[Problem] = []
    raw: dict[str, Any] = {}
    files: dict[str, str] = {}
    for table, fname in table_files.items():
        fpath = (base / str(fname)).resolve()
        files[table] = str(fpath)
        if table not in TABLES:
            problems.append(Problem(f"unknown table {table!r}", file=str(manifest_path), field="tables"))
            continue
        if not fpath.exists():
            problems.append(Problem("table file not found", file=str(fpath), table=table))
            continue
        try:
            raw[table] = read_csv_table(fpath)
        except ValidationError as exc:
            problems += exc.problems
    if problems:
        raise ValidationError(problems)
    meta = {k: v for k, v in manifest.items() if k not in ("name", "tables", "format_version")}
    return build_network(raw, name=str(manifest.get("name") or base.name), meta=meta, files=files)


EMPTY_TABLE = "the file is empty: a table needs at least its header row"
"""The problem a zero-byte table file is (a header-only table is a valid table of 0 rows)."""


def read_utf8(path: Path) -> str:
    """The text of ``path``, which must be UTF-8 (a leading byte-order mark is dropped).

    Raises
    ------
    ValidationError
        When a byte is not UTF-8: the problem names its line (``record="line N"``), column and value.
    """
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(utf8_problem(data, exc, str(path))) from None
    return text.removeprefix("\ufeff")


def utf8_problem(data: bytes, exc: UnicodeDecodeError, file: str) -> Problem:
    """The problem of the first byte of ``data`` that is not UTF-8: its line, column (in characters) and value."""
    start = exc.start
    line_start = data.rfind(b"\n", 0, start) + 1
    line = data.count(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
    return Problem(f"not UTF-8 text: byte 0x{data[start]:02x} at line {line}, column {column} (byte {start} of the "
                   "file); save the file as UTF-8", file=file, record=f"line {line}")


def read_csv_table(path: Path) -> pd.DataFrame:
    """Read a CSV table as strings (blank cells stay blank strings).

    A header-only file is a table of 0 rows; a zero-byte file (or one of blank lines only) is an error.

    Raises
    ------
    ValidationError
        When the file is empty or has no header row, is not UTF-8 (naming the line and column of the first bad
        byte), is not CSV, or a row has fewer fields than the header (a file cut short: pandas would silently
        fill the missing cells), naming each such row by line.
    """
    text = read_utf8(path)
    if not text.strip():
        raise ValidationError(Problem(EMPTY_TABLE if not text else
                                      "the file has only blank lines: a table needs at least its header row",
                                      file=str(path)))
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True, comment=None)
    except pd.errors.ParserError as exc:
        raise ValidationError(Problem(f"not a readable CSV file: {one_line(exc)}", file=str(path))) from None
    short = _short_rows(text, len(df.columns))
    if short:
        raise ValidationError([Problem(f"row has {n} of {len(df.columns)} fields (the file looks truncated)",
                                       file=str(path), record=f"line {line}") for line, n in short])
    return df


def _short_rows(text: str, n_columns: int) -> list[tuple[int, int]]:
    """(line, fields) of every non-blank row with fewer fields than the header."""
    import csv

    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
    next(reader, None)
    return [(reader.line_num, len(row)) for row in reader if row and len(row) < n_columns]


def _read_yaml(path: Path) -> Any:
    text = read_utf8(path)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValidationError(Problem(f"not valid YAML: {one_line(exc)}", file=str(path))) from None


def save_folder(net: Network, path: str | Path, overwrite: bool = True) -> Path:
    """Write a scenario folder atomically (a temporary folder renamed into place).

    Returns the folder path.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise ValidationError(Problem("destination exists", file=str(path)))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-scenario-", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it 0700; the folder is the user's, like any they make
    try:
        tables = {t: df for t, df in net.tables().items() if t not in OPTIONAL_TABLES or len(df)}
        manifest = {"name": net.name, "format_version": FORMAT_VERSION, **_plain(net.meta),
                    "tables": {t: f"{t}.csv" for t in tables}}
        (tmp / MANIFEST).write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True), encoding="utf-8")
        for t, df in tables.items():
            table_to_csv(df).to_csv(tmp / f"{t}.csv", index=True, index_label="id")
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def table_to_csv(df: pd.DataFrame) -> pd.DataFrame:
    """A table ready for CSV: id lists joined with ';'."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object and len(out) and isinstance(out[c].iloc[0], tuple):
            out[c] = out[c].map(";".join)
    return out


def network_to_dict(net: Network) -> dict[str, Any]:
    """The canonical JSON form: ``{"name", "meta", "sites": [records], ...}``."""
    doc: dict[str, Any] = {"name": net.name, "format_version": FORMAT_VERSION, "meta": _plain(net.meta)}
    for t, df in net.tables().items():
        doc[t] = table_records(df)
    return doc


def network_from_dict(doc: Any, file: str = "") -> Network:
    """Build (and validate) a network from its canonical JSON form.

    Raises
    ------
    ValidationError
        When the document or any record is malformed (every problem listed).
    """
    if not isinstance(doc, dict):
        raise ValidationError(Problem("scenario document must be an object", file=file))
    problems = []
    tables: dict[str, Any] = {}
    for t in TABLES:
        v = doc.get(t)
        if v is None:
            continue
        if not isinstance(v, list) or not all(isinstance(r, dict) for r in v):
            problems.append(Problem("must be a list of records", file=file, table=t))
            continue
        tables[t] = v
    unknown = [k for k in doc if k not in (*TABLES, "name", "meta", "format_version")]
    problems += [Problem(f"unknown key {k!r}", file=file, field=k) for k in unknown]
    if "sites" not in doc:
        problems.append(Problem("missing required table 'sites'", file=file, table="sites"))
    meta = doc.get("meta") or {}
    if not isinstance(meta, dict):
        problems.append(Problem("'meta' must be an object", file=file, field="meta"))
        meta = {}
    if problems:
        raise ValidationError(problems)
    return build_network(tables, name=str(doc.get("name") or "scenario"), meta=meta,
                         files={t: file or t for t in TABLES})


def save_json(net: Network, path: str | Path) -> Path:
    """Write the canonical JSON form atomically."""
    return write_text_atomic(path, json.dumps(network_to_dict(net), indent=1, allow_nan=False))


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj
