"""zstd dictionaries for the packed columns (repository/storage/dictionaries.py): the table that keeps them.

Upgrading only creates the table: the values stay packed as they are (without a dictionary), which reads as
before; each kind gets its dictionary, and its values are packed again with it, once it has enough values (the
worker's pass, the bulk loader, or `repository-admin pack-dictionaries` at once). The downgrade packs every value
packed with a dictionary again without one, as 0016 packs them, then drops the table; offline (`migrate --sql`)
it can only drop the table, so downgrade online a database whose dictionaries were used.

The logic is copied here rather than imported, so that later changes of the code cannot change this migration.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

BATCH = 2000
MAGIC = b"\x28\xb5\x2f\xfd"
LEVEL = 3
PLACES = (  # table, key columns, packed column
    ("built_records", ("record_id",), "record"),
    ("built_records", ("record_id",), "document"),
    ("renditions", ("record_id", "format"), "body"),
    ("records", ("id",), "metadata"),
    ("deposits", ("id",), "metadata"),
)


def upgrade() -> None:
    op.create_table(
        "pack_dictionaries",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pack_dictionaries")),
    )


def _without_dictionary(value: bytes | memoryview | str | None, dictionaries: dict[int, zstd.ZstdDict]) -> bytes | None:
    """`value` packed without a dictionary if it was packed with one, else None (left as it is)."""
    if value is None or isinstance(value, str):
        return None
    data = bytes(value)
    if data[:4] != MAGIC or not data[4] & 3:  # not packed, or packed without a dictionary
        return None
    dict_id = zstd.get_frame_info(data).dictionary_id
    return zstd.compress(zstd.decompress(data, dictionaries[dict_id]), LEVEL)


def _unpack_all(table: str, keys: tuple[str, ...], column: str, dictionaries: dict[int, zstd.ZstdDict]) -> None:
    conn = op.get_bind()
    t = sa.table(table, *(sa.column(k) for k in keys), sa.column(column, sa.LargeBinary))
    key = sa.tuple_(*(t.c[k] for k in keys)) if len(keys) > 1 else t.c[keys[0]]
    update = t.update().where(*(t.c[k] == sa.bindparam(f"k_{k}") for k in keys)) \
        .values({column: sa.bindparam("v", type_=sa.LargeBinary)})
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
            new = _without_dictionary(row[column], dictionaries)
            if new is not None:
                changes.append({**{f"k_{k}": row[k] for k in keys}, "v": new})
        if changes:
            conn.execute(update, changes)
        last = tuple(rows[-1][k] for k in keys)


def downgrade() -> None:
    if not context.is_offline_mode():
        bodies = op.get_bind().execute(sa.text("SELECT body FROM pack_dictionaries")).scalars()
        dictionaries = {d.dict_id: d for d in (zstd.ZstdDict(bytes(body)) for body in bodies)}
        if dictionaries:
            for table, keys, column in PLACES:
                _unpack_all(table, keys, column, dictionaries)
    op.drop_table("pack_dictionaries")
