"""Importing the published records of a service that speaks this API (the reference service, another instance of
this one): `repository-admin import api BASE_URL` (docs/operators/migration.md#importing-from-another-service).

Each concept found by the source's search is taken with every version, in version order, their files streamed
into the file store and checked against the source's checksums, their DOIs kept (never registered again here),
their communities created when missing, and the original linked (`isIdenticalTo` its landing page, its API address
as an alternate identifier). Threads (`concurrency`) read the source and download, ahead of the calling thread,
which writes `BATCH` versions at a time in one transaction with their ledger rows (`api_write`), so nothing
half-written is ever visible and a rerun takes exactly what is missing. A version that fails stops the later
versions of its concept (they would otherwise be numbered before it), each reported with the source id and the
reason; the other concepts go on."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from repository import urls
from repository.files.store import FileStore, StoredFile
from repository.imports import ledger
from repository.imports.api_write import FAILURES, Concept, Version, reason, write_batch
from repository.imports.source import Source, SourceError
from repository.storage import Database

# Versions written in one transaction and indexed together after its commit: enough to make the statements few,
# few enough that the threads keep reading the next batch while one is written.
BATCH = 200
AHEAD = 2 * BATCH  # concepts read ahead of the writing thread, at most


@dataclass
class ImportReport:
    """What a run did: versions imported now, already there (an earlier run's), failed (source id, reason),
    entries the source listed twice, the files and bytes transferred, and why the listing stopped early."""

    imported: int = 0
    skipped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    listing_error: str | None = None
    # Seconds the writing thread waited for the source (listings, downloads), wrote, and committed (with the
    # indexing the process runs after each commit): where an import's time goes (bench/import_bench.py).
    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("wait", "write", "commit"), 0.0))


class ApiImport:
    """One run of an import from `source` into `db` and `store`, owned by `owner_id`."""

    def __init__(self, db: Database, store: FileStore, source: Source, owner_id: int, concurrency: int = 4,
                 progress: Callable[[int], object] | None = None) -> None:
        self.db, self.store, self.source, self.owner_id = db, store, source, owner_id
        self.concurrency = max(1, concurrency)
        self.progress = progress
        self.report = ImportReport()
        self.key = f"api:{source.base}"  # the ledger's name of the source
        with db.read() as conn:
            self.done = ledger.versions(conn, self.key)  # (record id, concept id) here by source record id
        self._titles: dict[str, str] = {}
        self._titles_lock = threading.Lock()

    def run(self, community: str | None = None, query: str | None = None) -> ImportReport:
        """Import every published record the source's search gives for `query` in `community`, with every
        version of each; returns the report."""
        seen: set[str] = set()
        pending: deque[Future[Concept]] = deque()  # read by the threads, in the order of the listing
        ready: list[Concept] = []

        def take_one() -> None:
            nonlocal ready
            mark = time.perf_counter()
            ready.append(pending.popleft().result())
            self.report.phases["wait"] += time.perf_counter() - mark
            if sum(len(c.versions) for c in ready) >= BATCH:
                self._write(ready)
                ready = []

        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="import") as pool:
            for hit in self._hits(community, query):
                if not isinstance(hit, dict) or not str(hit.get("id", "")).isdigit():
                    self.report.failed.append((str(hit.get("id", "?")) if isinstance(hit, dict) else "?",
                                               "a search hit without a record id"))
                    continue
                concept = str(hit.get("conceptrecid") or hit["id"])
                if concept in seen:
                    self.report.duplicates.append(str(hit["id"]))
                    continue
                seen.add(concept)
                if str(hit["id"]) in self.done:  # its newest version is here, so are the others
                    self.report.skipped += _version_count(hit)
                    self._tick()
                    continue
                pending.append(pool.submit(self._fetch, concept, hit))
                while pending and (pending[0].done() or len(pending) >= AHEAD):
                    take_one()
            while pending:
                take_one()
            self._write(ready)
        return self.report

    # --- reading the source (the pool's threads) ----------------------------------------------------------
    def _hits(self, community: str | None, query: str | None) -> Iterator[Any]:
        """The hits of the source's search, newest first. A listing that ends before its total, as the reference
        service's stops at its 10,000th result (docs/reference-behaviour.md#search), goes on in a new listing of
        what was created before the last hit's second, less the hits of that second already listed, as often as it
        takes; a page that fails for good, is not a search answer or repeats an earlier one ends it (noted in the
        report)."""
        window, listing = _Window(), _Window()
        while True:
            yield from self._listing(community, _windowed(query, window), listing)
            if (self.report.listing_error is not None or listing.total is None or listing.listed >= listing.total
                    or not listing.last_second):
                return
            if listing.fresh == 0:
                self.report.listing_error = (f"the source's listing stops at {listing.listed} of {listing.total} "
                                             "results and gives no earlier ones")
                return
            window, listing = listing, listing.following()

    def _listing(self, community: str | None, query: str | None, window: _Window) -> Iterator[Any]:
        """One listing of the source's search, page by page along `links.next`, newest first, noted in `window`."""
        params: dict[str, Any] | None = {"size": self.source.page_size, "sort": "mostrecent", **({"q": query} if query else {}),
                                          **({"communities": community} if community else {})}
        url: str | None = urls.record_api(self.source.base, "")  # the search: `/api/records/`
        visited: set[str] = set()
        while url:
            try:
                page = self.source.json(url, params)
                hits = page["hits"]["hits"]
                if not isinstance(hits, list):
                    raise TypeError("hits.hits is not a list")
            except SourceError as exc:
                self.report.listing_error = str(exc)
                return
            except (KeyError, TypeError) as exc:
                self.report.listing_error = f"{url}: not a search answer ({type(exc).__name__}: {exc})"
                return
            if window.total is None:
                window.total = _total(page["hits"].get("total"))
            for hit in hits:
                window.listed += 1
                if window.note(hit):
                    yield hit
            visited.add(url)
            links = page.get("links") if isinstance(page, dict) else None
            following = links.get("next") if isinstance(links, dict) else None
            if following in visited:
                self.report.listing_error = f"the source gave the page {following} twice"
                return
            url, params = (following if hits else None), None

    def _fetch(self, concept: str, hit: dict[str, Any]) -> Concept:
        """Every version of `concept`, oldest first, with the files of those not yet imported downloaded."""
        try:
            listed = self._versions(hit)
        except FAILURES as exc:
            return Concept(concept, [], {}, f"the versions of its concept {concept} cannot be listed: {exc}",
                            listed_as=str(hit["id"]))
        versions, broken = [], None
        for record in listed:
            version = Version(str(record["id"]), record, done=str(record["id"]) in self.done)
            if not version.done and broken is not None:
                version.error = f"an earlier version ({broken}) was not imported"
            elif not version.done:
                try:
                    version.deposited  # noqa: B018 - worked out here, while the writing thread writes
                    version.files = self._download(record)
                except FAILURES as exc:
                    version.error, broken = reason(exc), version.source_id
            versions.append(version)
        return Concept(concept, versions, self._community_titles(versions))

    def _versions(self, hit: dict[str, Any]) -> list[dict[str, Any]]:
        if not hit.get("conceptrecid") or _stated_count(hit) == 1:
            return [hit]  # the search hit is the concept's one version, whole: its listing would say no more
        url: str | None = (hit.get("links") or {}).get("versions") or urls.record_versions_api(self.source.base, hit["id"])
        params: dict[str, Any] | None = {"size": self.source.page_size, "all_versions": "true"}
        found: dict[str, dict[str, Any]] = {}
        while url:
            page = self.source.json(url, params)
            hits = page["hits"]["hits"]
            for record in hits:
                if str(record.get("conceptrecid")) == str(hit["conceptrecid"]):
                    found.setdefault(str(record["id"]), record)
            following = (page.get("links") or {}).get("next")
            url, params = (following if hits and following != url else None), None
        if str(hit["id"]) not in found:
            found[str(hit["id"])] = hit
        return sorted(found.values(), key=lambda r: (_version_index(r), int(r["id"])))

    def _download(self, record: dict[str, Any]) -> list[tuple[str, StoredFile]]:
        """The record's files, streamed into the store and checked against the source's size and MD5; on any
        failure nothing of them is left in the store."""
        stored: list[tuple[str, StoredFile]] = []
        try:
            for item in record.get("files") or []:
                links = item.get("links") or {}
                response = self.source.get(links.get("download") or links["self"])
                try:
                    response.raw.decode_content = True  # the checksum is of the bytes, not of a transfer encoding
                    written = self.store.write(response.raw, durable=False)  # synced per batch
                finally:
                    response.close()
                stored.append((str(item["key"]), written))
                expected = str(item.get("checksum", ""))
                if expected.removeprefix("md5:") != written.checksum.removeprefix("md5:"):
                    raise ValueError(f"file {item['key']!r}: checksum {written.checksum} after the transfer, the "
                                     f"source says {expected or 'nothing'}")
                if int(item.get("size", written.size)) != written.size:
                    raise ValueError(f"file {item['key']!r}: {written.size} bytes arrived, the source says "
                                     f"{item['size']}")
        except BaseException:
            self._discard(stored)
            raise
        return stored

    def _community_titles(self, versions: list[Version]) -> dict[str, str]:
        wanted = {str(c.get("id")) for v in versions if not v.done and not v.error
                  for c in (v.record.get("metadata") or {}).get("communities") or [] if isinstance(c, dict)}
        for identifier in wanted - set(self._titles):
            try:
                title = str(self.source.json(urls.community_api(self.source.base, identifier)).get("title") or identifier)
            except (SourceError, AttributeError):
                title = identifier
            with self._titles_lock:
                self._titles[identifier] = title
        return {identifier: self._titles[identifier] for identifier in wanted}

    # --- writing (the calling thread) ----------------------------------------------------------------------
    def _write(self, batch: list[Concept]) -> None:
        """Write the new versions of `batch` in one transaction (`api_write.write_batch`): their files are synced to
        disk before the rows that name them commit, and the files of the versions that failed are removed. One
        commit and one index update for the batch, as a bulk load."""
        if not batch:
            return
        mark = time.perf_counter()
        with self.db.write() as conn:
            try:
                written = write_batch(conn, self.owner_id, self.key, batch, self.done)
            except BaseException:  # the batch's rows are rolled back: none of its files stays without them
                for concept in batch:
                    for version in concept.versions:
                        self._discard(version.files)
                raise
            self.store.sync()  # the files were written without an fsync each: on disk before the rows name them
            self.report.phases["write"] += time.perf_counter() - mark
            mark = time.perf_counter()
        self.report.phases["commit"] += time.perf_counter() - mark
        for concept in batch:
            for version in concept.versions:
                if version.error is not None:
                    self._discard(version.files)
                elif version.done:
                    self.report.skipped += 1
        for version, recid, concept_id in written.versions:
            self.done[version.source_id] = (recid, concept_id)
            self.report.imported += 1
            self.report.files += len(version.files)
            self.report.bytes += sum(stored.size for _key, stored in version.files)
        self.report.failed += written.failed
        self._tick()

    def _discard(self, files: list[tuple[str, StoredFile]]) -> None:
        for _key, stored in files:
            self.store.remove(stored.uri)

    def _tick(self) -> None:
        if self.progress is not None:
            self.progress(self.report.imported + self.report.skipped + len(self.report.failed))


def _version_index(record: dict[str, Any]) -> int:
    try:
        return int(record["metadata"]["relations"]["version"][0]["index"])
    except (KeyError, IndexError, TypeError, ValueError):
        return 0


def _version_count(hit: dict[str, Any]) -> int:
    return max(1, _stated_count(hit) or 1)


def _stated_count(hit: dict[str, Any]) -> int | None:
    """The number of versions of the hit's concept, as the record says (None: it does not say)."""
    try:
        return int(hit["metadata"]["relations"]["version"][0]["count"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


@dataclass
class _Window:
    """One listing of the source's search: its stated total, the hits it listed and those new to the run (`fresh`:
    not in an `earlier` listing), and the second its last hit was created in with the ids of the hits of that
    second (the next listing's bound)."""

    earlier: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)
    total: int | None = None
    listed: int = 0
    fresh: int = 0
    last_second: str = ""
    last_ids: list[str] = field(default_factory=list)

    def note(self, hit: Any) -> bool:
        """Note `hit`; False when an earlier listing gave it (the bound's second is listed again)."""
        recid = str(hit.get("id", "")) if isinstance(hit, dict) else ""
        second = _second(hit.get("created")) if isinstance(hit, dict) else ""
        if second and second != self.last_second:
            self.last_second, self.last_ids = second, []
        if second and recid.isdigit() and recid not in self.last_ids:
            self.last_ids.append(recid)
        if recid in self.earlier:
            return False
        self.ids.add(recid)
        self.fresh += 1
        return True

    def following(self) -> _Window:
        """The next listing's window: it starts in the second this one ended in, with the ids listed in it."""
        return _Window(earlier=self.earlier | self.ids, last_second=self.last_second, last_ids=list(self.last_ids))


def _windowed(query: str | None, window: _Window) -> str | None:
    """`query` limited to what was created before the end of `window`'s last second, less the hits of that second
    it listed: what the search gives after them, newest first (`created` is indexed to the second)."""
    if not window.last_second:
        return query
    end = (datetime.fromisoformat(window.last_second) + timedelta(seconds=1)).isoformat()
    bound = f'created:[* TO "{end}"}}'
    if window.last_ids:
        bound += " AND NOT recid:(" + " OR ".join(sorted(set(window.last_ids), key=int)) + ")"
    return f"({query}) AND {bound}" if query else bound


def _second(created: Any) -> str:
    """The second a record was created in, as an ISO time in UTC ("" when `created` is not a time)."""
    try:
        moment = datetime.fromisoformat(str(created))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


def _total(total: Any) -> int | None:
    """A search answer's `hits.total`: a number, or OpenSearch's `{"value": n}`."""
    if isinstance(total, dict):
        total = total.get("value")
    return total if isinstance(total, int) and not isinstance(total, bool) else None
