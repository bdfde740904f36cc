"""Imports from other repositories (docs/operators/migration.md): the ledger of source records brought in, and
the last harvest of each source.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "imported_records",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=512), nullable=False),
        sa.Column("source_id", sa.String(length=512), nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("datestamp", sa.String(length=64), nullable=True),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["record_id"], ["recids.id"], name=op.f("fk_imported_records_record_id_recids")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_imported_records")),
        sa.UniqueConstraint("source", "source_id", name="uq_imported_records_source"),
    )
    with op.batch_alter_table("imported_records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_imported_records_record_id"), ["record_id"], unique=False)
    op.create_table(
        "import_sources",
        sa.Column("source", sa.String(length=512), nullable=False),
        sa.Column("last_harvest", sa.String(length=64), nullable=True),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("source", name=op.f("pk_import_sources")),
    )


def downgrade() -> None:
    op.drop_table("import_sources")
    op.drop_table("imported_records")
