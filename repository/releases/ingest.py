"""Archiving one release: fetch, derive, apply the metadata file, validate, then draft, upload and publish.

Each of the three writes is its own transaction; if a later one fails, the draft made by an earlier one is deleted,
so a failed release leaves no deposit behind, only its readable errors. The same path serves webhooks (in a
background thread) and `scripts/release.py` (in the foreground).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from repository.config import Settings
from repository.deposits import actions
from repository.errors import ApiError, ValidationError, field_error
from repository.files import buckets, quotas
from repository.files.store import FileStore, StoredFile
from repository.metadata import DoiPolicy
from repository.records.build import get_record_row
from repository.records.lookups import DatabaseLookups
from repository.releases import derive, metafile_check, metafiles, store
from repository.releases.github import FetchedRelease, GitHubRelease, PlatformError, ReleaseSource
from repository.storage import Database

log = logging.getLogger("repository.releases")

UNEXPECTED = ("Something went wrong while archiving this release ({name}); the error was logged. "
              "Retry it with the release's links.retry.")  # fmt: skip


class Services(Protocol):
    """What archiving a release uses of the process's services (`repository.services.Services` has it; that
    module builds the ReleaseWorker below, so this one names only what it needs)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def db(self) -> Database: ...
    @property
    def files(self) -> FileStore: ...


class ReleaseFailed(Exception):
    """The release cannot be archived; `errors` say why (`{field?, message, source?, hint?}`)."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(e["message"] for e in errors))
        self.errors = errors


def platform_source(svc: Services, repo: dict, tag: str) -> ReleaseSource:
    """The API client for a repository enabled through a platform."""
    return GitHubRelease(svc.settings.RELEASES_API_URL, repo["full_name"], tag, repo["token"])


def process_release(svc: Services, release_id: int, source: ReleaseSource | None = None) -> dict:
    """Archive the received release `release_id` (if no one else is); returns the release row as it ends."""
    with svc.db.write() as conn:
        claimed = store.claim(conn, release_id)
        release = store.get_release(conn, release_id)
        repo = store.get_repository(conn, release["repository_id"])
    if not claimed:
        return release
    source = source or platform_source(svc, repo, release["tag"])
    recid = None
    try:
        recid = _archive(svc, repo, release_id, source)
    except ReleaseFailed as exc:
        _fail(svc, release_id, exc.errors)
    except Exception as exc:  # the release must never stay "processing" because of a bug or an outage
        log.exception("release %s of %s failed", release["tag"], repo["full_name"])
        _fail(svc, release_id, [field_error(None, UNEXPECTED.format(name=type(exc).__name__))])
    with svc.db.write() as conn:
        if recid is not None:  # "published" once the record is also searchable (applied after the publish's commit)
            store.finish(conn, release_id, "published", recid=recid)
        return store.get_release(conn, release_id)


def _fail(svc: Services, release_id: int, errors: list[dict[str, Any]]) -> None:
    with svc.db.write() as conn:
        store.finish(conn, release_id, "failed", errors)


def release_metadata(svc: Services, fetched: FetchedRelease) -> dict[str, Any]:
    """The defaults overridden key by key by the metadata file, validated for publishing; ReleaseFailed if not."""
    picked = metafiles.pick(fetched.files)
    read = metafiles.read(*picked) if picked else metafiles.MetadataFile(name="", kind="json")
    with svc.db.read() as conn:
        lookups = DatabaseLookups(conn)
        if read.problems:
            raise ReleaseFailed([{**problem, "source": read.name} for problem in read.problems])
        errors, metadata = metafile_check.check_metadata(
            read, derive.defaults(fetched, lookups), lookups, metafile_check.database_license_index(conn),
            DoiPolicy(prefix=svc.settings.doi_prefix),
        )  # fmt: skip
    if errors:
        raise ReleaseFailed([{**error, "source": error.get("source") or read.name} for error in errors])
    return metadata


def _archive(svc: Services, repo: dict, release_id: int, source: ReleaseSource) -> int:
    """Fetch, check, draft, upload and publish; returns the published record's id. ReleaseFailed if not."""
    try:
        fetched = source.fetch()
        metadata = release_metadata(svc, fetched)
        stored = source.write_archive(svc.files, svc.settings.RELEASES_MAX_ARCHIVE_BYTES)
    except PlatformError as exc:
        raise ReleaseFailed([field_error(None, str(exc))]) from None
    except ApiError as exc:  # the archive is over the size limit
        raise ReleaseFailed([field_error(None, exc.message)]) from None
    key = f"{fetched.full_name}-{fetched.tag}.zip"
    owner = repo["owner_id"]
    dep_id: int | None = None
    recorded = False
    try:
        with svc.db.write() as conn:  # 1. the draft: a new concept, or a new version of the last release
            dep_id = _draft(conn, actions.Context(svc.settings, DatabaseLookups(conn)), repo, metadata)
        with svc.db.write() as conn:  # 2. the archive as its only file (a new version drops the old files)
            bucket = actions.get_deposit(conn, dep_id, owner)["bucket_id"]
            for obj in buckets.list_objects(conn, bucket):  # their bytes stay: the previous record holds them
                buckets.delete_object(conn, bucket, obj["key"])
            buckets.put_object(conn, bucket, key, stored, quota=quotas.Quota.of(svc.settings))  # 413: failed
            recorded = True
        with svc.db.write() as conn:  # 3. publish, and the release is published with it
            actions.publish(conn, actions.Context(svc.settings, DatabaseLookups(conn)), dep_id, owner)
            store.finish(conn, release_id, "processing", recid=dep_id)
            store.set_concept(conn, repo["id"], actions.get_deposit(conn, dep_id, owner)["conceptrecid"])
        return dep_id
    except BaseException as exc:
        _discard(svc, dep_id, owner, stored, recorded)
        if isinstance(exc, ValidationError):
            raise ReleaseFailed(exc.errors) from None
        if isinstance(exc, ApiError):
            raise ReleaseFailed([field_error(None, exc.message)]) from None
        raise


def _draft(conn: Any, ctx: actions.Context, repo: dict, metadata: dict[str, Any]) -> int:
    owner = repo["owner_id"]
    versions = actions.version_ids(conn, repo["conceptrecid"]) if repo["conceptrecid"] else []
    if not versions:
        return actions.create(conn, ctx, owner, metadata)
    latest = versions[-1]
    dep_id = actions.newversion(conn, ctx, latest, owner)
    if dep_id is None:
        raise ReleaseFailed([field_error(None, "A new-version draft of this software already exists: publish or "
                                               "delete it, then retry this release.")])  # fmt: skip
    previous = get_record_row(conn, latest) or {}
    if "communities" not in metadata and previous.get("metadata", {}).get("communities"):
        # As the reference: a release stays in the communities of the one before unless its file says otherwise.
        metadata = {**metadata, "communities": previous["metadata"]["communities"]}
    actions.update_metadata(conn, ctx, dep_id, owner, {"metadata": metadata})
    return dep_id


def _discard(svc: Services, dep_id: int | None, owner: int, stored: StoredFile, recorded: bool) -> None:
    """Undo what the steps before a failure did: delete our draft and the archive's bytes."""
    try:
        freed: list[str] = []
        with svc.db.write() as conn:
            if dep_id is not None and actions.get_deposit(conn, dep_id, owner)["status"] == "draft":
                freed = actions.delete_deposit(conn, dep_id, owner)
        with svc.db.write() as conn:
            buckets.release_files(conn, svc.files, [*freed, stored.id])
        if not recorded:
            svc.files.remove(stored.uri)
    except Exception:
        log.exception("could not clean up after a failed release (deposition %s)", dep_id)


class ReleaseWorker:
    """Archives releases in a background thread of the server process (started on first use)."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    def submit(self, release_id: int) -> Future:
        """Archive `release_id` soon; the future's result is the release row."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="releases")
            return self._executor.submit(process_release, self.svc, release_id)

    def shutdown(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
