"""Scenario documents from someone else: bytes in, a validated :class:`Network` out, no file named.

A document that arrives over HTTP is self-contained. :func:`load_document` reads every format the
API accepts from the bytes alone and never resolves a path the document names:

* **canonical JSON / YAML** (``{"name", "meta", "sites": [...], ...}``) and **node-link JSON** are
  parsed in memory. A ``tables`` key (a scenario manifest naming CSV files) is refused, naming the
  field, as is ``meta.sndlib.file``.
* **YAML** is parsed without anchors and aliases (an alias "bomb" of a few hundred bytes can expand
  to millions of nodes); the first anchor or alias is refused, naming its line.
* **SNDlib** ``.txt`` is parsed from its text. **GraphML** is refused when it declares a DTD or
  entities (XML entity expansion), or is not UTF-8.
* **zip**: a zipped scenario folder (``scenario.yaml`` plus ``<table>.csv`` members, at the root or
  in one top-level folder). Members are read with their sizes counted as they are read (never
  trusting the archive's own header), only the known member names are used, and a manifest whose
  ``tables`` names anything but those members is refused.

Everything is bounded by :class:`DocumentLimits`. The API runs :func:`load_document` in a worker
process with memory, CPU and time limits (:mod:`backbone.api.isolation`); the CLI keeps reading
local folders with :func:`backbone.io.load_scenario`.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from backbone.errors import Problem, ValidationError, one_line
from backbone.model import Network
from backbone.schema import TABLES

__all__ = ["DOCUMENT_SUFFIXES", "DocumentLimits", "load_document", "parse_json_bytes", "parse_yaml_text",
           "refuse_file_references"]

DOCUMENT_SUFFIXES: dict[str, str] = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".txt": "sndlib",
                                     ".graphml": "graphml", ".zip": "zip"}
"""File suffixes :func:`load_document` reads, and the format each one names."""

MANIFEST = "scenario.yaml"


@dataclass(frozen=True)
class DocumentLimits:
    """Bounds on one untrusted document.

    Attributes
    ----------
    max_bytes
        Largest document, and largest total of a zip's members once uncompressed.
    max_zip_members
        Entries a zip may hold (folders included).
    max_nesting
        Deepest nesting of YAML/JSON mappings and sequences.
    """

    max_bytes: int = 64 * 1024 * 1024
    max_zip_members: int = 64
    max_nesting: int = 64


def _problem(message: str, file: str, field: str = "", record: str = "") -> ValidationError:
    return ValidationError(Problem(message, file=file, field=field, record=record))


# ---------------------------------------------------------------------- text formats
def parse_json_bytes(data: bytes, file: str) -> Any:
    """Parse JSON, turning every parser failure (bad syntax, bad UTF-8, an integer of thousands of
    digits, nesting past Python's recursion limit) into a :class:`ValidationError` naming the line."""
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise _problem(f"not valid JSON: {exc.msg}", file, record=f"line {exc.lineno}") from None
    except UnicodeDecodeError as exc:
        raise _problem(f"not valid UTF-8 text at byte {exc.start}", file) from None
    except RecursionError:
        raise _problem("JSON nested too deeply", file) from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise _problem(f"not valid JSON: {one_line(exc)}", file) from None


def parse_yaml_text(text: str, file: str, max_nesting: int = DocumentLimits.max_nesting) -> Any:
    """Parse YAML with the safe loader, refusing anchors, aliases and nesting past ``max_nesting``.

    The events are checked first (libyaml's C parser where available), so an alias "bomb" is
    refused before anything is built.

    Raises
    ------
    ValidationError
        Naming the line of the first anchor or alias, or of the syntax error.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise _problem("YAML anchors and aliases are not accepted in an uploaded document "
                               "(write the values out)", file, record=f"line {line}" if line else "")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_nesting:
                    raise _problem(f"nested deeper than {max_nesting} levels", file,
                                   record=f"line {event.start_mark.line + 1}" if event.start_mark else "")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        from backbone.io import syntax_error_line

        raise _problem(f"not valid YAML: {one_line(exc)}", file, record=syntax_error_line(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise _problem(f"not valid YAML: {one_line(exc)}", file) from None


def _utf8(data: bytes, file: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise _problem(f"not valid UTF-8 text (byte {exc.start})", file, record=f"line {line}") from None


def refuse_file_references(doc: Any, file: str) -> None:
    """Refuse a document that names files: a manifest's ``tables`` or ``meta.sndlib.file``.

    Raises
    ------
    ValidationError
        One problem per reference, naming its field.
    """
    if not isinstance(doc, dict):
        return
    problems: list[Problem] = []
    tables = doc.get("tables")
    if tables is not None:
        fields = [f"tables.{k}" for k in tables] if isinstance(tables, dict) and tables else ["tables"]
        problems += [Problem("names a file; a document sent to the server is self-contained: put the "
                             "table's records in the document (sites: [...]) or upload the scenario "
                             "folder as a .zip", file=file, field=f) for f in fields[:50]]
    meta = doc.get("meta")
    sndlib = meta.get("sndlib") if isinstance(meta, dict) else None
    if isinstance(sndlib, dict) and sndlib.get("file") is not None:
        problems.append(Problem("names a file on the server; an SNDlib scenario carries its design data in "
                                "meta.sndlib.links / meta.sndlib.demands", file=file, field="meta.sndlib.file"))
    if problems:
        raise ValidationError(problems)


def _from_tree(doc: Any, file: str) -> tuple[Network, str]:
    """A parsed JSON/YAML tree as a network: node-link or canonical."""
    from backbone.io import network_from_dict

    refuse_file_references(doc, file)
    if isinstance(doc, dict) and "sites" not in doc and "nodes" in doc and ("links" in doc or "edges" in doc):
        with _scratch() as tmp:  # the node-link loader reads a file: give it this document, nothing else
            path = tmp / "upload.json"
            path.write_text(json.dumps(doc), encoding="utf-8")
            return _renamed(_load_path(path, "node-link"), path, file), "node-link"
    return network_from_dict(doc, file=file), "canonical"


# ---------------------------------------------------------------------- file formats read from a scratch folder
def _scratch() -> Any:
    """A private scratch folder, removed afterwards (the only place the loaders below read)."""
    import contextlib

    @contextlib.contextmanager
    def folder() -> Iterator[Path]:
        tmp = Path(tempfile.mkdtemp(prefix="backbone-doc-"))
        try:
            yield tmp
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return folder()


def _load_path(path: Path, fmt: str) -> Network:
    if fmt == "sndlib":
        from backbone.io.sndlib import load_sndlib

        return load_sndlib(path)
    if fmt == "graphml":
        from backbone.io.graphml import load_graphml

        return load_graphml(path)
    if fmt == "folder":
        from backbone.io.scenario import load_folder

        return load_folder(path)
    from backbone.io.nodelink import load_node_link

    return load_node_link(path)


def _renamed(net: Network, scratch: Path, shown: str) -> Network:
    """``net`` named after the upload, never after the scratch file or folder; any mention of the scratch
    path or file name in ``meta`` becomes the upload's name."""
    stem = PurePosixPath(shown).stem or "upload"
    name = stem if net.name in (scratch.stem, scratch.name, scratch.parent.name, "upload") else net.name
    swaps = {str(scratch): shown, scratch.name: shown, str(scratch.parent): shown}

    def scrub(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: scrub(x) for k, x in v.items()}
        if isinstance(v, list):
            return [scrub(x) for x in v]
        if isinstance(v, str):
            if v in swaps:
                return swaps[v]
            if str(scratch.parent) in v:
                return v.replace(str(scratch.parent), shown)
        return v

    return replace(net, name=name, meta=scrub(dict(net.meta)))


def _shown_problems(exc: ValidationError, tmp: Path, shown: str) -> ValidationError:
    """The same problems, with scratch paths replaced by the upload's own name (and a member's)."""
    prefix = str(tmp)
    out = []
    for p in exc.problems:
        f = p.file
        if f.startswith(prefix):
            rest = f[len(prefix):].lstrip("/")
            f = shown if rest.startswith("upload.") or not rest else f"{shown}:{rest}"
        out.append(Problem(p.message.replace(prefix + "/", "").replace(prefix, shown), file=f, table=p.table,
                           record=p.record, field=p.field))
    return ValidationError(out)


_DTD = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def _from_file_format(data: bytes, fmt: str, shown: str) -> Network:
    if fmt == "graphml":
        _utf8(data, shown)
        if _DTD.search(data):
            raise _problem("GraphML with a DOCTYPE or ENTITY declaration is not accepted (entity expansion)",
                           shown, field="DOCTYPE")
    else:
        _utf8(data, shown)
    with _scratch() as tmp:
        path = tmp / ("upload.txt" if fmt == "sndlib" else "upload.graphml")
        path.write_bytes(data)
        try:
            return _renamed(_load_path(path, fmt), path, shown)
        except ValidationError as exc:
            raise _shown_problems(exc, tmp, shown) from None


# ---------------------------------------------------------------------- zip
def _zip_members(data: bytes, shown: str, limits: DocumentLimits) -> dict[str, bytes]:
    """The scenario members of a zip (``scenario.yaml`` and ``<table>.csv``), read with their sizes counted.

    Members may sit at the root or in one top-level folder; other members are refused by name.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise _problem(f"not a readable zip file: {one_line(exc)}", shown) from None
    if len(infos) > limits.max_zip_members:
        raise _problem(f"the zip holds {len(infos)} entries; at most {limits.max_zip_members} are accepted", shown)
    files = [i for i in infos if not i.is_dir()]
    wanted = {MANIFEST, *(f"{t}.csv" for t in TABLES)}
    parents = {PurePosixPath(i.filename).parent for i in files}
    problems: list[Problem] = []
    for i in files:
        p = PurePosixPath(i.filename)
        if p.is_absolute() or ".." in p.parts or "\\" in i.filename or len(p.parts) > 2 or p.name not in wanted:
            problems.append(Problem(f"unexpected member {i.filename[:200]!r}: a scenario zip holds {MANIFEST} and "
                                    f"<table>.csv files ({', '.join(TABLES)}) in one folder", file=shown,
                                    field=i.filename[:200]))
    if len(parents) > 1 and not problems:
        problems.append(Problem("members are spread over several folders; zip one scenario folder", file=shown))
    if problems:
        raise ValidationError(problems)
    out: dict[str, bytes] = {}
    total = 0
    for i in files:
        name = PurePosixPath(i.filename).name
        if name in out:
            raise _problem(f"member {name!r} appears twice", shown, field=i.filename[:200])
        buf = bytearray()
        try:
            with archive.open(i) as fh:
                while chunk := fh.read(1 << 20):
                    buf += chunk
                    total += len(chunk)
                    if total > limits.max_bytes:
                        raise _problem(f"the zip's members exceed {limits.max_bytes} bytes once uncompressed", shown)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError, ValueError) as exc:
            raise _problem(f"cannot read member {name!r}: {one_line(exc)}", shown, field=name) from None
        out[name] = bytes(buf)
    if MANIFEST not in out:
        raise _problem(f"the zip holds no {MANIFEST} (zip a scenario folder as `backbone export` or "
                       "save_scenario writes it)", shown, field=MANIFEST)
    return out


def _from_zip(data: bytes, shown: str, limits: DocumentLimits) -> Network:
    members = _zip_members(data, shown, limits)
    manifest_file = f"{shown}:{MANIFEST}"
    manifest = parse_yaml_text(_utf8(members[MANIFEST], manifest_file), manifest_file, limits.max_nesting)
    if not isinstance(manifest, dict):
        raise _problem("manifest must be a mapping", manifest_file)
    tables = manifest.get("tables")
    if tables is not None:
        if not isinstance(tables, dict):
            raise _problem("'tables' must map table names to the zip's CSV members", manifest_file, field="tables")
        wrong = [t for t, f in tables.items() if str(t) not in TABLES or f != f"{t}.csv"]
        if wrong:
            raise ValidationError([Problem(f"names {str(tables[t])[:200]!r}: a zipped scenario's tables are its own "
                                           f"members, named <table>.csv ({t}.csv)", file=manifest_file,
                                           field=f"tables.{t}") for t in wrong[:50]])
        missing = [t for t in tables if f"{t}.csv" not in members]
        if missing:
            raise ValidationError([Problem("table member not in the zip", file=f"{shown}:{t}.csv", table=str(t))
                                   for t in missing])
    refuse_file_references({k: v for k, v in manifest.items() if k != "tables"}, manifest_file)
    with _scratch() as tmp:
        for name, content in members.items():
            (tmp / name).write_bytes(content)
        try:
            net = _load_path(tmp, "folder")
        except ValidationError as exc:
            raise _shown_problems(exc, tmp, shown) from None
    return _renamed(net, tmp / MANIFEST, shown)


# ---------------------------------------------------------------------- entry point
def load_document(data: bytes, filename: str, limits: DocumentLimits | None = None) -> tuple[Network, str]:
    """Read an uploaded scenario document from its bytes alone.

    Parameters
    ----------
    data
        The document.
    filename
        The client's file name: only its suffix (format) and last part (shown in problems) are used.
    limits
        Size bounds (:class:`DocumentLimits` defaults when None).

    Returns
    -------
    (network, format)
        ``format`` is one of ``canonical-json``, ``canonical-yaml``, ``node-link``, ``sndlib``,
        ``graphml``, ``zip``.

    Raises
    ------
    ValidationError
        For an unknown suffix, a document that names a file (``tables``, ``meta.sndlib.file``), YAML
        anchors or aliases, GraphML entities, a zip with unexpected members, anything over
        ``limits``, or any problem of the content itself (every problem listed).

    Example
    -------
    >>> net, fmt = load_document(b'{"sites": [{"id": "A", "lon": 0, "lat": 0, "region": "NA"}]}', "a.json")
    >>> fmt, len(net.sites)
    ('canonical-json', 1)
    """
    limits = limits or DocumentLimits()
    shown = PurePosixPath(filename.replace("\\", "/")).name[:200] or "upload"
    suffix = PurePosixPath(shown).suffix.lower()
    fmt = DOCUMENT_SUFFIXES.get(suffix)
    if fmt is None:
        raise _problem(f"unsupported file type {suffix or '(none)'!r}; upload one of "
                       f"{', '.join(DOCUMENT_SUFFIXES)}", shown, field="file")
    if len(data) > limits.max_bytes:
        raise _problem(f"the document has {len(data)} bytes; at most {limits.max_bytes} are accepted", shown)
    if not data.strip():
        raise _problem("the document is empty", shown)
    if fmt == "json":
        doc = parse_json_bytes(data, shown)
        _check_nesting(doc, shown, limits.max_nesting)
        net, kind = _from_tree(doc, shown)
        return net, "node-link" if kind == "node-link" else "canonical-json"
    if fmt == "yaml":
        doc = parse_yaml_text(_utf8(data, shown), shown, limits.max_nesting)
        net, kind = _from_tree(doc, shown)
        return net, "node-link" if kind == "node-link" else "canonical-yaml"
    if fmt == "zip":
        return _from_zip(data, shown, limits), "zip"
    return _from_file_format(data, fmt, shown), fmt


def _check_nesting(doc: Any, file: str, max_nesting: int) -> None:
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict | list):
            if depth >= max_nesting:
                raise _problem(f"nested deeper than {max_nesting} levels", file)
            stack += [(x, depth + 1) for x in (v.values() if isinstance(v, dict) else v)]
