"""The one MetaData every table is declared on, with stable constraint names so Alembic migrations behave the
same on SQLite and PostgreSQL. Timestamps are naive UTC (no fraction in the API)."""

from __future__ import annotations

from sqlalchemy import (
    MetaData,
)

# Stable constraint names so Alembic migrations behave the same on SQLite and PostgreSQL.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)
