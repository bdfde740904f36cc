"""Writing one full public export: the records of `reader.public_records` as gzipped JSON Lines (each line the v1
record the anonymous API answers) and as a gzipped DataCite XML bundle (`<records>` around one `<resource>` per
record, the registry's DataCite renderer), streamed batch by batch (memory stays flat whatever the number of
records), with a manifest of counts, SHA-256 checksums, date and format versions (docs/operators/export.md)."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

import orjson
from isal import igzip

from repository.config import Settings
from repository.exports import folder
from repository.exports.reader import BATCH, DATACITE, public_records
from repository.records.render_context import render_context
from repository.search.backend import IndexBuilder
from repository.storage import Database
from repository.timeutil import isoformat, utcnow
from serializers import REGISTRY

FORMAT_VERSION = 1  # of the export's layout: the files, the manifest's keys
# gzip through ISA-L (the same format, any gunzip reads it): at its level 1 it compressed an export's 198 MB in
# 1.8 s where zlib's level 1 took 7.4 s, and 3 % smaller (bench/export_bench.py's corpus of 20,000 records).
LEVEL = 1
# The bundle around the stored `<resource>` bodies (lxml's, as OAI-PMH serves them inside its envelope, which
# declares xsi for them): the same root `render_page` of the DataCite serializer writes, with that declaration.
BUNDLE_START = (b"<?xml version='1.0' encoding='UTF-8'?>\n"
                b'<records xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n')
BUNDLE_END = b"</records>\n"


class ExportError(Exception):
    """No export was written (another is being written)."""


@dataclass
class _Hashing:
    """A file object that hashes what it writes (the compressed bytes, as a reader downloads them)."""

    handle: IO[bytes]
    digest: Any
    size: int = 0

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()


def export_records(db: Database, settings: Settings, search: IndexBuilder, root: str,
                   now: dt.datetime | None = None, keep: int | None = None, batch: int = BATCH,
                   progress: Callable[[int], object] | None = None) -> dict[str, Any]:
    """Write a full public export under `root` as of `now`, renamed into place when whole, and prune to the `keep`
    newest (EXPORT_KEEP by default); returns its manifest. ExportError when another export is being written; any
    other failure leaves no listed export behind."""
    when = now or utcnow()
    with folder.exclusive(root) as mine:
        if not mine:
            raise ExportError("another export is being written to " + root)
        folder.clear_partials(root)
        name = folder.name_of(when)
        partial = os.path.join(root, folder.PARTIAL + name)
        os.makedirs(partial, mode=0o700)
        try:
            written = _write_files(db, settings, search, partial, batch, progress)
            manifest = _manifest(settings, name, when, written)
            _write_synced(os.path.join(partial, folder.MANIFEST), orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
            if os.path.exists(os.path.join(root, name)):  # two exports in one second: the newer one wins
                folder.remove(root, name)
            folder.publish(root, partial, name)
        except BaseException:
            folder.clear_partials(root)
            raise
        folder.prune(root, settings.EXPORT_KEEP if keep is None else keep)
    return manifest


def _write_files(db: Database, settings: Settings, search: IndexBuilder, partial: str, batch: int,
                 progress: Callable[[int], object] | None) -> dict[str, dict[str, Any]]:
    ctx = render_context(settings, db)
    count = 0
    with open(os.path.join(partial, folder.JSONL), "wb") as jsonl_file, \
            open(os.path.join(partial, folder.DATACITE), "wb") as xml_file:
        jsonl_out, xml_out = _Hashing(jsonl_file, hashlib.sha256()), _Hashing(xml_file, hashlib.sha256())
        with igzip.GzipFile(fileobj=jsonl_out, mode="wb", compresslevel=LEVEL, mtime=0) as jsonl, \
                igzip.GzipFile(fileobj=xml_out, mode="wb", compresslevel=LEVEL, mtime=0) as xml:
            xml.write(BUNDLE_START)
            # Compressing, hashing and writing a batch (ISA-L and hashlib let go of the GIL) on a thread of its
            # own, while this one reads the next: one batch in flight, so memory stays at two batches.
            with ThreadPoolExecutor(1, thread_name_prefix="export-gzip") as pool:
                pending: Future[None] | None = None
                for found in public_records(db, settings, search, ctx, batch):
                    lines, resources = _joined(found.lines), _joined(found.resources)
                    if pending is not None:
                        pending.result()
                    pending = pool.submit(_write_both, jsonl, lines, xml, resources)
                    count += len(found.lines)
                    if progress is not None:
                        progress(count)
                if pending is not None:
                    pending.result()
            xml.write(BUNDLE_END)
        for handle in (jsonl_file, xml_file):
            handle.flush()
            os.fsync(handle.fileno())
    return {folder.JSONL: {"sha256": jsonl_out.digest.hexdigest(), "size": jsonl_out.size, "records": count,
                           "format": "v1", "media_type": REGISTRY["v1"].mimetype, "compression": "gzip"},
            folder.DATACITE: {"sha256": xml_out.digest.hexdigest(), "size": xml_out.size, "records": count,
                              "format": "datacite", "media_type": REGISTRY["datacite"].mimetype,
                              "schema": DATACITE.schema, "namespace": DATACITE.namespace, "compression": "gzip"}}


def _joined(items: list[bytes]) -> bytes:
    """One line per item."""
    return b"\n".join(items) + b"\n" if items else b""


def _write_both(first: igzip.IGzipFile, first_data: bytes, second: igzip.IGzipFile, second_data: bytes) -> None:
    first.write(first_data)
    second.write(second_data)


def _manifest(settings: Settings, name: str, when: dt.datetime, files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"export_format": FORMAT_VERSION, "id": name, "created": isoformat(when), "source": settings.BASE_URL,
            "doi_prefix": settings.doi_prefix, "records": files[folder.JSONL]["records"], "files": files}


def _write_synced(path: str, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
