"""Access requests for restricted records: the requester's justification, the owner's decision and the grant's end.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "access_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("recid", sa.Integer(), nullable=False),
        sa.Column("requester_user_id", sa.Integer(), nullable=True),
        sa.Column("requester_email", sa.String(length=255), nullable=False),
        sa.Column("justification", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("decided", sa.DateTime(), nullable=True),
        sa.Column("decided_by", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("expires", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["recid"], ["recids.id"], name=op.f("fk_access_requests_recid_recids")),
        sa.ForeignKeyConstraint(["requester_user_id"], ["users.id"],
                                name=op.f("fk_access_requests_requester_user_id_users"), ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["decided_by"], ["users.id"], name=op.f("fk_access_requests_decided_by_users"),
                                ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_access_requests")),
    )
    with op.batch_alter_table("access_requests", schema=None) as batch_op:
        batch_op.create_index("ix_access_requests_email_status", ["requester_email", "status"], unique=False)
        batch_op.create_index("ix_access_requests_recid_status", ["recid", "status"], unique=False)
        batch_op.create_index(batch_op.f("ix_access_requests_requester_user_id"), ["requester_user_id"],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table("access_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_access_requests_requester_user_id"))
        batch_op.drop_index("ix_access_requests_recid_status")
        batch_op.drop_index("ix_access_requests_email_status")
    op.drop_table("access_requests")
