"""Teams carry their own quotas, set by an admin (``PUT /v1/teams/{team}/quotas``, ``backbone team quota set``).

Three nullable columns on ``teams``: ``max_cpu_s`` (CPU seconds of finished jobs in the window), ``cpu_window_h``
(that window, in hours) and ``max_stored_bytes`` (bytes of stored job results). NULL: the server's setting
(``BACKBONE_MAX_CPU_S_PER_TEAM``, ``BACKBONE_CPU_QUOTA_WINDOW_H``, ``BACKBONE_MAX_STORED_BYTES_PER_TEAM``); 0 on a
quota: none for this team. Additive and nullable, so servers and workers of the previous release keep reading and
writing ``teams`` during a rolling upgrade (they apply the server's settings to every team, as before).

Revision ID: 0007_team_quotas
Revises: 0006_job_usage
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_team_quotas"
down_revision = "0006_job_usage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("teams", sa.Column("max_cpu_s", sa.Float, nullable=True))
    op.add_column("teams", sa.Column("cpu_window_h", sa.Float, nullable=True))
    op.add_column("teams", sa.Column("max_stored_bytes", sa.BigInteger, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("teams") as batch:
        for column in ("max_stored_bytes", "cpu_window_h", "max_cpu_s"):
            batch.drop_column(column)
