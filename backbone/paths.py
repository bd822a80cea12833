"""Where the shipped data lives, installed or in a source checkout."""

from __future__ import annotations

from pathlib import Path

_PKG_DATA = Path(__file__).resolve().parent / "data"
_REPO_DATA = Path(__file__).resolve().parent.parent / "data"


def data_dir() -> Path:
    """The shipped data folder: ``backbone/data`` when installed (a wheel maps the repository's
    ``data/`` there), else the source checkout's ``data/``."""
    if (_PKG_DATA / "global").exists():
        return _PKG_DATA
    return _REPO_DATA


def default_scenario_path() -> Path:
    """The shipped global scenario folder."""
    return data_dir() / "global"


def basemap_path() -> Path:
    """The shipped Natural Earth 110m countries basemap (GeoJSON)."""
    return data_dir() / "basemap" / "ne_110m_countries.geojson"


def public_rtt_path() -> Path:
    """The shipped public round-trip measurements the global scenario is calibrated against (CSV)."""
    return data_dir() / "calibration" / "public_rtt.csv"
