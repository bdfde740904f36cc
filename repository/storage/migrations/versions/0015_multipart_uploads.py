"""Multipart uploads (their parts' bytes are on disk, each at its offset in one file per upload) and a SHA-256
beside the MD5 of each file instance (NULL for the files stored before).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "multipart_uploads",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("bucket_id", sa.String(length=36), nullable=False),
        sa.Column("key", sa.String(length=1000), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("part_size", sa.BigInteger(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("expires", sa.DateTime(), nullable=False),
        sa.Column("completed", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_multipart_uploads_bucket_id_buckets"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], name=op.f("fk_multipart_uploads_owner_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_multipart_uploads")),
    )
    with op.batch_alter_table("multipart_uploads", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_multipart_uploads_bucket_id"), ["bucket_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_multipart_uploads_expires"), ["expires"], unique=False)
    op.create_table(
        "multipart_parts",
        sa.Column("upload_id", sa.String(length=36), nullable=False),
        sa.Column("part_number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("checksum", sa.String(length=64), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["upload_id"], ["multipart_uploads.id"],
                                name=op.f("fk_multipart_parts_upload_id_multipart_uploads"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("upload_id", "part_number", name=op.f("pk_multipart_parts")),
    )
    with op.batch_alter_table("file_instances", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sha256", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("file_instances", schema=None) as batch_op:
        batch_op.drop_column("sha256")
    op.drop_table("multipart_parts")
    with op.batch_alter_table("multipart_uploads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_multipart_uploads_expires"))
        batch_op.drop_index(batch_op.f("ix_multipart_uploads_bucket_id"))
    op.drop_table("multipart_uploads")
