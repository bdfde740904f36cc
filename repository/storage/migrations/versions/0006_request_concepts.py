"""Index inclusion requests by concept: every record read looks up its accepted communities that way.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("community_requests", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_community_requests_conceptrecid"), ["conceptrecid"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("community_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_community_requests_conceptrecid"))
