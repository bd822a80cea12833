"""Jobs record the id of the token that submitted them (fair shares and queue limits per token).

Revision ID: 0003_job_owner
Revises: 0002_teams
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_job_owner"
down_revision = "0002_teams"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("owner_id", sa.String(36), nullable=False, server_default=""))
    # existing jobs: the token that created them, from the audit log
    op.execute("UPDATE jobs SET owner_id = COALESCE((SELECT a.token_id FROM audit_log a WHERE a.target_id = jobs.id "
               "AND a.action = 'job.create' ORDER BY a.id LIMIT 1), '')")
    op.create_index("ix_jobs_status_owner", "jobs", ["status", "owner_id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_status_owner", "jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("owner_id")
