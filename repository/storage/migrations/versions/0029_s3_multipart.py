"""Multipart uploads on an S3 store keep their state in the database, shared by every node: the file id the upload
becomes, the store's own upload id, the hash frontier, and each part's ETag (docs/operators/object-storage.md).

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("multipart_uploads") as batch:
        batch.add_column(sa.Column("file_id", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("store_upload_id", sa.String(length=1024), nullable=True))
        batch.add_column(sa.Column("hash_state", sa.LargeBinary(), nullable=True))
    with op.batch_alter_table("multipart_parts") as batch:
        batch.add_column(sa.Column("etag", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("multipart_parts") as batch:
        batch.drop_column("etag")
    with op.batch_alter_table("multipart_uploads") as batch:
        batch.drop_column("hash_state")
        batch.drop_column("store_upload_id")
        batch.drop_column("file_id")
