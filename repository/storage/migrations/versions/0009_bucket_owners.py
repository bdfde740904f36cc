"""Index deposits and records by bucket: every file upload and download looks up the deposit or record owning the
bucket (a full scan of the table without these, about 2 s of a bucket upload at 1,000,000 records).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("deposits", "records"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(batch_op.f(f"ix_{table}_bucket_id"), ["bucket_id"], unique=False)


def downgrade() -> None:
    for table in ("records", "deposits"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f"ix_{table}_bucket_id"))
