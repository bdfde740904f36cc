"""The validation rows of a bucket: created pending in the upload's transaction, kept in step with the bucket's
files (a replaced, renamed or deleted table makes the data packages that named it pending again), copied at
publish, and read for reports and for the publish check."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, delete, insert, select, update

from repository.datadesc import DESCRIPTOR_NAME, Kind, detect_kind, pending
from repository.errors import field_error
from repository.files import buckets
from repository.files.buckets import ObjectRow
from repository.files.store import FileStore
from repository.storage.tables.validations import datadesc_validations
from repository.timeutil import utcnow

# A JSON file up to this size is read whole to tell whether it is a software corpus document; a larger one is
# taken on the word of its first bytes and checked again, whole, by the background validation.
SNIFF_BYTES = 256 * 1024


def sniff(store: FileStore, obj: ObjectRow) -> Kind | None:
    """The kind of data-description document `obj` (a bucket object) is, or None; reads at most SNIFF_BYTES."""
    name = PurePosixPath(obj["key"]).name.lower()
    if name == DESCRIPTOR_NAME:
        return "datapackage"
    if not name.endswith(".json"):
        return None  # not read at all: most uploads are not JSON
    with open(store.path(obj["uri"]), "rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if obj["size"] <= SNIFF_BYTES:
        return detect_kind(obj["key"], head)
    return "software_corpus" if b'"research_software"' in head else None


def sibling_key(document_key: str, name: str) -> str:
    """The bucket key of a file a document names (`data.csv`), in the document's folder."""
    folder = PurePosixPath(document_key).parent
    return name if str(folder) == "." else f"{folder}/{name}"


def _key_is(bucket_id: str, key: str) -> ColumnElement[bool]:
    """The condition that picks one row (the table's primary key)."""
    return and_(datadesc_validations.c.bucket_id == bucket_id, datadesc_validations.c.key == key)


def _unclaimed(stale_before: Any) -> ColumnElement[bool]:
    """No validator works on the row: never started, or started so long ago that its validator has stopped."""
    return datadesc_validations.c.started.is_(None) | (datadesc_validations.c.started < stale_before)


def bucket_rows(conn: Connection, bucket_id: str) -> list[dict]:
    query = (select(datadesc_validations).where(datadesc_validations.c.bucket_id == bucket_id)
             .order_by(datadesc_validations.c.key))
    return [dict(row) for row in conn.execute(query).mappings()]


def _set_pending(conn: Connection, bucket_id: str, key: str, **values: Any) -> None:
    """Make a row pending again; a validation already running for it will store nothing."""
    conn.execute(
        update(datadesc_validations)
        .where(_key_is(bucket_id, key))
        .values(status="pending", started=None, generation=datadesc_validations.c.generation + 1, updated=utcnow(),
                **values)
    )


def _put_pending(conn: Connection, bucket_id: str, obj: ObjectRow, kind: Kind, exists: bool) -> None:
    if exists:
        _set_pending(conn, bucket_id, obj["key"], file_id=obj["file_id"], kind=kind, report=None, deps=None)
        return
    now = utcnow()
    conn.execute(
        insert(datadesc_validations).values(
            bucket_id=bucket_id, key=obj["key"], file_id=obj["file_id"], kind=kind, status="pending",
            generation=0, created=now, updated=now,
        )
    )  # fmt: skip


def is_stale(row: dict, objs: dict[str, ObjectRow]) -> bool:
    """Whether a validated data package's report no longer matches the bucket (a path that does not keep the
    rows in step, such as a rename, changed a file it names)."""
    return row["status"] != "pending" and row["kind"] == "datapackage" and _stale(row["deps"], objs)


def _stale(deps: dict[str, str | None] | None, objs: dict[str, ObjectRow]) -> bool:
    """Whether any file a data package looked up has changed since (replaced, added, removed or renamed)."""
    return any((objs[key]["file_id"] if key in objs else None) != file_id for key, file_id in (deps or {}).items())


def sync_bucket(conn: Connection, store: FileStore, bucket_id: str, keys: Iterable[str] = (),
                listed: list[ObjectRow] | None = None) -> bool:
    """Bring the bucket's rows in step with its files; `keys` (just written) are examined as possible documents.
    `listed`: the bucket's objects, when the caller holds the bucket and has listed them already.

    Returns True when some row is pending (the caller starts a validation after its commit)."""
    if listed is None:
        # The bucket's lock, as every bucket write takes it: two requests syncing one bucket at once (a report GET
        # and the runner) would otherwise both insert the same row on PostgreSQL.
        buckets.hold_bucket(conn, bucket_id)
        listed = buckets.list_objects(conn, bucket_id)
    objs = {o["key"]: o for o in listed}
    rows = {row["key"]: row for row in bucket_rows(conn, bucket_id)}
    examine = {key for key in keys if key in objs}
    for key, row in rows.items():
        obj = objs.get(key)
        if obj is None:
            conn.execute(delete(datadesc_validations).where(_key_is(bucket_id, key)))
        elif obj["file_id"] != row["file_id"]:
            examine.add(key)  # the document itself was replaced
        elif row["status"] == "pending":
            if row["kind"] == "datapackage":
                _set_pending(conn, bucket_id, key)  # it may have read the old files: start over
        elif row["kind"] == "datapackage" and _stale(row["deps"], objs):
            _set_pending(conn, bucket_id, key)
    for key in sorted(examine):
        kind = sniff(store, objs[key])
        if kind is not None:
            _put_pending(conn, bucket_id, objs[key], kind, exists=key in rows)
        elif key in rows:
            conn.execute(delete(datadesc_validations).where(_key_is(bucket_id, key)))
    return any(row["status"] == "pending" for row in bucket_rows(conn, bucket_id))


def ensure_rows(conn: Connection, store: FileStore, bucket_id: str, listed: list[ObjectRow] | None = None) -> bool:
    """`sync_bucket`, examining every file that has no row yet (a new version's files, files from before this
    feature). `listed` as for `sync_bucket`. Returns True when some row is pending."""
    if listed is None:
        buckets.hold_bucket(conn, bucket_id)
        listed = buckets.list_objects(conn, bucket_id)
    known = {row["key"]: row["file_id"] for row in bucket_rows(conn, bucket_id)}
    unknown = [o["key"] for o in listed if known.get(o["key"]) != o["file_id"]]
    return sync_bucket(conn, store, bucket_id, unknown, listed)


def get_validation_row(conn: Connection, bucket_id: str, obj: ObjectRow) -> dict | None:
    """The validation row of a bucket object, if it is a data-description document (and the row is about these bytes)."""
    row = conn.execute(
        select(datadesc_validations).where(_key_is(bucket_id, obj["key"]))
    ).mappings().first()
    return dict(row) if row is not None and row["file_id"] == obj["file_id"] else None


def report_body(row: dict) -> dict[str, Any]:
    """The report as answered: `{kind, status, errors, summary}` (pending: no errors yet) and the file."""
    body = row["report"] if row["status"] != "pending" and row["report"] else pending(row["kind"])
    return {**body, "status": row["status"], "file_id": row["file_id"], "filename": row["key"]}


def publish_errors(conn: Connection, store: FileStore, bucket_id: str,
                   listed: list[ObjectRow]) -> tuple[list[dict], bool]:
    """Entries for the publish 400, one per document that is invalid or not validated yet; and whether some
    row is pending (then a validation must start after the commit). `listed`: the held bucket's objects."""
    waiting = ensure_rows(conn, store, bucket_id, listed)
    errors = []
    for row in bucket_rows(conn, bucket_id):
        if row["status"] == "invalid":
            count = len((row["report"] or {}).get("errors", []))
            message = f"The data-description document {row['key']!r} is invalid ({count} error(s)): see its validation report."
            errors.append(field_error("files", message))
        elif row["status"] == "pending":
            message = f"The data-description document {row['key']!r} is still being validated: retry in a moment."
            errors.append(field_error("files", message))
    return errors, waiting


def drop_reports(conn: Connection, bucket_id: str) -> None:
    """Remove every report of a bucket."""
    conn.execute(delete(datadesc_validations).where(datadesc_validations.c.bucket_id == bucket_id))


def copy_reports(conn: Connection, bucket_id: str, target: str) -> bool:
    """Copy the bucket's reports to a snapshot of it (same keys and files); True if some is pending."""
    rows = bucket_rows(conn, bucket_id)
    now = utcnow()
    for row in rows:
        conn.execute(
            insert(datadesc_validations).values(
                {**row, "bucket_id": target, "started": None, "generation": 0, "created": now, "updated": now}
            )
        )
    return any(row["status"] == "pending" for row in rows)


def claimable(conn: Connection, stale_before: Any, limit: int) -> list[dict]:
    """Pending rows nobody works on (or whose validator has stopped answering), oldest change first."""
    query = (
        select(datadesc_validations.c.bucket_id, datadesc_validations.c.key, datadesc_validations.c.generation)
        .where(datadesc_validations.c.status == "pending", _unclaimed(stale_before))
        .order_by(datadesc_validations.c.updated)
        .limit(limit)
    )
    return [dict(row) for row in conn.execute(query).mappings()]


def claim(conn: Connection, row: dict, stale_before: Any) -> bool:
    """Take a pending row for validation; False if it changed or another validator has it."""
    result = conn.execute(
        update(datadesc_validations)
        .where(
            _key_is(row["bucket_id"], row["key"]), datadesc_validations.c.generation == row["generation"],
            datadesc_validations.c.status == "pending", _unclaimed(stale_before),
        )
        .values(started=utcnow())
    )  # fmt: skip
    return result.rowcount == 1


def store_result(conn: Connection, row: dict, report: dict | None, deps: dict[str, str | None]) -> bool:
    """Record a finished validation (`report` None: the file is not a document after all, drop the row); False
    when the row changed meanwhile (its result would be stale)."""
    where = (_key_is(row["bucket_id"], row["key"]), datadesc_validations.c.generation == row["generation"])
    if report is None:
        return conn.execute(delete(datadesc_validations).where(*where)).rowcount == 1
    values = {"status": report["status"], "report": report, "deps": deps, "started": None, "updated": utcnow()}
    return conn.execute(update(datadesc_validations).where(*where).values(**values)).rowcount == 1
