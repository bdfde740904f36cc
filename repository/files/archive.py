"""Whole-record archives (`/api/records/<id>/files-archive`): one zip of a record's files, made while it is sent.

zipstream-ng writes each entry as its bytes go by (a header, the file read a chunk at a time, a data descriptor
with the CRC) and the central directory at the end: no temporary file, one file open at a time, memory flat
whatever the record's size. Entries are stored, not deflated (data files are mostly compressed already, and
deflating would cost more CPU than the network saves), so every entry's length is known and so is the archive's,
before its first byte: a Content-Length for the client's progress bar. ZIP64 records are written where an entry or
the archive passes 4 GiB. The entries carry the time they are sent, so two downloads differ in those bytes: there
is no entity tag and no Range (a client resumes by downloading the files it lacks from the bucket).

The BagIt form (RFC 8493, `bag=`): one top directory `<recid>/` with bagit.txt, bag-info.txt, the record's metadata
under metadata/, the files under data/, `manifest-md5.txt` from the stored checksums (ahead of the files: a bag
validator then checks the bytes against what the repository recorded at upload), `manifest-sha256.txt` from the
SHA-256s stored at upload, or computed while the files stream for files stored before those were kept (so it comes
after the files: a zip's order is free), and tag manifests in both algorithms. Each of those
files' length is known before it is written, so the bag's length is known up front too.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import zipstream.ng  # type: ignore[import-untyped]  # no type information shipped
from isal import isal_zlib
from zipstream import ZipStream

from repository.errors import ServiceUnavailable
from repository.files.buckets import ObjectRow
from repository.files.store import FileStore

log = logging.getLogger("repository.files.archive")

# zipstream-ng takes each entry's CRC-32 with zipfile's crc32 (zlib's), measured the largest cost of the stream:
# 0.5-0.9 GB/s a core here, half the time of a page-cache-warm archive. ISA-L's (python-isal) computes the same
# CRC-32 with carry-less multiplication at ~8 GB/s. zipstream-ng looks the name up in its module when it streams.
zipstream.ng.crc32 = isal_zlib.crc32

BAGIT_TXT = b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
HEX_LENGTH = {"md5": 32, "sha256": 64}


@dataclass(frozen=True)
class Archive:
    """A record's archive ready to send: its download name, its length in bytes, the files it holds (what a download
    counts), and its bytes, produced only as `chunks()` is read."""

    name: str
    size: int
    files: list[ObjectRow]
    stream: ZipStream

    def chunks(self) -> Iterator[bytes]:
        """The archive's bytes; a file is opened when its entry is reached and closed at its end."""
        yield from self.stream


def record_archive(store: FileStore, row: dict, objs: list[ObjectRow], *, bag: dict[str, bytes] | None = None,
                   source: str = "", beside: dict[str, bytes] | None = None) -> Archive:
    """The archive of record `row` (a records row) holding `objs`, its files the reader may read: a plain zip (with
    `beside`, name -> bytes, at its root before the files: an RO-Crate's metadata file), or with `bag` (metadata
    file name -> bytes) a BagIt bag naming `source` as its organization. ServiceUnavailable (503) when a file is
    missing on disk, before any byte is sent."""
    sizes = [_size_on_disk(store, obj) for obj in objs]
    stream = ZipStream(sized=True)  # stored entries only: the length is known
    if bag is None:
        for name, content in (beside or {}).items():
            stream.add(content, name)
        for obj, size in zip(objs, sizes, strict=True):
            stream.add(store.read(obj["uri"]), obj["key"], size=size)
    else:
        _add_bag(stream, store, row, objs, sizes, bag, source)
    return Archive(f"{row['id']}.zip", len(stream), objs, stream)


def _size_on_disk(store: FileStore, obj: ObjectRow) -> int:
    """The file's length as stored; the stream would break mid-way on a file that is gone, so it is checked first."""
    try:
        return store.size(obj["uri"])
    except OSError as exc:
        log.error("file %s of bucket %s is missing from the store at %s (%s)", obj["key"], obj["bucket_id"],
                  obj["uri"], exc)
        raise ServiceUnavailable(
            "The contents of a file of this record are unavailable at the moment; the operators have been told."
        ) from exc


def _later(make: Callable[[], bytes]) -> Iterator[bytes]:
    """Bytes made when the stream reaches this entry: a manifest of digests computed by the entries before it."""
    yield make()


def bag_path(path: str) -> str:
    """A payload path as a manifest line names it (RFC 8493 §2.1.3: only `%`, CR and LF are percent-encoded)."""
    return path.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _manifest_line_length(algorithm: str, path: str) -> int:
    return HEX_LENGTH[algorithm] + 2 + len(bag_path(path).encode()) + 1


def _manifest(digests: dict[str, str], paths: list[str]) -> bytes:
    return "".join(f"{digests[path]}  {bag_path(path)}\n" for path in paths).encode()


def _one_line(value: str) -> str:
    """A bag-info value on one line (a line break would start a continuation or another label)."""
    return " ".join(value.split())


def _add_bag(stream: ZipStream, store: FileStore, row: dict, objs: list[ObjectRow], sizes: list[int],
             metadata: dict[str, bytes], source: str) -> None:
    top = str(row["id"])
    tags: dict[str, bytes] = {}  # tag file -> its bytes, for the tag manifests

    def tag(name: str, content: bytes) -> None:
        tags[name] = content
        stream.add(content, f"{top}/{name}")

    info = {
        "Source-Organization": source,
        "External-Identifier": row.get("doi") or "",
        "External-Description": row["metadata"].get("title", ""),
        "Bagging-Date": dt.datetime.now(dt.UTC).date().isoformat(),
        "Payload-Oxum": f"{sum(sizes)}.{len(objs)}",
    }
    tag("bagit.txt", BAGIT_TXT)
    tag("bag-info.txt", "".join(f"{label}: {_one_line(value)}\n" for label, value in info.items() if value).encode())
    for name, content in metadata.items():
        tag(f"metadata/{name}", content)
    paths = [f"data/{obj['key']}" for obj in objs]
    if all(obj["checksum"].startswith("md5:") for obj in objs):
        tag("manifest-md5.txt", _manifest({p: o["checksum"][4:] for p, o in zip(paths, objs, strict=True)}, paths))
    stream.mkdir(f"{top}/data")  # present even when the bag holds no file (§2: the payload directory is required)
    # SHA-256s stored at upload where there are (the bag then checks the bytes against them), else computed while
    # the file streams (files stored before SHA-256s were kept).
    stored = {path: obj.get("sha256") for path, obj in zip(paths, objs, strict=True)}
    hashers = {path: hashlib.sha256() for path, known in stored.items() if not known}
    for obj, size, path in zip(objs, sizes, paths, strict=True):
        hasher = hashers.get(path)
        stream.add(store.read(obj["uri"], digest=hasher.update if hasher else None), f"{top}/{path}", size=size)

    def payload_manifest() -> bytes:  # run once every file has gone by its hasher
        digests = {path: known or hashers[path].hexdigest() for path, known in stored.items()}
        tags["manifest-sha256.txt"] = _manifest(digests, paths)
        return tags["manifest-sha256.txt"]

    stream.add(_later(payload_manifest), f"{top}/manifest-sha256.txt",
               size=sum(_manifest_line_length("sha256", path) for path in paths))
    tag_names = [*tags, "manifest-sha256.txt"]  # those written by the time the tag manifests are made
    for algorithm in ("md5", "sha256"):
        def tag_manifest(algorithm: str = algorithm) -> bytes:
            return _manifest({name: hashlib.new(algorithm, tags[name]).hexdigest() for name in tag_names}, tag_names)

        stream.add(_later(tag_manifest), f"{top}/tagmanifest-{algorithm}.txt",
                   size=sum(_manifest_line_length(algorithm, name) for name in tag_names))
