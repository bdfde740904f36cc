"""The import ledger of `repository-admin import api` (docs/operators/migration.md#the-import-ledger).

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "import_ledger",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("local_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_ledger")),
        sa.UniqueConstraint("source", "kind", "source_id", name="uq_import_ledger_source"),
    )


def downgrade() -> None:
    op.drop_table("import_ledger")
