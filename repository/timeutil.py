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


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def http_date(value: datetime) -> str:
    """An RFC 9110 date (IMF-fixdate) for Last-Modified, of a naive UTC or an aware time. Written out rather than
    through `email.utils.format_datetime`, which took 2% of a record read's CPU; the names are RFC 9110's, whatever
    the locale."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return (f"{_DAYS[value.weekday()]}, {value.day:02d} {_MONTHS[value.month - 1]} {value.year:04d} "
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d} GMT")
