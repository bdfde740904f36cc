"""Compressed copies (repository/storage/packing.py): built records, index documents, renditions and the metadata
of deposits and records are stored as zstd frames; a published deposit not being edited keeps NULL for its metadata,
which is its record's (storage.tables.deposits.deposit_select); and an index document no longer repeats the built record it
carries (`b"S"` + the document without it; `b"F"` + the whole document where the two differ). The records' type
and subtype, which OAI-PMH's type sets select on in SQL, get columns of their own. Rows are rewritten in batches
(a keyset scan), so a large database is never held in memory; the downgrade writes them back as they were.

records.metadata changes type through a new column (added, filled, the old one dropped, the new one renamed):
on SQLite a change of type copies the table, and dropping `records` there would delete the rows that refer to it.

The files do not shrink by themselves: the space freed is reused by later writes; to give it back, run `VACUUM`
(SQLite) or `VACUUM FULL` (PostgreSQL; or pg_repack without the exclusive lock) after upgrading.

The logic is copied here rather than imported, so that later changes of the code cannot change this migration.
Offline (`migrate --sql`) only the column type changes: the rows keep their unpacked values, which the packed
columns read as they are.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-24
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence

import orjson
import sqlalchemy as sa
from alembic import context, op

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

revision = "0016"
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


SUBTYPE_FIELD = {"publication": "publication_type", "image": "image_type"}  # vocabularies.resource_types


def _type_columns(metadata: dict) -> dict:
    upload_type = metadata.get("upload_type") or None
    field = SUBTYPE_FIELD.get(upload_type) if isinstance(upload_type, str) else None
    return {"upload_type": upload_type, "subtype": (metadata.get(field) or None) if field else None}


def _empty_bytes() -> sa.TextClause:
    return sa.text("x''") if op.get_bind().dialect.name == "sqlite" else sa.text("'\\x'::bytea")


def _swap_records_metadata(new_type: sa.types.TypeEngine, convert: Callable[[bytes], object],
                           with_types: bool) -> None:
    """records.metadata as `new_type`, each value `convert(old value)` (and the type columns set if `with_types`),
    through a column added beside it."""
    default = _empty_bytes() if isinstance(new_type, sa.LargeBinary) else sa.text("'{}'")
    op.add_column("records", sa.Column("metadata_new", new_type, nullable=False, server_default=default))
    conn = op.get_bind()
    # Untyped: PostgreSQL's driver gives a json value parsed, a bytea one as bytes.
    t = sa.table("records", sa.column("id"), sa.column("metadata"), sa.column("metadata_new"),
                 sa.column("upload_type"), sa.column("subtype"))
    values = {"metadata_new": sa.bindparam("v_new", type_=new_type)}
    if with_types:
        values |= {"upload_type": sa.bindparam("v_upload_type"), "subtype": sa.bindparam("v_subtype")}
    update = t.update().where(t.c.id == sa.bindparam("k_id")).values(values)
    last = 0
    while True:
        rows = conn.execute(sa.select(t.c.id, t.c.metadata).where(t.c.id > last).order_by(t.c.id).limit(BATCH)).all()
        if not rows:
            break
        changes = []
        for recid, value in rows:
            data = orjson.dumps(value) if isinstance(value, dict | list) else _unpack(value)
            change = {"k_id": recid, "v_new": convert(data)}
            if with_types:
                change |= {f"v_{k}": v for k, v in _type_columns(orjson.loads(data)).items()}
            changes.append(change)
        conn.execute(update, changes)
        last = rows[-1][0]
    op.execute("ALTER TABLE records DROP COLUMN metadata")
    op.execute("ALTER TABLE records RENAME COLUMN metadata_new TO metadata")
    if conn.dialect.name != "sqlite":  # SQLite cannot drop a default without copying the table; it is never used
        op.alter_column("records", "metadata", server_default=None)


def _published_pairs(conn: sa.Connection, last: int) -> Sequence[sa.Row]:
    """(deposit id, its metadata, its record's metadata) of published deposits not being edited, after `last`."""
    return conn.execute(sa.text(
        "SELECT d.id, d.metadata, r.metadata FROM deposits d JOIN records r ON r.id = d.id "
        "WHERE d.id > :last AND d.status = 'published' AND NOT d.editing ORDER BY d.id LIMIT :n"
    ), {"last": last, "n": BATCH}).all()


def _same(own: bytes | memoryview | str | None, record: bytes | memoryview | str) -> bool:
    return own is not None and orjson.dumps(orjson.loads(_unpack(own))) == orjson.dumps(orjson.loads(_unpack(record)))


def _share_published_metadata() -> None:
    """A published deposit not being edited keeps NULL for metadata equal to its record's (read from there)."""
    conn = op.get_bind()
    last = 0
    while rows := _published_pairs(conn, last):
        same = [{"k": row[0]} for row in rows if _same(row[1], row[2])]
        if same:
            conn.execute(sa.text("UPDATE deposits SET metadata = NULL WHERE id = :k"), same)
        last = rows[-1][0]


def _own_published_metadata() -> None:
    """Every deposit holds its metadata again (its record's where NULL), packed as the records' is."""
    conn = op.get_bind()
    t = sa.table("deposits", sa.column("id"), sa.column("metadata", sa.LargeBinary))
    last = 0
    while rows := _published_pairs(conn, last):
        shared = [{"k": row[0], "v": _pack(row[2])} for row in rows if row[1] is None]
        if shared:
            conn.execute(t.update().where(t.c.id == sa.bindparam("k")).values(
                metadata=sa.bindparam("v", type_=sa.LargeBinary)), shared)
        last = rows[-1][0]


def _offline_records() -> None:
    """The type columns filled in SQL, and on PostgreSQL the metadata's type changed in place (its values stay
    unpacked: they are read as they are)."""
    sqlite = context.get_context().dialect.name == "sqlite"

    def field(name: str) -> str:
        return f"json_extract(metadata, '$.{name}')" if sqlite else f"(metadata->>'{name}')"

    subtype = " ".join(f"WHEN '{t}' THEN {field(f)}" for t, f in SUBTYPE_FIELD.items())
    op.execute(f"UPDATE records SET upload_type = NULLIF({field('upload_type')}, '')")
    op.execute(f"UPDATE records SET subtype = NULLIF(CASE upload_type {subtype} END, '')")
    if not sqlite:
        op.alter_column("records", "metadata", existing_type=sa.JSON(), type_=sa.LargeBinary(),
                        existing_nullable=False, postgresql_using="convert_to(metadata::text, 'UTF8')")


def upgrade() -> None:
    if not _offline_sqlite():
        with op.batch_alter_table("deposits", schema=None) as batch_op:
            batch_op.alter_column("metadata", existing_type=sa.JSON(), type_=sa.LargeBinary(),
                                  existing_nullable=False, nullable=True,
                                  postgresql_using="convert_to(metadata::text, 'UTF8')")
    op.add_column("records", sa.Column("upload_type", sa.String(length=100), nullable=True))
    op.add_column("records", sa.Column("subtype", sa.String(length=100), nullable=True))
    if context.is_offline_mode():
        _offline_records()
        return
    _swap_records_metadata(sa.LargeBinary(), _pack, with_types=True)
    _rewrite("deposits", ("id",), ("metadata",), lambda row: {**row, "metadata": _pack(row["metadata"])})
    _share_published_metadata()
    _rewrite("renditions", ("record_id", "format"), ("body",), lambda row: {**row, "body": _pack(row["body"])})
    _rewrite("built_records", ("record_id",), ("record", "document"), _strip, read=("engine",))


def downgrade() -> None:
    if not context.is_offline_mode():
        _own_published_metadata()
        _swap_records_metadata(sa.JSON(), orjson.loads, with_types=False)  # written by the JSON type, as before
        op.execute("ALTER TABLE records DROP COLUMN subtype")
        op.execute("ALTER TABLE records DROP COLUMN upload_type")
        _rewrite("built_records", ("record_id",), ("record", "document"), _whole, read=("engine",))
        _rewrite("renditions", ("record_id", "format"), ("body",), lambda row: {**row, "body": _unpack(row["body"])})
        _rewrite("deposits", ("id",), ("metadata",), lambda row: {**row, "metadata": _unpack(row["metadata"])})
    if not _offline_sqlite():
        with op.batch_alter_table("deposits", schema=None) as batch_op:
            batch_op.alter_column("metadata", existing_type=sa.LargeBinary(), type_=sa.JSON(),
                                  existing_nullable=True, nullable=False,
                                  postgresql_using="convert_from(metadata, 'UTF8')::json")
    if not context.is_offline_mode() and op.get_bind().dialect.name == "sqlite":
        op.execute("UPDATE deposits SET metadata = CAST(metadata AS TEXT)")  # JSON text, as stored before
