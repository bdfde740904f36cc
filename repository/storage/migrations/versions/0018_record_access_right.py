"""The access right of a published record as a column of `records`, beside `embargo_until`: whether a reader may see
a record's files is then known from the row's columns, without unpacking its metadata (the busiest read, a record
by id, unpacked it for that alone when its stored copy was current).

The upgrade fills the column from each row's metadata (unpacking it: packed without a dictionary, or with one of
`pack_dictionaries`); offline (`migrate --sql`) it only adds the column, and rows left NULL are read from their
metadata, as rows written by a process of the previous release during a rolling upgrade are.

The logic is copied here rather than imported, so that later changes of the code cannot change this migration.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import context, op

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

BATCH = 2000
MAGIC = b"\x28\xb5\x2f\xfd"


def upgrade() -> None:
    op.add_column("records", sa.Column("access_right", sa.String(length=20), nullable=True))
    if not context.is_offline_mode():
        _fill()


def _metadata(value: bytes | memoryview | str, dictionaries: dict[int, zstd.ZstdDict]) -> dict:
    if isinstance(value, str):  # an unpacked value read back as text (SQLite keeps the storage class)
        return json.loads(value)
    data = bytes(value)
    if data[:4] == MAGIC:
        dict_id = zstd.get_frame_info(data).dictionary_id
        data = zstd.decompress(data, dictionaries[dict_id]) if dict_id else zstd.decompress(data)
    return json.loads(data)


def _fill() -> None:
    conn = op.get_bind()
    bodies = conn.execute(sa.text("SELECT body FROM pack_dictionaries")).scalars()
    dictionaries = {d.dict_id: d for d in (zstd.ZstdDict(bytes(body)) for body in bodies)}
    t = sa.table("records", sa.column("id"), sa.column("metadata", sa.LargeBinary), sa.column("access_right"))
    update = t.update().where(t.c.id == sa.bindparam("k")).values(access_right=sa.bindparam("v"))
    last = 0
    while True:
        rows = conn.execute(sa.select(t.c.id, t.c.metadata).where(t.c.id > last).order_by(t.c.id).limit(BATCH)).all()
        if not rows:
            return
        conn.execute(update, [{"k": id_, "v": str(_metadata(value, dictionaries).get("access_right", "open"))[:20]}
                              for id_, value in rows])
        last = rows[-1][0]


def downgrade() -> None:
    # ALTER TABLE in place on both databases (SQLite since 3.35): a batch operation would copy `records` and drop
    # the original, and the drop would delete, by cascade, the stored copies and renditions that refer to it.
    op.execute("ALTER TABLE records DROP COLUMN access_right")
