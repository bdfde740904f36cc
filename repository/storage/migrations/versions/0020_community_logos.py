"""Community logos: the PNG thumbnail of the image a community's curator uploaded, kept in the row itself (a few
tens of KiB), so that both database shapes hold it and the file store's sweeper never sees it.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("communities", sa.Column("logo", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    op.drop_column("communities", "logo")
