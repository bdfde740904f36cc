"""The deposit form as typed, kept beside a draft whose last save from the form kept only its valid fields
(docs/researchers/depositing.md#nothing-typed-is-lost).

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deposit_form_states",
        sa.Column("deposit_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["deposit_id"], ["deposits.id"], name=op.f("fk_deposit_form_states_deposit_id_deposits")),
        sa.PrimaryKeyConstraint("deposit_id", name=op.f("pk_deposit_form_states")),
    )


def downgrade() -> None:
    op.drop_table("deposit_form_states")
