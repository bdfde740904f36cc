"""Storage: SQLAlchemy Core tables, engine set-up for SQLite and PostgreSQL, and Alembic migrations.

SQL dialect differences live only in this package.
"""

from repository.storage.engine import Database, open_database
from repository.storage.migrate import upgrade

__all__ = ["Database", "open_database", "upgrade"]
