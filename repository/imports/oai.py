"""`repository-admin import oai`: a harvest of an OAI-PMH repository made into metadata-only records
(docs/operators/migration.md#importing-from-oai-pmh).

Each page is one transaction: its new records are created and published through the deposit state machine and
noted in the ledger together, so what a crash interrupts is either all there or not at all. Records already in the
ledger, deleted at the source, or repeated within the harvest are skipped; a record whose metadata fail is reported
with its source identifier and the reason, and the others go on. The DOIs of the source stay the records' DOIs:
they are external DOIs, never registered under this service's prefix. A harvest that ran to the end remembers its
first answer's date, the `from` of the next incremental harvest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from repository.config import Settings
from repository.deposits import actions
from repository.imports import crosswalk, ledger
from repository.imports.harvest import Fetcher, Harvested, HarvestStopped, pages
from repository.imports.publishing import ApiError, publish_new, reason
from repository.records.lookups import DatabaseLookups
from repository.storage import Database

# oai_datacite wraps a DataCite resource in an envelope; datacite (Zenodo, DataCite) is the bare resource.
PREFIXES = ("oai_datacite", "datacite", "oai_dc")


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
               on_commit: Callable[[list[int]], object] | None = None) -> ledger.ImportReport:
    """Harvest `source` and publish what is new as metadata-only records of `owner_id`; `from_` (else the last
    complete harvest's date) limits the harvest to what changed since. `on_commit` gets each page's records to
    index once its transaction committed."""
    report = ledger.ImportReport()
    if from_ is None:
        with db.read() as conn:
            from_ = ledger.last_harvest(conn, source.key)
    seen: set[str] = set()
    started: str | None = None
    try:
        for page in pages(fetcher, source.prefix, source.set_spec, from_):
            started = started or page.response_date
            report.failed.extend(page.problems)
            to_index = _import_page(db, settings, owner_id, source, page.records, seen, report)
            if on_commit is not None and to_index:
                on_commit(to_index)
            if progress is not None:
                progress(len(report.imported) + len(report.skipped) + len(report.failed))
    except HarvestStopped as exc:
        report.stopped = str(exc)
        return report
    if started:
        with db.write() as conn:
            ledger.harvested(conn, source.key, started[:10])  # a day: every OAI-PMH repository takes it
    return report


def _import_page(db: Database, settings: Settings, owner_id: int, source: Source, records: list[Harvested],
                 seen: set[str], report: ledger.ImportReport) -> list[int]:
    to_index: list[int] = []
    with db.read() as conn:
        already = ledger.known(conn, source.key, (r.identifier for r in records))
    with db.write() as conn:
        lookups = DatabaseLookups(conn)
        ctx = actions.Context(settings, lookups, metadata_only=True)
        for record in records:
            if record.identifier in seen:
                report.skipped.append((record.identifier, "a duplicate: it came earlier in this harvest"))
                continue
            seen.add(record.identifier)
            if record.identifier in already:
                report.skipped.append((record.identifier, f"already imported as record {already[record.identifier]}"))
                continue
            if record.deleted:
                report.skipped.append((record.identifier, "deleted at the source"))
                continue
            try:
                mapped = map_record(record, source.prefix, lookups.license_id)
                dep_id, ids = publish_new(conn, ctx, owner_id, mapped.metadata)
            except (ApiError, ValueError) as exc:
                report.failed.append((record.identifier, reason(exc)))
                continue
            ledger.note(conn, source.key, record.identifier, dep_id, record.datestamp)
            report.imported.append((record.identifier, dep_id))
            if mapped.unmapped:
                report.unmapped[record.identifier] = mapped.unmapped
            to_index.extend(ids)
    return to_index
