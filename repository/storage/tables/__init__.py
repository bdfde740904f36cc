"""The tables, declared once with SQLAlchemy Core, one module per area named after what it defines; importing the
package registers them all on `metadata` (what migrations and `create_all` read)."""

from repository.storage.tables import (  # noqa: F401  (registration)
    access_requests,
    accounts,
    audit,
    communities,
    corrections,
    deposits,
    derived,
    files,
    imports,
    mail,
    moderation,
    multipart,
    outbox,
    records,
    releases,
    site,
    usage,
    validations,
    vocabularies,
)
from repository.storage.tables.metadata import metadata

__all__ = ["metadata"]
