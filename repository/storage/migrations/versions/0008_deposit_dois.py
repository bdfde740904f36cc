"""Index deposits by DOI: every publish checks that no other deposit holds its DOI (a full scan without it, about
100 ms at 50,000 deposits and growing with them).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deposits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_deposits_doi"), ["doi"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("deposits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_deposits_doi"))
