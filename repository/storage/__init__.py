"""Storage: SQLAlchemy Core tables, engine set-up for SQLite and PostgreSQL, and Alembic migrations.

SQL dialect differences live only in this package.
"""

from sqlalchemy import Connection, Row  # for signatures outside storage (views import no sqlalchemy)

from repository.storage.engine import Database, open_database
from repository.storage.migrate import upgrade

__all__ = ["Connection", "Database", "Row", "open_database", "upgrade"]
