"""Accounts: passwords, e-mail confirmation, roles, last sign-in and a session epoch on users; when each token was
last used; OpenID Connect identities linked to users.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("password_hash", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("email_confirmed", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("roles", sa.String(length=255), server_default="", nullable=False))
        batch_op.add_column(sa.Column("last_login", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("auth_epoch", sa.Integer(), server_default="0", nullable=False))
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_used", sa.DateTime(), nullable=True))
    op.create_table(
        "user_identities",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_user_identities_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_identities")),
        sa.UniqueConstraint("provider", "subject", name="uq_user_identities_provider_subject"),
    )
    with op.batch_alter_table("user_identities", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_user_identities_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("user_identities", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_identities_user_id"))
    op.drop_table("user_identities")
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_column("last_used")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("auth_epoch")
        batch_op.drop_column("last_login")
        batch_op.drop_column("roles")
        batch_op.drop_column("email_confirmed")
        batch_op.drop_column("password_hash")
