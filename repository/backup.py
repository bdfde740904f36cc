"""Backup and restore: the database as of one commit plus the files it references; the search index is rebuilt.

A backup folder holds:

    manifest.json   what it is: format, when, the database kind and revision, counts, the database dump's SHA-256
    database.sqlite | database.pgdump   the consistent copy (repository/storage/dump.py)
    files/<uri>     every file instance the copy references, at its path under FILES_ROOT
    files.jsonl     one line per file: id, uri, size, MD5 (as stored: `md5:<hex>`) and SHA-256
    SHA256SUMS      `sha256sum -c SHA256SUMS` checks the folder with no other tool

Which files: exactly the file instances of the database copy (drafts' included), copied after it was taken.
Contents are immutable once written, so a file copied later is the one the copy references; one deleted in the
meantime (a draft's file removed during the backup) is left out and listed in the manifest, since no later state
needs it; one missing while the live database still references it is a loss, reported as a problem. Files written
after the copy was taken are not in it (their rows are not either). Each copy is checked against the stored MD5.

The folder is written under a temporary name beside the target and renamed into place at the end, so a target
either does not exist or is a complete backup. A restore goes into an empty instance only: the dump loaded, the
schema brought to this release's revision, every file copied and checked against both checksums, then the index
rebuilt and checked as `reindex --check` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, select, text
from tqdm import tqdm

from repository.config import Settings
from repository.files.s3store import store_for
from repository.storage import Database, dump, open_database, upgrade
from repository.storage.tables.accounts import users
from repository.storage.tables.deposits import deposits
from repository.storage.tables.files import file_instances
from repository.storage.tables.records import records
from repository.timeutil import isoformat, utcnow

FORMAT = "research-repository-backup/1"
MANIFEST, FILES_LIST, SUMS, FILES_DIR = "manifest.json", "files.jsonl", "SHA256SUMS", "files"
CHUNK = 1024 * 1024
TMP_DIR = ".tmp"  # the file store's staging folder (repository/files/store.py), ignored by the emptiness check
SWEEP_STAMP = ".swept"  # the file store's sweep stamp (repository/files/sweeper.py): no stored file either


class BackupError(Exception):
    """The backup or the restore cannot go on; the message says why."""


@dataclass
class Report:
    """What a backup or a restore did: counts, and the problems that make it exit 1."""

    folder: Path
    counts: dict[str, int] = field(default_factory=dict)
    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)  # files deleted during the backup (harmless)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


# --- backup -------------------------------------------------------------------------------------------------
def back_up(db: Database, settings: Settings, target: Path, quiet: bool = False) -> Report:
    """Write a backup of the running instance into `target`, which must not exist or be an empty folder."""
    target = target.absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise BackupError(f"{target} is not an empty folder: a backup goes into a new one")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.parent / f".{target.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(mode=0o700)  # the database holds password hashes and token digests: the owner's only
    started = time.monotonic()
    try:
        report = _write(db, settings, partial, quiet)
        _owner_only(partial)
        os.sync()  # every file and folder on disk before the backup is named complete
        os.replace(partial, target)  # replaces an empty folder too
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    report.folder, report.seconds = target, time.monotonic() - started
    return report


def _owner_only(folder: Path) -> None:
    """Every file and folder of the backup readable by its owner only, whatever the umask it was written under
    (a backup copied or unpacked elsewhere keeps the permissions)."""
    for path in folder.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)


def _write(db: Database, settings: Settings, folder: Path, quiet: bool) -> Report:
    report = Report(folder)
    dump_name = dump.dump_file_name(db)
    pending = folder / "files.pending"
    taken = isoformat(utcnow())
    try:
        with dump.snapshot(db, folder / dump_name) as conn:
            revision = conn.scalar(text("SELECT version_num FROM alembic_version"))
            report.counts = _counts(conn)
            total = _list_files(conn, pending)
    except dump.DumpError as exc:
        raise BackupError(str(exc)) from exc
    sums = [f"{_sha256(folder / dump_name)}  {dump_name}"]
    with open(pending, encoding="utf-8") as listed, open(folder / FILES_LIST, "w", encoding="utf-8") as out, \
            _bar(total, quiet, "files") as bar:
        for line in listed:
            entry = json.loads(line)
            copied = _copy_out(db, settings, entry, folder, report)
            bar.update(entry["size"])
            if copied is not None:
                out.write(json.dumps(copied) + "\n")
                sums.append(f"{copied['sha256']}  {FILES_DIR}/{copied['uri']}")
    pending.unlink()
    manifest = {
        "format": FORMAT, "created": taken, "database": {
            "kind": "sqlite" if db.is_sqlite else "postgresql", "file": dump_name, "revision": revision,
            "sha256": sums[0].split()[0]},
        "counts": report.counts, "files": report.files, "bytes": report.bytes,
        "deleted_during_backup": report.skipped, "problems": report.problems,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (folder / SUMS).write_text("\n".join(sums) + "\n", encoding="utf-8")
    return report


def _counts(conn: Connection) -> dict[str, int]:
    """What the copy holds, for the report and for checking a restore."""
    return {
        "records": conn.scalar(select(func.count()).select_from(records).where(records.c.deleted.is_(None))) or 0,
        "deposits": conn.scalar(select(func.count()).select_from(deposits)) or 0,
        "users": conn.scalar(select(func.count()).select_from(users)) or 0,
        "files": conn.scalar(select(func.count()).select_from(file_instances)) or 0,
    }


def _list_files(conn: Connection, pending: Path) -> int:
    """Write the copy's file instances to `pending` (one JSON line each, streamed); their total size."""
    query = select(file_instances.c.id, file_instances.c.uri, file_instances.c.size, file_instances.c.checksum)
    total = 0
    with open(pending, "w", encoding="utf-8") as out:
        for row in conn.execution_options(yield_per=1000).execute(query.order_by(file_instances.c.id)):
            out.write(json.dumps({"id": row.id, "uri": row.uri, "size": row.size, "md5": row.checksum}) + "\n")
            total += row.size
    return total


def _copy_out(db: Database, settings: Settings, entry: dict[str, Any], folder: Path,
              report: Report) -> dict[str, Any] | None:
    """Copy one file into the backup, checking it against its stored MD5; None when it is not there."""
    dest = folder / FILES_DIR / entry["uri"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:  # through the store: the directory's files or the bucket's objects (docs/operators/object-storage.md)
        md5, sha256, size = _copy_chunks(store_for(settings).read(entry["uri"]), dest)
    except FileNotFoundError:
        dest.unlink(missing_ok=True)
        with db.read() as conn:
            still = conn.scalar(select(file_instances.c.id).where(file_instances.c.id == entry["id"]))
        if still is None:
            report.skipped.append(entry["id"])
        else:
            report.problems.append(f"file {entry['id']} ({entry['uri']}) is missing from {settings.FILES_ROOT}")
        return None
    if md5 != entry["md5"] or size != entry["size"]:
        report.problems.append(f"file {entry['id']} ({entry['uri']}) does not match its stored checksum "
                               f"({entry['md5']}, {entry['size']} bytes; on disk {md5}, {size} bytes)")
    report.files += 1
    report.bytes += size
    return {**entry, "sha256": sha256}


# --- restore ------------------------------------------------------------------------------------------------
def restore(settings: Settings, source: Path, quiet: bool = False) -> Report:
    """Restore the backup in `source` into the empty instance of `settings`; the index is rebuilt and checked.

    The database is the one DATABASE_URL names (a SQLite file that does not exist yet, or an empty PostgreSQL
    database), the files go under FILES_ROOT (absent or empty), the index is the one SEARCH_URL names."""
    started = time.monotonic()
    manifest = _read_manifest(source)
    _check_empty(settings)
    dump_name = manifest["database"]["file"]
    if _sha256(source / dump_name) != manifest["database"]["sha256"]:
        raise BackupError(f"{source / dump_name} does not match its checksum in the manifest: the backup is damaged")
    _check_revision(manifest["database"]["revision"])
    try:
        dump.load(settings.DATABASE_URL, source / dump_name)
    except dump.DumpError as exc:
        raise BackupError(str(exc)) from exc
    db = open_database(settings.DATABASE_URL)
    try:
        upgrade(db)
        report = Report(source)
        with db.read() as conn:
            report.counts = _counts(conn)
        _restore_files(settings, source, manifest, report, quiet)
        _rebuild_index(db, settings, report, quiet)
    finally:
        db.dispose()
    for name in ("records", "deposits", "users"):
        if report.counts[name] != manifest["counts"][name]:
            report.problems.append(f"the backup's manifest counts {manifest['counts'][name]} {name}, the restored "
                                   f"database {report.counts[name]}")
    report.seconds = time.monotonic() - started
    return report


def _read_manifest(source: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupError(f"{source} is not a backup folder (no readable {MANIFEST}: {exc})") from exc
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source / MANIFEST}: unknown format {manifest.get('format')!r} (expected {FORMAT})")
    return manifest


def _check_empty(settings: Settings) -> None:
    """A restore never mixes with existing data: the database and the file store must be empty."""
    root = Path(settings.FILES_ROOT)
    # The staging area may hold empty folders (an S3 store's cache folder): only files make it non-empty.
    if root.exists() and any(p.name != SWEEP_STAMP and (p.name != TMP_DIR or any(q.is_file() for q in p.rglob("*")))
                             for p in root.iterdir()):
        raise BackupError(f"FILES_ROOT {root} is not empty: a restore goes into an empty instance")
    if not store_for(settings).is_empty():
        raise BackupError(f"the bucket S3_BUCKET={settings.S3_BUCKET} is not empty: a restore goes into an empty "
                          "instance")
    if not dump.is_empty(settings.DATABASE_URL):
        raise BackupError("the database DATABASE_URL names is not empty: a restore goes into a new, empty "
                          "database (a SQLite file that does not exist yet, or `createdb` a new one)")


def _check_revision(revision: str | None) -> None:
    """The backup must come from this release or an older one: its revision must be one this release knows."""
    from alembic.script import ScriptDirectory

    from repository.storage.migrate import MIGRATIONS_DIR

    if revision is None:
        return
    if revision not in {script.revision for script in ScriptDirectory(MIGRATIONS_DIR).walk_revisions()}:
        raise BackupError(f"the backup's database is at revision {revision}, which this release does not know: "
                          "restore it with the release that made it (or a newer one)")


def _restore_files(settings: Settings, source: Path, manifest: dict[str, Any], report: Report,
                   quiet: bool) -> None:
    root = Path(settings.FILES_ROOT)
    (root / TMP_DIR).mkdir(parents=True, exist_ok=True)
    store = store_for(settings)
    with _bar(manifest["bytes"], quiet, "files") as bar:
        for entry in _entries(source):
            staged = root / TMP_DIR / entry["id"]
            try:
                md5, sha256, size = _copy(source / FILES_DIR / entry["uri"], staged)
            except FileNotFoundError:
                report.problems.append(f"file {entry['id']} ({entry['uri']}) is missing from the backup")
                continue
            bar.update(size)
            if (md5, sha256, size) != (entry["md5"], entry["sha256"], entry["size"]):
                staged.unlink()
                report.problems.append(f"file {entry['id']} ({entry['uri']}) does not match its checksums in the "
                                       "backup: not restored")
                continue
            store.place(str(staged), entry["uri"])
            report.files += 1
            report.bytes += size
    os.sync()
    skipped = len(manifest.get("deleted_during_backup", []))
    if report.files + skipped != report.counts["files"]:
        report.problems.append(f"the restored database references {report.counts['files']} files, the backup "
                               f"restored {report.files} (and {skipped} were deleted during the backup)")


def _entries(source: Path) -> Iterator[dict[str, Any]]:
    with open(source / FILES_LIST, encoding="utf-8") as listed:
        for line in listed:
            yield json.loads(line)


def _rebuild_index(db: Database, settings: Settings, report: Report, quiet: bool) -> None:
    """Build the index from the restored database (the reindex command's code) and check it and the files."""
    from repository.search.open import open_from_settings
    from repository.worker import reindex

    search = open_from_settings(settings)
    with _bar(len(reindex.published_revisions(db)), quiet, "rec") as bar:
        def advance(count: int) -> None:
            bar.update(count)

        report.counts["indexed"] = reindex.rebuild(db, settings, search, advance)
    report.problems += reindex.check(db, search) + reindex.check_files(db)


# --- bytes --------------------------------------------------------------------------------------------------
def _copy(source: Path, dest: Path) -> tuple[str, str, int]:
    """Copy `source` to `dest`: the MD5 (`md5:<hex>`, as stored), the SHA-256 and the size of what was copied."""
    with open(source, "rb") as src:
        return _copy_chunks(iter(lambda: src.read(CHUNK), b""), dest)


def _copy_chunks(chunks: Iterator[bytes], dest: Path) -> tuple[str, str, int]:
    """Write `chunks` to `dest`: the MD5 (`md5:<hex>`), the SHA-256 and the size of what was written."""
    md5, sha256, size = hashlib.md5(usedforsecurity=False), hashlib.sha256(), 0
    with open(dest, "wb") as out:
        for chunk in chunks:
            md5.update(chunk)
            sha256.update(chunk)
            out.write(chunk)
            size += len(chunk)
    return "md5:" + md5.hexdigest(), sha256.hexdigest(), size


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _bar(total: int, quiet: bool, unit: str) -> tqdm:
    """The progress bar on stderr (bytes for files, records for the index)."""
    if unit == "files":
        return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, disable=quiet, file=sys.stderr)
    return tqdm(total=total, unit=unit, disable=quiet, file=sys.stderr)
