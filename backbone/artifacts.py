"""Result files, written one way: atomically (a temporary file in the same folder, then a rename), with the
list of files recorded, and JSON through :func:`backbone.serialize.json_safe` (NaN and infinity become null).

:class:`ArtifactWriter` is what a planning task writes through; the ``write_*_atomic`` functions are the
single-file forms the model layer's savers (maps, GeoJSON, canonical JSON) use.

Example
-------
>>> writer = ArtifactWriter(out_dir)                 # doctest: +SKIP
>>> writer.csv("te_links.csv", links)                # doctest: +SKIP
>>> writer.json("te.json", {"mlu": float("nan")})    # doctest: +SKIP  (written as null)
>>> writer.files                                     # doctest: +SKIP
['te_links.csv', 'te.json']
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backbone.serialize import json_default, json_safe

if TYPE_CHECKING:
    import pandas as pd

logger = logging.getLogger(__name__)


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename (readers never see
    half a file; a failed write leaves no temporary file behind).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    return _atomic(Path(path), lambda fh: fh.write(data))


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`write_bytes_atomic`)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def json_text(obj: Any, indent: int | None = 2, ensure_ascii: bool = True) -> str:
    """``obj`` as JSON text: non-finite floats become null (:func:`~backbone.serialize.json_safe`), numpy values
    and paths are converted (:func:`~backbone.serialize.json_default`)."""
    return json.dumps(json_safe(obj), indent=indent, default=json_default, allow_nan=False, ensure_ascii=ensure_ascii)


def write_json_atomic(path: str | Path, obj: Any, indent: int | None = 2) -> Path:
    """Write ``obj`` as JSON (:func:`json_text`) to ``path`` atomically."""
    return write_text_atomic(path, json_text(obj, indent=indent))


def _atomic(path: Path, write: Callable[[Any], Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class ArtifactWriter:
    """Writes a task's result files into ``out_dir`` and records their names.

    Every file is written atomically; :attr:`files` lists the names written (relative to ``out_dir``, in
    order, each once; a folder ends with ``/``). With ``out_dir=None`` nothing is written and nothing is
    recorded, so a task runs the same code with and without an output folder.

    Parameters
    ----------
    out_dir
        The folder (created on the first write), or None to write nothing.
    """

    def __init__(self, out_dir: str | Path | None) -> None:
        self.out_dir = None if out_dir is None else Path(out_dir)
        self.files: list[str] = []

    @property
    def enabled(self) -> bool:
        """Whether files are written (an output folder was given)."""
        return self.out_dir is not None

    def path(self, name: str) -> Path:
        """The path of result file ``name``.

        Raises
        ------
        ValueError
            When the writer has no output folder, or ``name`` is not a plain relative name.
        """
        if self.out_dir is None:
            raise ValueError("this writer has no output folder")
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"not a plain relative file name: {name!r}")
        return self.out_dir / name

    def record(self, name: str) -> None:
        """Add ``name`` to :attr:`files` (once)."""
        if self.enabled and name not in self.files:
            self.files.append(name)

    def extend(self, names: list[str]) -> None:
        """Record files another writer (a stage of this task) wrote into the same folder."""
        for name in names:
            self.record(name)

    def bytes(self, name: str, data: bytes) -> None:
        """Write ``data`` to ``name``."""
        if self.enabled:
            write_bytes_atomic(self.path(name), data)
            self.record(name)

    def text(self, name: str, text: str) -> None:
        """Write UTF-8 ``text`` to ``name``."""
        if self.enabled:
            write_text_atomic(self.path(name), text)
            self.record(name)

    def json(self, name: str, obj: Any) -> None:
        """Write ``obj`` as JSON (NaN and infinity as null) to ``name``."""
        if self.enabled:
            write_json_atomic(self.path(name), obj)
            self.record(name)

    def csv(self, name: str, frame: pd.DataFrame, index: bool = False) -> None:
        """Write ``frame`` as CSV to ``name``, its floats rounded for reading (:func:`csv_rounded`)."""
        if self.enabled:
            table = csv_rounded(frame)
            _atomic(self.path(name), lambda fh: table.to_csv(fh, index=index))
            self.record(name)

    def parquet(self, name: str, frame: pd.DataFrame) -> bool:
        """Write ``frame`` as Parquet to ``name``; False (and a warning) when no Parquet engine is installed."""
        if not self.enabled:
            return False
        try:
            _atomic(self.path(name), lambda fh: frame.to_parquet(fh, index=False))
        except ImportError as exc:  # pyarrow missing: the CSV form is still written
            logger.warning("%s not written: %s", name, exc)
            return False
        self.record(name)
        return True

    def directory(self, name: str, save: Callable[[Path], Any]) -> None:
        """Write a folder ``name`` with ``save(path)`` (which must itself replace the folder atomically, as
        :func:`backbone.io.save_scenario` does); recorded as ``name/``."""
        if self.enabled:
            save(self.path(name))
            self.record(f"{name.rstrip('/')}/")


CSV_DECIMALS: tuple[tuple[str, int], ...] = (
    ("_usd", 2), ("_gbps", 6), ("_mbps", 6), ("_ms", 4), ("_km", 3), ("_mw", 4), ("gpus", 3), ("lon", 6),
    ("lat", 6), ("utilisation", 8), ("share", 8), ("gap", 8), ("mlu", 8))
"""Decimals a CSV keeps per unit, by the column name's unit suffix or word (the first match wins): cents, 1 kbps (flows stay
exact enough to re-check loads from the paths table), 0.1 µs,
1 m, 0.1 kW, a thousandth of a GPU, about 10 cm of coordinates, 1e-8 of a ratio (utilisation, share, gap)."""

CSV_SIGNIFICANT = 12
"""Significant digits of any other float column (floating-point noise such as ``3925.7000000000007`` goes)."""


def csv_decimals(column: str) -> int | None:
    """The decimals :data:`CSV_DECIMALS` gives ``column``, or None: a unit suffix (``_gbps``) ends the name, a word
    (``gpus``, ``lat``) is one of its ``_``-separated words (``gpus_added``; not ``slo_violations``)."""
    name = str(column).lower()
    tokens = set(name.split("_"))
    return next((d for word, d in CSV_DECIMALS if (name.endswith(word) if word.startswith("_") else word in tokens)),
                None)


def csv_rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its float columns rounded for a CSV a person reads: each unit to its decimals
    (:data:`CSV_DECIMALS`), any other float to :data:`CSV_SIGNIFICANT` significant digits. Values keep their
    meaning (1 Mbps, a cent); only floating-point noise goes (``3925.7000000000007`` -> ``3925.7``). NaN stays NaN;
    other columns are untouched. Vectorised per column."""
    import numpy as np
    import pandas as pd
    from pandas.api.types import is_float_dtype

    if not isinstance(frame, pd.DataFrame):  # anything else that writes itself as CSV is written as it is
        return frame
    out = frame.copy()
    for col in out.columns:
        if not is_float_dtype(out[col].dtype):
            continue
        x = out[col].to_numpy(dtype=float)
        decimals = csv_decimals(col)
        if decimals is not None:
            out[col] = np.round(x, decimals)
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            magnitude = np.floor(np.log10(np.abs(x)))
        digits = np.clip(CSV_SIGNIFICANT - 1 - np.nan_to_num(magnitude, nan=0.0, posinf=0.0, neginf=0.0), -300, 300)
        scale = 10.0 ** digits
        exact = np.isfinite(x) & (x != 0) & (digits <= 22)  # 10**digits is exact: the rounded value reads short
        rounded = np.where(exact, np.round(x * scale) / scale, x)
        out[col] = np.where(np.isfinite(rounded), rounded, x)
    return out
