"""Who may see a record's files: everyone for open records and for embargoed ones from the embargo date on
(nobody has to act: the date is compared at each request), the owner only otherwise."""

from __future__ import annotations

import datetime as dt

from repository.accounts.tokens import Identity


def files_open(metadata: dict, today: dt.date | None = None) -> bool:
    """Whether a record's files are public today."""
    right = metadata.get("access_right", "open")
    if right == "open":
        return True
    if right == "embargoed":
        embargo = metadata.get("embargo_date")
        today = today or dt.datetime.now(dt.UTC).date()
        return embargo is None or dt.date.fromisoformat(embargo) <= today
    return False


def can_read_files(record: dict, who: Identity | None) -> bool:
    """Files of `record` (a records row) are readable by `who`."""
    if who is not None and who.user_id == record["owner_id"]:
        return True
    return record["deleted"] is None and files_open(record["metadata"])
