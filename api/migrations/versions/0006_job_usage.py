"""Jobs record what they used: CPU seconds and the bytes of their stored result, for the per-team quotas.

``jobs.cpu_s`` is the CPU time (user + system) of the job's process and of the processes it waited for
(``getrusage`` of self and children), reported by the job as it ends; ``jobs.result_bytes`` is the size of its
stored result folder. Both nullable (NULL: a job of an earlier release, or one killed before it could report),
so servers of the previous release keep writing the table (docs/deploy.md "Rolling upgrades").

Revision ID: 0006_job_usage
Revises: 0005_job_lease
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_job_usage"
down_revision = "0005_job_lease"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("cpu_s", sa.Float, nullable=True))
    op.add_column("jobs", sa.Column("result_bytes", sa.BigInteger, nullable=True))
    op.create_index("ix_jobs_team_finished", "jobs", ["team_id", "finished_at"])


def downgrade() -> None:
    op.drop_index("ix_jobs_team_finished", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        for column in ("result_bytes", "cpu_s"):
            batch.drop_column(column)
