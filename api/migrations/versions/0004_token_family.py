"""Tokens record when their family was first issued (rotation keeps it), for a hard maximum lifetime.

``tokens.family_issued_at`` is the issue time of the first token of a rotation chain; a rotated token
inherits it, and no token of the chain may live past it plus ``BACKBONE_TOKEN_MAX_LIFETIME_DAYS``. The column
is nullable (a row without it counts from its own ``created_at``); existing chains are filled in by
following ``rotated_from`` back to their first token. Plain ``ADD COLUMN``, as in ``0002_teams``.

Revision ID: 0004_token_family
Revises: 0003_job_owner
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_token_family"
down_revision = "0003_job_owner"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tokens", sa.Column("family_issued_at", sa.DateTime(timezone=True), nullable=True))
    tokens = sa.table("tokens", sa.column("id", sa.String), sa.column("created_at", sa.DateTime(timezone=True)),
                      sa.column("rotated_from", sa.String), sa.column("family_issued_at", sa.DateTime(timezone=True)))
    conn = op.get_bind()
    rows = {r.id: (r.created_at, r.rotated_from) for r in conn.execute(sa.select(tokens.c.id, tokens.c.created_at,
                                                                                tokens.c.rotated_from))}
    for token_id in rows:
        first, seen = token_id, {token_id}
        while rows[first][1] in rows and rows[first][1] not in seen:  # back to the chain's first token
            first = rows[first][1]
            seen.add(first)
        conn.execute(tokens.update().where(tokens.c.id == token_id).values(family_issued_at=rows[first][0]))


def downgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("family_issued_at")
