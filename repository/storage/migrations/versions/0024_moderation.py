"""Moderation (docs/operators/moderation.md): a record's review state, the reviews' findings and notes, and the
banned link domains.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("records", sa.Column("review", sa.String(length=16), nullable=True))
    op.create_table(
        "record_reviews",
        sa.Column("recid", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("flags", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["recid"], ["records.id"], name=op.f("fk_record_reviews_recid_records")),
        sa.PrimaryKeyConstraint("recid", name=op.f("pk_record_reviews")),
    )
    with op.batch_alter_table("record_reviews", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_record_reviews_created"), ["created"], unique=False)
    op.create_table(
        "banned_domains",
        sa.Column("domain", sa.String(length=255), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("added_by", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("domain", name=op.f("pk_banned_domains")),
    )


def downgrade() -> None:
    op.drop_table("banned_domains")
    op.drop_table("record_reviews")
    # In place, as 0022's downgrade: a batch copy of a table others refer to would lose rows by cascade.
    op.execute("ALTER TABLE records DROP COLUMN review")
