"""`repository-admin import oai`: a harvest of an OAI-PMH repository made into metadata-only records
(docs/operators/migration.md#importing-from-oai-pmh).

Records are taken in batches of `BATCH` (across pages), each one transaction: its new records are checked by the
rules a publish applies, written together and noted in the ledger in it (docs/operators/migration.md#bulk-writes),
so what a crash interrupts is either all there or not at all. Records already in the ledger, deleted at the source,
or repeated within the harvest are skipped; a record whose metadata fail is reported with its source identifier and
the reason, and the others go on. The DOIs of the source stay the records' DOIs:
they are external DOIs, never registered under this service's prefix. A harvest that ran to the end remembers its
first answer's date, the `from` of the next incremental harvest."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree
from sqlalchemy import Connection

from repository.collector import fewer_collections
from repository.config import Settings
from repository.deposits import actions, pids
from repository.deposits.imported import ImportedRecord, write_new_concepts
from repository.imports import crosswalk, ledger
from repository.imports.harvest import Fetcher, Harvested, HarvestStopped, pages
from repository.imports.publishing import ApiError, publish_new, reason
from repository.records.lookups import DatabaseLookups
from repository.storage import Database
from repository.timeutil import utcnow

# oai_datacite wraps a DataCite resource in an envelope; datacite (Zenodo, DataCite) is the bare resource.
PREFIXES = ("oai_datacite", "datacite", "oai_dc")
BATCH = 500  # records written in one transaction and indexed together after its commit


@dataclass(frozen=True)
class Source:
    """One harvest: the base URL, the metadata prefix and the set; its key names it in the ledger."""

    base_url: str
    prefix: str
    set_spec: str | None = None

    @property
    def key(self) -> str:
        return f"oai:{self.base_url}?metadataPrefix={self.prefix}" + (f"&set={self.set_spec}" if self.set_spec
                                                                      else "")


def map_record(record: Harvested, prefix: str, license_id: Callable[[str], str | None]) -> crosswalk.Mapped:
    """The deposit metadata of a harvested record; ValueError when its metadata are not of the prefix's kind."""
    if record.metadata is None:
        raise ValueError("the record has no metadata")
    if prefix == "oai_dc":
        if etree.QName(record.metadata).localname != "dc":
            raise ValueError(f"not Dublin Core: {etree.QName(record.metadata).localname}")
        mapped, landing = crosswalk.from_dublin_core(record.metadata, license_id)
    else:
        resource = _datacite_resource(record.metadata)
        if resource is None:
            raise ValueError("no DataCite resource in the metadata")
        mapped, landing = crosswalk.from_datacite(resource, license_id)
    return crosswalk.metadata_only(mapped, landing)


def _datacite_resource(element: etree._Element) -> etree._Element | None:
    for ns in crosswalk.DATACITE_NAMESPACES:
        if element.tag == f"{{{ns}}}resource":
            return element
        found = element.find(f".//{{{ns}}}resource")
        if found is not None:
            return found
    return None


def import_oai(db: Database, settings: Settings, owner_id: int, source: Source, fetcher: Fetcher,
               from_: str | None = None, progress: Callable[[int], object] | None = None,
               on_commit: Callable[[list[int]], object] | None = None, batch: int = BATCH) -> ledger.ImportReport:
    """Harvest `source` and publish what is new as metadata-only records of `owner_id`; `from_` (else the last
    complete harvest's date) limits the harvest to what changed since. Records are written `batch` at a time, in
    one transaction each; `on_commit` gets each batch's records to index once it committed."""
    with fewer_collections():  # each record makes thousands of short-lived objects (repository/collector.py)
        return _import(db, settings, owner_id, source, fetcher, from_, progress, on_commit, batch)


def _import(db: Database, settings: Settings, owner_id: int, source: Source, fetcher: Fetcher, from_: str | None,
            progress: Callable[[int], object] | None, on_commit: Callable[[list[int]], object] | None,
            batch: int) -> ledger.ImportReport:
    report = ledger.ImportReport()
    if from_ is None:
        with db.read() as conn:
            from_ = ledger.last_harvest(conn, source.key)
    seen: set[str] = set()
    started: str | None = None
    waiting: list[Harvested] = []

    def flush() -> None:
        to_index = _import_batch(db, settings, owner_id, source, waiting, seen, report)
        waiting.clear()
        if on_commit is not None and to_index:
            on_commit(to_index)
        if progress is not None:
            progress(len(report.imported) + len(report.skipped) + len(report.failed))

    harvest = pages(fetcher, source.prefix, source.set_spec, from_)
    try:
        while True:
            mark = time.perf_counter()
            page = next(harvest, None)
            report.phases["harvest"] += time.perf_counter() - mark
            if page is None:
                break
            started = started or page.response_date
            report.failed.extend(page.problems)
            waiting.extend(page.records)
            if len(waiting) >= batch:
                flush()
    except HarvestStopped as exc:
        report.stopped = str(exc)
        flush()  # the pages read before the stop are imported
        return report
    flush()
    if started:
        with db.write() as conn:
            ledger.harvested(conn, source.key, started[:10])  # a day: every OAI-PMH repository takes it
    return report


def _import_batch(db: Database, settings: Settings, owner_id: int, source: Source, records: list[Harvested],
                  seen: set[str], report: ledger.ImportReport) -> list[int]:
    """Import `records` in one transaction (docs/operators/migration.md#bulk-writes): each validated by the rules a
    publish applies, those that fail reported, the others written together with their ledger rows; a record only
    the deposit state machine can make (no DOI of its own, say) is made by it, in source order."""
    to_index: list[int] = []
    if not records:
        return to_index
    with db.read() as conn:
        already = ledger.known(conn, source.key, (r.identifier for r in records))
    with db.write() as conn:
        lookups = DatabaseLookups(conn)
        ctx = actions.Context(settings, lookups, metadata_only=True)
        mark = time.perf_counter()
        mapped_all = [(record, _mapped(record, source, lookups, seen, already, report)) for record in records]
        taken = pids.dois_taken(conn, (str(m.metadata["doi"]) for _r, m in mapped_all
                                       if m is not None and isinstance(m.metadata.get("doi"), str)))
        pending: list[tuple[Harvested, dict]] = []  # ready to be written together: (record, metadata as published)
        for record, mapped in mapped_all:
            if mapped is None:
                continue
            try:
                metadata = actions.new_publication(ctx, mapped.metadata, lambda doi: doi.lower() in taken)
            except actions.OneByOne:
                to_index += _write(conn, ctx, owner_id, source, pending, report)  # the ids stay in source order
                pending = []
                try:
                    dep_id, ids = publish_new(conn, ctx, owner_id, mapped.metadata)
                except (ApiError, ValueError) as exc:
                    report.failed.append((record.identifier, reason(exc)))
                    continue
                ledger.note(conn, source.key, record.identifier, dep_id, record.datestamp)
                report.imported.append((record.identifier, dep_id))
                to_index += ids
            except (ApiError, ValueError) as exc:
                report.failed.append((record.identifier, reason(exc)))
                continue
            else:
                pending.append((record, metadata))
                taken.add(str(metadata["doi"]).lower())  # a later record with the same DOI fails, as one by one
            if mapped.unmapped:
                report.unmapped[record.identifier] = mapped.unmapped
        report.phases["validate"] += time.perf_counter() - mark  # with what the one-by-one records wrote
        mark = time.perf_counter()
        to_index += _write(conn, ctx, owner_id, source, pending, report)
        report.phases["write"] += time.perf_counter() - mark
        mark = time.perf_counter()
    report.phases["commit"] += time.perf_counter() - mark  # with the indexing the process runs after each commit
    return to_index


def _mapped(record: Harvested, source: Source, lookups: DatabaseLookups, seen: set[str], already: dict[str, int],
            report: ledger.ImportReport) -> crosswalk.Mapped | None:
    """The deposit metadata of `record`, or None when it is skipped or fails (noted in the report)."""
    if record.identifier in seen:
        report.skipped.append((record.identifier, "a duplicate: it came earlier in this harvest"))
        return None
    seen.add(record.identifier)
    if record.identifier in already:
        report.skipped.append((record.identifier, f"already imported as record {already[record.identifier]}"))
        return None
    if record.deleted:
        report.skipped.append((record.identifier, "deleted at the source"))
        return None
    try:
        return map_record(record, source.prefix, lookups.license_id)
    except ValueError as exc:
        report.failed.append((record.identifier, reason(exc)))
        return None


def _write(conn: Connection, ctx: actions.Context, owner_id: int, source: Source, batch: list[tuple[Harvested, dict]],
           report: ledger.ImportReport) -> list[int]:
    """Write the records of `batch` as `publish` would have, with their ledger rows; their ids."""
    if not batch:
        return []
    now = utcnow()
    ids = [recid for recid, _concept in write_new_concepts(conn, owner_id, [
        ImportedRecord(metadata=metadata, doi=str(metadata["doi"]).lower(), conceptdoi=None, created=now, updated=now)
        for _record, metadata in batch])]
    actions.published_in_bulk(conn, ctx, owner_id, [(recid, str(metadata["doi"]), metadata)
                                                    for (_record, metadata), recid in zip(batch, ids, strict=True)])
    ledger.note_many(conn, source.key, [(record.identifier, recid, record.datestamp)
                                        for (record, _metadata), recid in zip(batch, ids, strict=True)])
    report.imported += [(record.identifier, recid) for (record, _metadata), recid in zip(batch, ids, strict=True)]
    return ids
