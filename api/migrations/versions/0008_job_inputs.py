"""Scenario uploads can run as jobs (``POST /v1/scenarios`` with ``Prefer: respond-async``): the uploaded bytes
wait in ``job_inputs`` until a worker parses them.

A new table, so additive: servers and workers of the previous release never read it (they neither submit nor run
``import`` jobs; an ``import`` job one of them claims fails as an unknown kind and is reported as such). One row
per import job, deleted when the job ends.

Revision ID: 0008_job_inputs
Revises: 0007_team_quotas
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_job_inputs"
down_revision = "0007_team_quotas"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_inputs",
        sa.Column("job_id", sa.String(36), primary_key=True),
        sa.Column("filename", sa.String(200), nullable=True),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("job_inputs")
