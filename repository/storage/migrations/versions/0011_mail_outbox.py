"""The mail outbox: messages queued in a transaction and sent by the worker (SMTP, or .eml files in the embedded
shape).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mail_outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("recipients", sa.Text(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("not_before", sa.DateTime(), nullable=True),
        sa.Column("sent", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_outbox")),
    )
    with op.batch_alter_table("mail_outbox", schema=None) as batch_op:
        batch_op.create_index("ix_mail_outbox_pending", ["sent", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("mail_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_mail_outbox_pending")
    op.drop_table("mail_outbox")
