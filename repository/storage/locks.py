"""A lock held by one transaction at a time across every process of the service (PostgreSQL's advisory locks;
SQLite's write transaction holds the database's one write lock already)."""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection, text


def try_lock(conn: Connection, name: str) -> bool:
    """Take the lock `name` until the transaction of `conn` ends; False when another transaction holds it."""
    if conn.dialect.name != "postgresql":
        return True
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    return bool(conn.execute(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": key}).scalar())
