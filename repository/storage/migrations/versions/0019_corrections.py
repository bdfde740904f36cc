"""Corrections of published versions by their owners (docs/researchers/corrections.md): why a version was deleted,
the deletion requests to the administrators, the one files unlock of a version and the file history it leaves;
`records.files_fixed` tells which versions have such a history.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    name = target.split(".")[0]
    return sa.ForeignKeyConstraint([column], [target], name=op.f(f"fk_{table}_{column}_{name}"))


def upgrade() -> None:
    op.add_column("records", sa.Column("files_fixed", sa.Boolean(), nullable=True))
    op.create_table(
        "record_deletions",
        sa.Column("recid", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        _fk("record_deletions", "recid", "records.id"),
        _fk("record_deletions", "user_id", "users.id"),
        sa.PrimaryKeyConstraint("recid", name=op.f("pk_record_deletions")),
    )
    op.create_table(
        "deletion_requests",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("recid", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("closed", sa.DateTime(), nullable=True),
        _fk("deletion_requests", "recid", "records.id"),
        _fk("deletion_requests", "user_id", "users.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deletion_requests")),
    )
    with op.batch_alter_table("deletion_requests", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_deletion_requests_recid"), ["recid"], unique=False)
    op.create_table(
        "file_unlocks",
        sa.Column("recid", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("unlocked", sa.DateTime(), nullable=False),
        sa.Column("published", sa.DateTime(), nullable=True),
        _fk("file_unlocks", "recid", "records.id"),
        _fk("file_unlocks", "user_id", "users.id"),
        sa.PrimaryKeyConstraint("recid", name=op.f("pk_file_unlocks")),
    )
    op.create_table(
        "file_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("recid", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=1000), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("old_checksum", sa.String(length=255), nullable=True),
        sa.Column("new_checksum", sa.String(length=255), nullable=True),
        sa.Column("old_size", sa.BigInteger(), nullable=True),
        sa.Column("new_size", sa.BigInteger(), nullable=True),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        _fk("file_changes", "recid", "records.id"),
        _fk("file_changes", "user_id", "users.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_file_changes")),
    )
    with op.batch_alter_table("file_changes", schema=None) as batch_op:
        batch_op.create_index("ix_file_changes_recid_id", ["recid", "id"], unique=False)


def downgrade() -> None:
    op.drop_table("file_changes")
    op.drop_table("file_unlocks")
    with op.batch_alter_table("deletion_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_deletion_requests_recid"))
    op.drop_table("deletion_requests")
    op.drop_table("record_deletions")
    # In place, as 0018's downgrade: a batch operation would copy `records` and drop the original, deleting by
    # cascade the stored copies and renditions that refer to it.
    op.execute("ALTER TABLE records DROP COLUMN files_fixed")
