"""Server settings, read from ``BACKBONE_*`` environment variables (pydantic-settings).

* ``BACKBONE_DATA_DIR`` -- where the server keeps its files (default ``~/.local/share/backbone``,
  or ``$XDG_DATA_HOME/backbone``): the SQLite database (unless ``BACKBONE_DATABASE_URL`` is set),
  job result folders, upload scratch space.
* ``BACKBONE_DATABASE_URL`` -- a SQLAlchemy URL; default ``sqlite:///<data dir>/backbone.db``. PostgreSQL:
  ``postgresql+psycopg://user:password@host:5432/dbname``.
* Limits: ``BACKBONE_MAX_BODY_BYTES``, ``BACKBONE_MAX_SITES``, ``BACKBONE_MAX_LINKS``,
  ``BACKBONE_MAX_DEMANDS``; job execution: ``BACKBONE_WORKERS``, ``BACKBONE_JOB_TIMEOUT_S``.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/backbone`` or ``~/.local/share/backbone``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "backbone"


class Settings(BaseSettings):
    """Everything the API server and the ``serve``/``token``/``db`` commands need to know."""

    model_config = SettingsConfigDict(env_prefix="BACKBONE_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir, description="Folder for the database and result files.")
    database_url: str = Field(default="", description="SQLAlchemy URL; empty = SQLite file in the data dir.")
    max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1024, description="Largest request body accepted (413 above).")
    max_sites: int = Field(default=20_000, ge=1, description="Largest scenario accepted, in sites (422 above).")
    max_links: int = Field(default=200_000, ge=1,
                           description="Largest scenario accepted, in links and in candidates each (422 above).")
    max_demands: int = Field(default=1_000_000, ge=1, description="Largest scenario accepted, in demands (422 above).")
    workers: int = Field(default=2, ge=1, le=64, description="Jobs that run at the same time (one process each).")
    job_timeout_s: float = Field(default=3600.0, gt=0, description="Wall-clock limit of one job; it is killed after.")
    run_migrations: bool = Field(default=True, description="Run `alembic upgrade head` when the app starts.")

    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file in the data dir."""
        return self.database_url or f"sqlite:///{(self.data_dir / 'backbone.db').resolve()}"

    def ensure_dirs(self) -> None:
        """Create the data dir and its sub-folders."""
        for sub in ("results", "staging", "uploads"):
            (self.data_dir / sub).mkdir(parents=True, exist_ok=True)
