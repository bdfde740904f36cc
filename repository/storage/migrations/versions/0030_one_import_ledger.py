"""One import ledger for every import (docs/operators/migration.md#the-import-ledger): the records an import from
another service (`import api`) took move from `import_ledger` to `imported_records`, where the OAI-PMH and
spreadsheet imports note theirs, under the source `api:<base URL>`. Its other rows go: a concept's id here is found
through any of its versions, and a failure is reported by the run that meets it (a rerun tries it again).

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("INSERT INTO imported_records (source, source_id, record_id, datestamp, created) "
               "SELECT 'api:' || source, source_id, local_id, NULL, updated FROM import_ledger "
               "WHERE kind = 'record' AND status = 'imported' AND local_id IS NOT NULL")
    op.drop_table("import_ledger")


def downgrade() -> None:
    # The records' rows go back; the concepts' rows are not kept by the one ledger, so the former code would start
    # a new concept for a version added at the source after the downgrade.
    op.create_table(
        "import_ledger",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("local_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("updated", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_ledger")),
        sa.UniqueConstraint("source", "kind", "source_id", name="uq_import_ledger_source"),
    )
    op.execute("INSERT INTO import_ledger (source, kind, source_id, local_id, status, updated) "
               "SELECT substr(source, 5), 'record', source_id, record_id, 'imported', created FROM imported_records "
               "WHERE source LIKE 'api:%'")
    op.execute("DELETE FROM imported_records WHERE source LIKE 'api:%'")
