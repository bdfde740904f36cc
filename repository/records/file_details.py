"""What some formats say of a record's files beyond its JSON (`Serializer.file_details`: RO-Crate, Croissant): each
file's SHA-256 where it was kept at upload, and the columns of a CSV file that a tabular descriptor
(`datapackage.json` of its folder, repository/datadesc) describes, as `fields: [{"name", "type"}]` in the
descriptor's order. Only the files already in the record are detailed: those its reader may read."""

from __future__ import annotations

import logging
from typing import Any

from repository.datadesc.checks import previews
from repository.files import buckets
from repository.files.store import FileStore
from repository.storage import Database

log = logging.getLogger(__name__)


def with_file_details(db: Database, store: FileStore, record: dict[str, Any]) -> dict[str, Any]:
    """A copy of `record` whose file entries carry `sha256` and, for described CSV files, `fields`; the record
    itself (kept in the record cache) is left as it is."""
    files = record.get("files") or []
    if not files:
        return record
    with db.read() as conn:
        objs = buckets.list_objects(conn, files[0]["bucket"])
    by_key = {obj["key"]: obj for obj in objs}
    detailed = []
    for item in files:
        entry = dict(item)
        obj = by_key.get(item["key"])
        if obj is not None:
            if obj.get("sha256"):
                entry["sha256"] = obj["sha256"]
            if previews.is_table(obj):
                fields = _fields(store, objs, obj)
                if fields:
                    entry["fields"] = fields
        detailed.append(entry)
    return {**record, "files": detailed}


def _fields(store: FileStore, objs: list[buckets.ObjectRow], csv: buckets.ObjectRow) -> list[dict[str, str]]:
    try:
        types = previews.column_types(store, objs, csv)
    except OSError as exc:  # a descriptor missing on disk: the format leaves the table undescribed, not a 500
        log.error("descriptor of %s in bucket %s unreadable: %s", csv["key"], csv["bucket_id"], exc)
        return []
    return [{"name": name, "type": kind} for name, kind in types.items()]
