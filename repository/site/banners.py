"""Site-wide banners (docs/operators/branding-and-pages.md#banners): a maintenance notice shown at the top of every
page from its start to its end (either open), in plain text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from repository.accounts import audit
from repository.accounts.audit import Actor
from repository.errors import NotFound, ValidationError, field_error
from repository.storage.tables.site import banners
from repository.storage.upsert import inserted_id
from repository.timeutil import isoformat, utcnow

MAX_MESSAGE = 500


def _parse_time(raw: str) -> datetime | None:
    """A date and time (`2026-12-01T08:00`, seconds and an offset optional; UTC without one) as naive UTC."""
    try:
        when = datetime.fromisoformat(raw.strip())
        if when.tzinfo is not None:
            when = when.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):  # OverflowError: an offset that moves the first day before year 1
        return None
    return when.replace(microsecond=0)


def _when(values: dict[str, Any], key: str, errors: list) -> datetime | None:
    raw = values.get(key)
    if raw in (None, ""):
        return None
    when = _parse_time(raw) if isinstance(raw, str) else None
    if when is None:
        errors.append(field_error(key, "Give a date and time as YYYY-MM-DDTHH:MM (UTC), or nothing."))
    return when


def parse(values: dict[str, Any]) -> dict[str, Any]:
    """`message`, `starts` and `ends` (UTC, either may be empty) from a form or JSON body; ValidationError."""
    errors: list = []
    message = values.get("message")
    if not isinstance(message, str) or not message.strip() or len(message) > MAX_MESSAGE:
        errors.append(field_error("message", f"Write the notice, at most {MAX_MESSAGE} characters."))
    starts, ends = _when(values, "starts", errors), _when(values, "ends", errors)
    if starts and ends and ends <= starts:
        errors.append(field_error("ends", "The end comes after the start."))
    if errors:
        raise ValidationError("The banner was not saved: " + " ".join(e["message"] for e in errors), errors)
    return {"message": " ".join(str(message).split()), "starts": starts, "ends": ends}


def add(conn: Connection, actor: Actor, banner: dict[str, Any]) -> int:
    """Add the banner parsed by `parse`; audited. Its id."""
    banner_id = inserted_id(conn.execute(insert(banners).values(created=utcnow(), **banner)))
    audit.record(conn, actor, "site.banner.add", "banner", banner_id, message=banner["message"],
                 starts=isoformat(banner["starts"]), ends=isoformat(banner["ends"]))
    return int(banner_id)


def remove(conn: Connection, actor: Actor, banner_id: int) -> None:
    """Remove a banner (NotFound when absent); audited."""
    row = conn.execute(select(banners).where(banners.c.id == banner_id)).mappings().first()
    if row is None:
        raise NotFound("There is no such banner.")
    conn.execute(delete(banners).where(banners.c.id == banner_id))
    audit.record(conn, actor, "site.banner.remove", "banner", banner_id, message=row["message"])


def all_banners(conn: Connection) -> list[dict]:
    """Every banner, the newest first."""
    return [dict(row) for row in conn.execute(select(banners).order_by(banners.c.id.desc())).mappings()]


def showing(every: list[dict], now: datetime) -> list[dict]:
    """The banners to show at `now`: started (or without a start) and not yet ended."""
    return [b for b in every if (b["starts"] is None or b["starts"] <= now) and (b["ends"] is None or now < b["ends"])]


def state(banner: dict, now: datetime) -> str:
    """"showing", "scheduled" or "ended" at `now`."""
    if banner["ends"] is not None and now >= banner["ends"]:
        return "ended"
    return "scheduled" if banner["starts"] is not None and now < banner["starts"] else "showing"
