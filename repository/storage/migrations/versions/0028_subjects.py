"""Subject terms loaded from vocabularies, suggested in the deposit form (docs/operators/subjects.md).

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "subjects",
        sa.Column("vocabulary", sa.String(length=64), nullable=False),
        sa.Column("identifier", sa.String(length=500), nullable=False),
        sa.Column("term", sa.String(length=500), nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("vocabulary", "identifier", name=op.f("pk_subjects")),
    )


def downgrade() -> None:
    op.drop_table("subjects")
