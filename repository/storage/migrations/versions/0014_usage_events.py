"""Usage statistics following COUNTER Release 5: the counted events (hashed sessions, no addresses) and the totals
per record version and per concept aggregated from them; the counts kept so far on records become the totals.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "usage_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("recid", sa.Integer(), nullable=False),
        sa.Column("conceptrecid", sa.Integer(), nullable=False),
        sa.Column("file_key", sa.Text(), nullable=False),
        sa.Column("visitor", sa.String(length=32), nullable=False),
        sa.Column("session", sa.String(length=32), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("counted", sa.Boolean(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_events")),
    )
    with op.batch_alter_table("usage_events", schema=None) as batch_op:
        batch_op.create_index("ix_usage_events_pending", ["counted", "created"], unique=False)
        batch_op.create_index("ix_usage_events_clicks", ["visitor", "recid", "kind", "created"], unique=False)
        batch_op.create_index("ix_usage_events_sessions", ["session", "recid", "kind"], unique=False)
        batch_op.create_index("ix_usage_events_concept_sessions", ["session", "conceptrecid", "kind"], unique=False)
    op.create_table(
        "usage_totals",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("views", sa.BigInteger(), nullable=False),
        sa.Column("unique_views", sa.BigInteger(), nullable=False),
        sa.Column("downloads", sa.BigInteger(), nullable=False),
        sa.Column("unique_downloads", sa.BigInteger(), nullable=False),
        sa.Column("volume", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_totals")),
    )
    # The counts kept so far (no sessions were known: their uniques are their totals).
    op.execute(
        "INSERT INTO usage_totals (id, views, unique_views, downloads, unique_downloads, volume) "
        "SELECT id, views, views, downloads, downloads, volume FROM records "
        "WHERE views > 0 OR downloads > 0 OR volume > 0"
    )
    op.execute(
        "INSERT INTO usage_totals (id, views, unique_views, downloads, unique_downloads, volume) "
        "SELECT conceptrecid, SUM(views), SUM(views), SUM(downloads), SUM(downloads), SUM(volume) FROM records "
        "GROUP BY conceptrecid HAVING SUM(views) > 0 OR SUM(downloads) > 0 OR SUM(volume) > 0"
    )


def downgrade() -> None:
    op.drop_table("usage_totals")
    with op.batch_alter_table("usage_events", schema=None) as batch_op:
        batch_op.drop_index("ix_usage_events_concept_sessions")
        batch_op.drop_index("ix_usage_events_sessions")
        batch_op.drop_index("ix_usage_events_clicks")
        batch_op.drop_index("ix_usage_events_pending")
    op.drop_table("usage_events")
