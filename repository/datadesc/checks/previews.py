"""Table previews of CSV files: one SQLite database per file instance under INSTANCE_PATH/previews, built on the
first request (one builder at a time per file, across processes), column types from the bucket's descriptor."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path, PurePosixPath
from typing import Any

from repository.datadesc import DESCRIPTOR_NAME, build_preview_db, field_types_for, parse_json
from repository.datadesc.checks.rows import sibling_key
from repository.datadesc.preview import COLUMNS_TABLE, DEFAULT_LIMIT, INT64_MAX
from repository.errors import BadRequest, NotFound, field_error
from repository.files.buckets import ObjectRow
from repository.files.previews import separator_of
from repository.files.store import FileStore

DESCRIPTOR_MAX_BYTES = 8 * 1024 * 1024  # a descriptor is a few KiB; a huge one is not read for a preview


def is_table(obj: ObjectRow) -> bool:
    return obj["key"].lower().endswith(".csv")


def column_types(store: FileStore, objs: list[ObjectRow], csv: ObjectRow) -> dict[str, str]:
    """Column -> type from a datapackage.json of the CSV's folder that describes it ({} when none does)."""
    name = PurePosixPath(csv["key"]).name
    descriptor_key = sibling_key(csv["key"], DESCRIPTOR_NAME)
    for obj in objs:
        if obj["key"] != descriptor_key or obj["size"] > DESCRIPTOR_MAX_BYTES:
            continue
        try:
            with open(store.path(obj["uri"]), "rb") as handle:
                descriptor = parse_json(handle.read())
        except ValueError:
            return {}  # an unreadable descriptor: its validation report says why
        return field_types_for(descriptor, name) if isinstance(descriptor, dict) else {}
    return {}


def _built_types(db_path: Path) -> dict[str, str] | None:
    """The types a preview database was built with, None if there is none (or it is unreadable)."""
    if not db_path.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
            return dict(conn.execute(f"SELECT name, type FROM {COLUMNS_TABLE}").fetchall())
    except sqlite3.Error:
        return None


def _matches(built: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    return all(wanted.get(name, "string") == kind for name, kind in built.items())


def preview_db(instance_path: str, store: FileStore, csv: ObjectRow, types: Mapping[str, str]) -> Path:
    """The preview database of a CSV (or TSV) object, built (or rebuilt for new column types) once, atomically."""
    separator = separator_of(csv["key"])
    if not is_table(csv) and separator == ",":
        raise NotFound("No preview: previews are made of CSV and TSV files only.")
    folder = Path(instance_path) / "previews"
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / f"{csv['file_id']}.db"
    built = _built_types(db_path)
    if built is not None and _matches(built, types):
        return db_path
    # Concurrent first requests queue here and the later ones find the database built; build_preview_db renames a
    # finished file into place, so a reader never sees half of one.
    fd = os.open(folder / f"{csv['file_id']}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        built = _built_types(db_path)
        if built is None or not _matches(built, types):
            build_preview_db(store.path(csv["uri"]), db_path, types, separator)
    finally:
        os.close(fd)  # closing releases the lock
    return db_path


def page_args(args: Mapping[str, str], reserved: set[str]) -> dict[str, Any]:
    """limit, offset, sort and the column filters of a preview request's query string."""
    out: dict[str, Any] = {"sort": args.get("sort") or None}
    for name, default in (("limit", DEFAULT_LIMIT), ("offset", 0)):
        raw = args.get(name)
        try:
            out[name] = int(raw) if raw not in (None, "") else default
        except ValueError:
            raise BadRequest("Invalid page.", [field_error(name, f"Not an integer: {raw!r}.")]) from None
        if abs(out[name]) > INT64_MAX:
            raise BadRequest("Invalid page.", [field_error(name, "Too large: at most 9223372036854775807.")])
    out["filters"] = {name: value for name, value in args.items() if name not in reserved}
    return out
