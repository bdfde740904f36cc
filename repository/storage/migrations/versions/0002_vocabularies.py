"""Vocabularies: licenses and their aliases, funders, grants, communities.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "licenses",
        sa.Column("id", sa.String(length=100), nullable=False),
        sa.Column("title", sa.String(length=255), nullable=False),
        sa.Column("url", sa.String(length=500), nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_licenses")),
    )
    op.create_table(
        "license_aliases",
        sa.Column("alias", sa.String(length=100), nullable=False),
        sa.Column("license_id", sa.String(length=100), nullable=False),
        sa.ForeignKeyConstraint(
            ["license_id"], ["licenses.id"], name=op.f("fk_license_aliases_license_id_licenses"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("alias", name=op.f("pk_license_aliases")),
    )
    op.create_index(op.f("ix_license_aliases_license_id"), "license_aliases", ["license_id"])
    op.create_table(
        "funders",
        sa.Column("doi", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("acronyms", sa.Text(), nullable=False),
        sa.Column("country", sa.String(length=2), nullable=False),
        sa.Column("type", sa.String(length=20), nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("doi", name=op.f("pk_funders")),
    )
    op.create_table(
        "grants",
        sa.Column("funder_doi", sa.String(length=100), nullable=False),
        sa.Column("code", sa.String(length=100), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("acronym", sa.String(length=100), nullable=False),
        sa.Column("program", sa.String(length=100), nullable=False),
        sa.Column("startdate", sa.String(length=10), nullable=True),
        sa.Column("enddate", sa.String(length=10), nullable=True),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["funder_doi"], ["funders.doi"], name=op.f("fk_grants_funder_doi_funders")),
        sa.PrimaryKeyConstraint("funder_doi", "code", name=op.f("pk_grants")),
    )
    op.create_table(
        "communities",
        sa.Column("identifier", sa.String(length=100), nullable=False),
        sa.Column("title", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("curation_policy", sa.Text(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_communities_owner_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("identifier", name=op.f("pk_communities")),
    )
    op.create_index(op.f("ix_communities_owner_id"), "communities", ["owner_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_communities_owner_id"), table_name="communities")
    op.drop_table("communities")
    op.drop_table("grants")
    op.drop_table("funders")
    op.drop_index(op.f("ix_license_aliases_license_id"), table_name="license_aliases")
    op.drop_table("license_aliases")
    op.drop_table("licenses")
