"""Compressed copies (repository/storage/packing.py): built records, index documents, renditions and the deposit
form's metadata are stored as zstd frames, and an index document no longer repeats the built record it carries
(`b"S"` + the document without it; `b"F"` + the whole document where the two differ). Rows are rewritten in
batches (a keyset scan), so a large database is never held in memory; the downgrade writes them back as they were.

The logic is copied here rather than imported, so that later changes of the code cannot change this migration.
Offline (`migrate --sql`) only the column type changes: the rows keep their unpacked values, which the packed
columns read as they are.

Revision ID: 0017
Revises: 0015
Create Date: 2026-11-24
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import orjson
import sqlalchemy as sa
from alembic import context, op

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

revision = "0017"
down_revision = "0015"
branch_labels = None
depends_on = None

BATCH = 2000
MAGIC = b"\x28\xb5\x2f\xfd"
LEVEL = 3
SOURCE = "record"  # the index document's field holding the record (search.mapping.SOURCE_FIELD)
WITHOUT_SOURCE, WHOLE = b"S", b"F"

Convert = Callable[[dict], dict]


def _raw(value: bytes | memoryview | str) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _packed(value: bytes) -> bool:
    return value[:4] == MAGIC


def _pack(value: bytes | memoryview | str) -> bytes:
    data = _raw(value)
    return data if _packed(data) else zstd.compress(data, LEVEL)


def _unpack(value: bytes | memoryview | str) -> bytes:
    data = _raw(value)
    return zstd.decompress(data) if _packed(data) else data


def _rewrite(table: str, keys: tuple[str, ...], columns: tuple[str, ...], convert: Convert,
             read: tuple[str, ...] = ()) -> None:
    """Rewrite `columns` of every row of `table` with `convert(row)` (the row holding keys, columns and `read`),
    BATCH rows at a time in key order."""
    conn = op.get_bind()
    t = sa.table(table, *(sa.column(k) for k in keys + read), *(sa.column(c, sa.LargeBinary) for c in columns))
    key = sa.tuple_(*(t.c[k] for k in keys)) if len(keys) > 1 else t.c[keys[0]]
    update = t.update().where(*(t.c[k] == sa.bindparam(f"k_{k}") for k in keys)) \
        .values({c: sa.bindparam(f"v_{c}", type_=sa.LargeBinary) for c in columns})
    last: tuple | None = None
    while True:
        query = sa.select(t).order_by(*(t.c[k] for k in keys)).limit(BATCH)
        if last is not None:
            query = query.where(key > (sa.tuple_(*(sa.literal(v) for v in last)) if len(keys) > 1 else last[0]))
        rows = [dict(row) for row in conn.execute(query).mappings()]
        if not rows:
            return
        changes = []
        for row in rows:
            new = convert(row)
            if any(new[c] != row[c] for c in columns):
                changes.append({**{f"k_{k}": row[k] for k in keys}, **{f"v_{c}": new[c] for c in columns}})
        if changes:
            conn.execute(update, changes)
        last = tuple(rows[-1][k] for k in keys)


def _strip(row: dict) -> dict:
    """A built_records row packed, its document without the record it carries when that is the row's record."""
    record = _unpack(row["record"])
    document = _raw(row["document"])
    if _packed(document):
        return {**row, "record": _pack(record)}
    kept = WHOLE + document
    if row["engine"].startswith("tantivy"):
        doc = json.loads(document)
        source = doc.pop(SOURCE, None)
        if isinstance(source, str) and base64.b64decode(source) == record:
            kept = WITHOUT_SOURCE + json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    elif row["engine"].startswith("opensearch"):
        doc = orjson.loads(document)
        source = doc.pop(SOURCE, None)
        if source is not None and orjson.dumps(source) == record:
            kept = WITHOUT_SOURCE + orjson.dumps(doc)
    return {**row, "record": _pack(record), "document": _pack(kept)}


def _add_member(document: bytes, member: bytes) -> bytes:
    body = document.rstrip()
    return b"{" + member + b"}" if body == b"{}" else body[:-1] + b"," + member + b"}"


def _whole(row: dict) -> dict:
    """A built_records row as stored before: unpacked, the document whole again."""
    record = _unpack(row["record"])
    document = _unpack(row["document"])
    if document[:1] == WITHOUT_SOURCE:
        if row["engine"].startswith("tantivy"):
            document = _add_member(document[1:], b'"%s":"%s"' % (SOURCE.encode(), base64.b64encode(record)))
        else:
            document = _add_member(document[1:], b'"%s":%s' % (SOURCE.encode(), record))
    elif document[:1] == WHOLE:
        document = document[1:]
    return {**row, "record": record, "document": document}


def _offline_sqlite() -> bool:
    """Offline SQL for SQLite: a column's type changes there by copying its table, which needs the live schema.
    SQLite stores any value in any column, so the SQL leaves the declared type as it was."""
    return context.is_offline_mode() and context.get_context().dialect.name == "sqlite"


def upgrade() -> None:
    if not _offline_sqlite():
        with op.batch_alter_table("deposits", schema=None) as batch_op:
            batch_op.alter_column("metadata", existing_type=sa.JSON(), type_=sa.LargeBinary(),
                                  existing_nullable=False, postgresql_using="convert_to(metadata::text, 'UTF8')")
    if context.is_offline_mode():
        return
    _rewrite("deposits", ("id",), ("metadata",), lambda row: {**row, "metadata": _pack(row["metadata"])})
    _rewrite("renditions", ("record_id", "format"), ("body",), lambda row: {**row, "body": _pack(row["body"])})
    _rewrite("built_records", ("record_id",), ("record", "document"), _strip, read=("engine",))


def downgrade() -> None:
    if not context.is_offline_mode():
        _rewrite("built_records", ("record_id",), ("record", "document"), _whole, read=("engine",))
        _rewrite("renditions", ("record_id", "format"), ("body",), lambda row: {**row, "body": _unpack(row["body"])})
        _rewrite("deposits", ("id",), ("metadata",), lambda row: {**row, "metadata": _unpack(row["metadata"])})
    if not _offline_sqlite():
        with op.batch_alter_table("deposits", schema=None) as batch_op:
            batch_op.alter_column("metadata", existing_type=sa.LargeBinary(), type_=sa.JSON(),
                                  existing_nullable=False, postgresql_using="convert_from(metadata, 'UTF8')::json")
    if not context.is_offline_mode() and op.get_bind().dialect.name == "sqlite":
        op.execute("UPDATE deposits SET metadata = CAST(metadata AS TEXT)")  # JSON text, as stored before
