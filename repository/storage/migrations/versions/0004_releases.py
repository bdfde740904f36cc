"""Release archiving: repositories enabled for archiving and the releases received from them

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "release_repositories",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("full_name", sa.String(length=255), nullable=False),
        sa.Column("name_key", sa.String(length=255), nullable=False),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("token", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("conceptrecid", sa.Integer(), nullable=True),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["conceptrecid"], ["concepts.id"],
                                name=op.f("fk_release_repositories_conceptrecid_concepts")),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], name=op.f("fk_release_repositories_owner_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_release_repositories")),
        sa.UniqueConstraint("platform", "name_key", name="uq_release_repositories_name"),
    )
    with op.batch_alter_table("release_repositories", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_release_repositories_owner_id"), ["owner_id"], unique=False)

    op.create_table(
        "releases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repository_id", sa.Integer(), nullable=False),
        sa.Column("platform_release_id", sa.String(length=64), nullable=False),
        sa.Column("tag", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("errors", sa.JSON(), nullable=False),
        sa.Column("recid", sa.Integer(), nullable=True),
        sa.Column("received", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["recid"], ["recids.id"], name=op.f("fk_releases_recid_recids")),
        sa.ForeignKeyConstraint(["repository_id"], ["release_repositories.id"],
                                name=op.f("fk_releases_repository_id_release_repositories")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_releases")),
        sa.UniqueConstraint("repository_id", "tag", name="uq_releases_repository_tag"),
    )


def downgrade() -> None:
    op.drop_table("releases")
    with op.batch_alter_table("release_repositories", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_release_repositories_owner_id"))
    op.drop_table("release_repositories")
