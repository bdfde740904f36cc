"""A version's file history: what the owner changed when they fixed its files after publishing
(`deposits.filefix`), shown on the record's page and in its JSON (`files_history`). See
docs/researchers/corrections.md#fixing-files."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import Connection, select

from repository.storage.tables.corrections import file_changes
from repository.timeutil import isoformat


def histories(conn: Connection, recids: list[int]) -> dict[int, list[dict]]:
    """recid -> its file changes, oldest first, as the record shows them (versions without changes left out)."""
    found: dict[int, list[dict]] = defaultdict(list)
    if not recids:
        return found
    query = select(file_changes).where(file_changes.c.recid.in_(recids)).order_by(file_changes.c.id)
    for row in conn.execute(query).mappings():
        found[row["recid"]].append({"key": row["key"], "action": row["action"], "old_checksum": row["old_checksum"],
                                    "new_checksum": row["new_checksum"], "old_size": row["old_size"],
                                    "new_size": row["new_size"], "changed": isoformat(row["created"]),
                                    "user": row["user_id"]})  # fmt: skip
    return found
