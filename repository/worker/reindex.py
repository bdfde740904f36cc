"""Rebuild the search index from the database, swap it in atomically, and check parity (records at revisions).

A rebuild streams the engine-ready documents kept in built_records into a new index through the engine's bulk path;
records whose stored document is missing or stale are built again on the way (and stored for the next time)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from sqlalchemy import select

from repository.config import Settings
from repository.files import buckets
from repository.records import stored
from repository.search.backend import SearchBackend, SearchReader, compare_revisions
from repository.storage import Database
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import records

FILE_CHECK_BATCH = 500  # published deposits compared per query
AHEAD = 2  # batches of documents read ahead of the engine
T = TypeVar("T")


def published_revisions(db: Database) -> dict[int, int]:
    """recid -> revision of every published, not deleted record: what the index must hold."""
    with db.read() as conn:
        # Records in review are out of the index (docs/operators/moderation.md).
        query = select(records.c.id, records.c.revision).where(records.c.deleted.is_(None), records.c.review.is_(None))
        return {row.id: row.revision for row in conn.execute(query)}


def rebuild(db: Database, settings: Settings, search: SearchBackend, progress: Callable[[int], None],
            rebuild_all: bool = False) -> int:
    """Build a new index beside the live one, load every record, swap; returns how many were loaded. Writes made
    meanwhile reach both indexes. `rebuild_all` builds every record again instead of reading stored documents."""
    search.create_new_index()

    def stream() -> Iterator[stored.Entry]:
        # Read (and unpacked) by a thread of their own while the engine parses the previous batch: SQLite, zstd and
        # the engine's parsing release the GIL, so reading no longer adds to the load's time.
        for batch in read_ahead(stored.documents(db, settings, search, rebuild_all=rebuild_all), AHEAD):
            yield from batch
            progress(len(batch))

    loaded = search.load_documents(stream())
    search.swap()
    return loaded


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


def read_ahead(items: Iterator[T], ahead: int) -> Iterator[T]:
    """The items of `items`, taken from it by a thread of their own up to `ahead` items in advance. The thread's
    error is raised here; leaving early stops the thread and closes `items` (in that thread, where it runs)."""
    handoff: queue.Queue[object] = queue.Queue(ahead)
    stop = threading.Event()

    def give(item: object) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not give(item):
                    return
            give(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            give(_Failed(exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="read-ahead", daemon=True)
    thread.start()
    try:
        while (item := handoff.get()) is not _END:
            if isinstance(item, _Failed):
                raise item.error
            yield item  # type: ignore[misc]  # what `items` gave
    finally:
        stop.set()
        thread.join()


def check(db: Database, search: SearchReader) -> list[str]:
    """The differences between the index and the database (empty when they agree)."""
    expected = published_revisions(db)
    indexed = search.get_revisions()
    parity = compare_revisions(expected, indexed)
    return (
        [f"record {r} is missing from the index" for r in parity.missing]
        + [f"record {r} is in the index but not published" for r in parity.extra]
        + [f"record {r} is indexed at revision {indexed[r]}, the database has {expected[r]}" for r in parity.stale]
    )


def check_files(db: Database) -> list[str]:
    """Every published deposit whose bucket does not hold exactly its record's file snapshot (the same names
    pointing at the same file instances): what an upload racing a publish used to leave. Empty when all agree."""
    query = (
        select(deposits.c.id, deposits.c.bucket_id, records.c.bucket_id.label("record_bucket"))
        .join(records, records.c.id == deposits.c.id)
        .where(deposits.c.status == "published")
        .order_by(deposits.c.id)
    )
    problems: list[str] = []
    last = 0
    while True:
        with db.read() as conn:
            pairs = conn.execute(query.where(deposits.c.id > last).limit(FILE_CHECK_BATCH)).all()
            if not pairs:
                return problems
            held = buckets.objects_of_buckets(conn, [b for p in pairs for b in (p.bucket_id, p.record_bucket)])
        for pair in pairs:
            problem = _file_difference(pair.id, held[pair.bucket_id], held[pair.record_bucket])
            if problem:
                problems.append(problem)
        last = pairs[-1].id


def _file_difference(recid: int, in_deposit: list[buckets.ObjectRow],
                     in_record: list[buckets.ObjectRow]) -> str | None:
    deposit = {o["key"]: o["file_id"] for o in in_deposit}
    record = {o["key"]: o["file_id"] for o in in_record}
    if deposit == record:
        return None
    parts = [
        (label, sorted(keys))
        for label, keys in (
            ("only in the deposit", deposit.keys() - record.keys()),
            ("only in the record", record.keys() - deposit.keys()),
            ("other content", {k for k in deposit.keys() & record.keys() if deposit[k] != record[k]}),
        )
        if keys
    ]
    shown = "; ".join(f"{label}: {', '.join(repr(k) for k in keys)}" for label, keys in parts)
    return f"deposit {recid}: its files differ from record {recid}'s ({shown})"
