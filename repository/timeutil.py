"""Time in one place: naive UTC in storage, `YYYY-MM-DDTHH:MM:SS+00:00` in the API."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Now, naive UTC, to the second (the API shows no fraction)."""
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def isoformat(value: datetime | None) -> str | None:
    """The API's timestamp form, `YYYY-MM-DDTHH:MM:SS+00:00`."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.replace(microsecond=0).isoformat() + "+00:00"


def http_date(value: datetime) -> str:
    """An RFC 9110 date for Last-Modified."""
    from email.utils import format_datetime

    return format_datetime(value.replace(tzinfo=UTC, microsecond=0), usegmt=True)
