"""The migrations build exactly the schema the code declares (tables, columns, indexes), on either database: an
index declared in repository/storage but missing from the migrations would leave a full scan in production."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from repository.storage import open_database
from repository.storage.tables import metadata


def test_migrated_schema_equals_the_declared_one(database_url):
    db = open_database(database_url)  # migrated by the session's template
    with db.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
