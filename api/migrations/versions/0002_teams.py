"""Teams own scenarios and jobs; token expiry and team; read-only scenarios; creators by token id.

Plain ``ALTER TABLE ... ADD COLUMN`` (no table rebuild), so it runs the same on SQLite and
PostgreSQL. The new references (``team_id``, ``created_by_token``) carry no foreign-key
constraint (SQLite cannot add one to an existing table); the store keeps them consistent and
teams are never deleted while referenced.

Revision ID: 0002_teams
Revises: 0001_initial
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_teams"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)
ID = sa.String(36)


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("id", ID, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.add_column("tokens", sa.Column("team_id", ID, nullable=True))
    op.add_column("tokens", sa.Column("expires_at", TS, nullable=True))
    op.add_column("tokens", sa.Column("rotated_from", ID, nullable=True))
    op.add_column("scenarios", sa.Column("team_id", ID, nullable=True))
    op.add_column("scenarios", sa.Column("read_only", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("scenarios", sa.Column("created_by_token", ID, nullable=True))
    op.add_column("scenario_versions", sa.Column("created_by_token", ID, nullable=True))
    op.add_column("jobs", sa.Column("team_id", ID, nullable=True))
    op.add_column("jobs", sa.Column("created_by_token", ID, nullable=True))
    op.create_index("ix_scenarios_team", "scenarios", ["team_id"])
    op.create_index("ix_jobs_team", "jobs", ["team_id", "created_at"])
    op.create_index("ix_tokens_team", "tokens", ["team_id"])


def downgrade() -> None:
    op.drop_index("ix_tokens_team", "tokens")
    op.drop_index("ix_jobs_team", "jobs")
    op.drop_index("ix_scenarios_team", "scenarios")
    with op.batch_alter_table("jobs") as b:
        b.drop_column("created_by_token")
        b.drop_column("team_id")
    with op.batch_alter_table("scenario_versions") as b:
        b.drop_column("created_by_token")
    with op.batch_alter_table("scenarios") as b:
        b.drop_column("created_by_token")
        b.drop_column("read_only")
        b.drop_column("team_id")
    with op.batch_alter_table("tokens") as b:
        b.drop_column("rotated_from")
        b.drop_column("expires_at")
        b.drop_column("team_id")
    op.drop_table("teams")
