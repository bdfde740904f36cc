"""One imported record made the way a depositor makes one: a draft created and published by the deposit state
machine (`repository/deposits/actions.py`), inside a savepoint of the caller's transaction so a record whose
metadata fail leaves nothing behind and the others go on."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from repository.deposits import actions
from repository.errors import ApiError, ValidationError


def reason(exc: Exception) -> str:
    """An error as one line of a report: the fields and messages of a validation error, else its message."""
    errors = getattr(exc, "errors", None)
    if errors:
        return "; ".join(f"{e.get('field')}: {e.get('message')}" for e in errors)
    return str(exc) or type(exc).__name__


def publish_new(conn: Connection, ctx: actions.Context, owner_id: int, metadata: dict[str, Any],
                publish: bool = True) -> tuple[int, list[int]]:
    """A new deposit of `owner_id` with `metadata`, published unless `publish` is False; returns its id and the
    record ids to index after the commit. ApiError (a ValidationError for bad metadata) leaves nothing written."""
    with conn.begin_nested():
        dep_id = actions.create(conn, ctx, owner_id, metadata)
        return dep_id, (actions.publish(conn, ctx, dep_id, owner_id) if publish else [])


__all__ = ["ApiError", "ValidationError", "publish_new", "reason"]
