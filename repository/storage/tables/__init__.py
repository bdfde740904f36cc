"""The tables, declared once with SQLAlchemy Core, one module per area; importing the package registers them all
on `metadata` (what migrations and `create_all` read)."""

from repository.storage.tables import access, deposits, derived, mail, releases, uploads, usage, validations  # noqa: F401  (registration)
from repository.storage.tables.core import metadata

__all__ = ["metadata"]
