"""The import ledger of every import (table `imported_records`): which record of which source became which record
here, and each OAI-PMH source's last complete harvest. A source is named by its kind and address (`api:<base URL>`,
`oai:<base URL>?metadataPrefix=...`, `csv:<file name>`). A row is written in the transaction that publishes its
record, so a record is imported and noted, or neither, and a rerun takes exactly what is missing
(docs/operators/migration.md#the-import-ledger)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, insert, select, update

from repository.storage.tables.imports import import_sources, imported_records
from repository.storage.tables.records import records
from repository.timeutil import utcnow


@dataclass
class ImportReport:
    """What an import did: records imported, skipped and failed (each with its source identifier and the reason),
    what the mapping left out per source record, and why the harvest stopped early (None: it ran to the end)."""

    imported: list[tuple[str, int]] = field(default_factory=list)  # (source id, record id)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    unmapped: dict[str, list[str]] = field(default_factory=dict)
    stopped: str | None = None
    # Seconds spent reading the source, mapping and validating, writing, and committing (with the indexing the
    # process runs after each commit): where an import's time goes (bench/oai_import_bench.py).
    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("harvest", "validate", "write",
                                                                            "commit"), 0.0))

    def lines(self) -> list[str]:
        """The report as the command prints it: one summary line, then one line a problem."""
        out = [f"imported {len(self.imported)}, skipped {len(self.skipped)}, failed {len(self.failed)}"]
        out += [f"skipped: {source_id}: {reason}" for source_id, reason in self.skipped]
        out += [f"failed: {source_id}: {reason}" for source_id, reason in self.failed]
        out += [f"not mapped: {source_id}: {'; '.join(items)}" for source_id, items in self.unmapped.items()]
        if self.stopped:
            out.append(f"stopped: {self.stopped} (a rerun picks up what is missing)")
        return out


def known(conn: Connection, source: str, source_ids: Iterable[str]) -> dict[str, int]:
    """The record ids of those of `source_ids` already imported from `source`."""
    wanted = list(dict.fromkeys(source_ids))
    found: dict[str, int] = {}
    for start in range(0, len(wanted), 500):
        rows = conn.execute(select(imported_records.c.source_id, imported_records.c.record_id).where(
            imported_records.c.source == source, imported_records.c.source_id.in_(wanted[start:start + 500])))
        found.update({row.source_id: row.record_id for row in rows})
    return found


def versions(conn: Connection, source: str) -> dict[str, tuple[int, int]]:
    """Every record imported from `source` with its concept here: (record id, concept id) by source id. An import
    that brings versions finds a concept's local id through any version of it already here."""
    rows = conn.execute(select(imported_records.c.source_id, records.c.id, records.c.conceptrecid)
                        .join(records, records.c.id == imported_records.c.record_id)
                        .where(imported_records.c.source == source))
    return {source_id: (int(recid), int(concept)) for source_id, recid, concept in rows}


def note(conn: Connection, source: str, source_id: str, record_id: int, datestamp: str | None) -> None:
    """Note in the caller's transaction that `source_id` of `source` became record `record_id`."""
    conn.execute(insert(imported_records).values(source=source, source_id=source_id, record_id=record_id,
                                                 datestamp=datestamp, created=utcnow()))


def note_many(conn: Connection, source: str, imported: Sequence[tuple[str, int, str | None]]) -> None:
    """`note` for a batch: (source id, record id, datestamp) of each, in one statement."""
    if imported:
        now = utcnow()
        conn.execute(insert(imported_records), [
            {"source": source, "source_id": source_id, "record_id": record_id, "datestamp": datestamp,
             "created": now} for source_id, record_id, datestamp in imported])


def last_harvest(conn: Connection, source: str) -> str | None:
    """The `from` of the next incremental harvest of `source` (None: never harvested to the end)."""
    return conn.execute(select(import_sources.c.last_harvest).where(import_sources.c.source == source)).scalar()


def harvested(conn: Connection, source: str, until: str) -> None:
    """Remember that `source` was harvested to the end as of `until` (its first answer's responseDate)."""
    done = conn.execute(update(import_sources).where(import_sources.c.source == source)
                        .values(last_harvest=until, updated=utcnow()))
    if not done.rowcount:
        conn.execute(insert(import_sources).values(source=source, last_harvest=until, updated=utcnow()))
