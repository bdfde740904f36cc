"""Validation reports of data-description documents

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "datadesc_validations",
        sa.Column("bucket_id", sa.String(length=36), nullable=False),
        sa.Column("key", sa.String(length=1000), nullable=False),
        sa.Column("file_id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("report", sa.JSON(), nullable=True),
        sa.Column("deps", sa.JSON(), nullable=True),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("started", sa.DateTime(), nullable=True),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bucket_id"], ["buckets.id"], name=op.f("fk_datadesc_validations_bucket_id_buckets"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["file_id"],
            ["file_instances.id"],
            name=op.f("fk_datadesc_validations_file_id_file_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("bucket_id", "key", name=op.f("pk_datadesc_validations")),
    )
    with op.batch_alter_table("datadesc_validations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_datadesc_validations_file_id"), ["file_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("datadesc_validations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_datadesc_validations_file_id"))
    op.drop_table("datadesc_validations")
