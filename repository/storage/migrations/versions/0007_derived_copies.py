"""Derived copies: records as last indexed (built form and engine form) and cached renditions per format.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "built_records",
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("record", sa.LargeBinary(), nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("document", sa.LargeBinary(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"], name=op.f("fk_built_records_record_id_records"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("record_id", name=op.f("pk_built_records")),
    )
    op.create_table(
        "renditions",
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("format", sa.String(length=32), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"], name=op.f("fk_renditions_record_id_records"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("record_id", "format", name=op.f("pk_renditions")),
    )


def downgrade() -> None:
    op.drop_table("renditions")
    op.drop_table("built_records")
