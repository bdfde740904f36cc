"""Column types that keep bulky values compressed (zstd): the stored copies of built records, index documents and
renditions, and the deposit form's metadata. Values of a few kilobytes of JSON or XML shrink three times; the
database read per record then shrinks with them, which is what keeps reads across a large corpus in memory.

A packed value is one zstd frame, recognised by the frame's magic number; anything else is read as it is (a JSON
or XML value never starts with those bytes), so a column holds old unpacked values and packed ones alike while
migration 0016 rewrites them, and the downgrade only has to unpack.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from sqlalchemy import LargeBinary
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame
# Level 3 (zstd's default): higher levels took 4-30 times longer for 2-6 % smaller values (measured on records,
# index documents and OAI renditions of the generated corpus).
LEVEL = 3


def pack(data: bytes) -> bytes:
    """`data` compressed."""
    return zstd.compress(data, LEVEL)


def unpack(value: bytes | memoryview | str) -> bytes:
    """The bytes `pack` was given, or an unpacked value as it is."""
    if isinstance(value, str):  # an unpacked JSON value read back as text (SQLite keeps the storage class)
        return value.encode()
    data = bytes(value)
    return zstd.decompress(data) if data[:4] == MAGIC else data


def is_packed(value: bytes | memoryview | str) -> bool:
    return not isinstance(value, str) and bytes(value[:4]) == MAGIC


class Packed(TypeDecorator[bytes]):
    """Bytes stored compressed, given back as they were."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: bytes | None, dialect: Dialect) -> bytes | None:
        return None if value is None else pack(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> bytes | None:
        return None if value is None else unpack(value)


class PackedJSON(TypeDecorator[Any]):
    """A JSON value stored compressed (never queried inside by SQL)."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        if value is None:
            return None
        try:
            data = orjson.dumps(value)
        except TypeError:  # what orjson refuses (an integer beyond 64 bits) the json module writes
            data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        return pack(data)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        data = unpack(value)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return json.loads(data)
