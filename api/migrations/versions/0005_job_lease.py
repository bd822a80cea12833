"""Jobs carry a lease, so workers on other machines can claim them from the database (``backbone worker``).

Five columns on ``jobs``, all additive and nullable or defaulted, so a server of the previous release keeps
reading and writing the table during a rolling upgrade: ``worker_id`` (who holds the job; NULL for jobs a
server runs inline), ``lease_expires_at`` (after it, any worker or server may reclaim the job),
``heartbeat_at`` (the holder's last sign of life), ``attempts`` (claims so far; a lost job is retried once)
and ``cancel_requested`` (set by a cancel on any server; the holding worker stops the job's process tree).
Plain ``ADD COLUMN``, as in ``0002_teams``.

Revision ID: 0005_job_lease
Revises: 0004_token_family
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_job_lease"
down_revision = "0004_token_family"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("worker_id", sa.String(200), nullable=True))
    op.add_column("jobs", sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("jobs", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("jobs", sa.Column("attempts", sa.Integer, nullable=False, server_default="0"))
    op.add_column("jobs", sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_index("ix_jobs_status_lease", "jobs", ["status", "lease_expires_at"])


def downgrade() -> None:
    op.drop_index("ix_jobs_status_lease", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        for column in ("cancel_requested", "attempts", "heartbeat_at", "lease_expires_at", "worker_id"):
            batch.drop_column(column)
