"""The operator's area (docs/operators/administration.md): why a user is blocked, the private note of a takedown,
and the append-only audit log.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("block_reason", sa.Text(), nullable=True))
    op.add_column("record_deletions", sa.Column("private_note", sa.Text(), nullable=True))
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor_email", sa.String(length=255), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target_kind", sa.String(length=32), nullable=False),
        sa.Column("target_id", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_log_created"), ["created"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_log_actor_id"), ["actor_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_log_action"), ["action"], unique=False)
        batch_op.create_index("ix_audit_log_target", ["target_kind", "target_id"], unique=False)


def downgrade() -> None:
    op.drop_table("audit_log")
    # In place, as 0019's downgrade: a batch copy of a table others refer to would lose rows by cascade.
    op.execute("ALTER TABLE record_deletions DROP COLUMN private_note")
    op.execute("ALTER TABLE users DROP COLUMN block_reason")
