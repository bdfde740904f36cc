"""Column types that keep bulky values compressed (zstd): the stored copies of built records, index documents and
renditions, and the deposit form's metadata. Values of a few kilobytes of JSON or XML shrink three times; the
database read per record then shrinks with them, which is what keeps reads across a large corpus in memory.

A packed value is one zstd frame, recognised by the frame's magic number; anything else is read as it is (a JSON
or XML value never starts with those bytes), so a column holds old unpacked values and packed ones alike while
migration 0016 rewrites them, and the downgrade only has to unpack.

The values of one column are alike (the same keys, tags, licences and link templates) and each is small, so
packed alone each pays again for what all share. A zstd dictionary trained on the column's own values holds that
shared part once (storage/dictionaries.py trains them and keeps them in `pack_dictionaries`). A value packed with
one names it in its frame header (zstd's dictionary id, which zstd derives from the dictionary's content), so
values packed with any dictionary or with none are read side by side, and a dictionary can be trained again
without rewriting what the older one packed. Dictionaries are never deleted.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from typing import Any

import orjson
import zstandard
from sqlalchemy import Connection, Engine, LargeBinary, bindparam, text
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.types import TypeDecorator

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame
# Level 3 (zstd's default): higher levels took 4-30 times longer for 2-6 % smaller values (measured on records,
# index documents and OAI renditions of the generated corpus).
LEVEL = 3
# How long a process writes with the dictionaries it read before it looks for newer ones (trained by another
# process: the worker, or `repository-admin pack-dictionaries`).
REFRESH_SECONDS = 60.0

# Every dictionary this process has read, by id. The id is a hash of the dictionary's content, so one table
# serves every database the process opens (the tests open many).
_KNOWN: dict[int, zstd.ZstdDict] = {}
# Per database (its engine's dialect, which a column type is handed): the dictionary each kind is written with.
_WRITING: weakref.WeakKeyDictionary[Dialect, _Writing] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
# A compressor per thread and dictionary, used for frame after frame: making one per value (what zstd.compress
# does) cost more than compressing a record (measured: 75 us a record with a fresh one, 10 us with a kept one).
_THREAD = threading.local()


class _Writing:
    """The newest dictionary of each kind in one database, read again every REFRESH_SECONDS."""

    def __init__(self, engine: Engine) -> None:
        self.engine = weakref.ref(engine)
        self.disposed = False
        self.by_kind: dict[str, zstd.ZstdDict] = {}
        self.read_at = -REFRESH_SECONDS

    def get(self, kind: str) -> zstd.ZstdDict | None:
        if time.monotonic() - self.read_at >= REFRESH_SECONDS:
            self.refresh()
        return self.by_kind.get(kind)

    def refresh(self) -> None:
        engine = self.engine()
        self.read_at = time.monotonic()
        if engine is None:
            return
        try:  # on a connection of its own: the caller's may be in the middle of a write
            with engine.connect() as conn:
                newest = conn.execute(text(
                    "SELECT kind, id FROM pack_dictionaries ORDER BY created, id")).all()  # the last one wins
                ids = {kind: int(dict_id) for kind, dict_id in newest}
                _read_dictionaries(conn, [i for i in ids.values() if i not in _KNOWN])
        except SQLAlchemyError:  # a database not migrated yet: values are packed without a dictionary meanwhile
            return
        self.by_kind = {kind: _KNOWN[dict_id] for kind, dict_id in ids.items() if dict_id in _KNOWN}


def attach(engine: Engine) -> None:
    """Let the columns of `engine`'s database pack with its dictionaries (called once per engine)."""
    _WRITING[engine.dialect] = _Writing(engine)


def detach(engine: Engine) -> None:
    """`engine` is disposed of: not opened again to look for a dictionary that a value of another database needs."""
    writing = _WRITING.get(engine.dialect)
    if writing is not None:
        writing.disposed = True


def forget(engine: Engine) -> None:
    """Read the dictionaries of `engine`'s database again at its next write (one was trained in this process)."""
    writing = _WRITING.get(engine.dialect)
    if writing is not None:
        writing.read_at = -REFRESH_SECONDS


def known(dictionary: zstd.ZstdDict) -> None:
    """Remember a dictionary this process has just read or trained."""
    _KNOWN[dictionary.dict_id] = dictionary


def _read_dictionaries(conn: Connection, ids: list[int]) -> None:
    if not ids:
        return
    query = text("SELECT body FROM pack_dictionaries WHERE id IN :ids").bindparams(bindparam("ids", expanding=True))
    for (body,) in conn.execute(query, {"ids": ids}).all():
        known(zstd.ZstdDict(bytes(body)))


def dictionary(dict_id: int, dialect: Dialect | None = None) -> zstd.ZstdDict:
    """The dictionary `dict_id`, read from the database of `dialect` (or of any open one) when this process has
    not seen it."""
    found = _KNOWN.get(dict_id)
    if found is not None:
        return found
    with _LOCK:
        own = _WRITING.get(dialect) if dialect is not None else None
        others = [writing for writing in list(_WRITING.values()) if not writing.disposed]
        for writing in [own] if own is not None else others:
            engine = writing.engine()
            if engine is None:
                continue
            try:
                with engine.connect() as conn:
                    _read_dictionaries(conn, [dict_id])
            except SQLAlchemyError:
                continue
            if dict_id in _KNOWN:
                return _KNOWN[dict_id]
    raise LookupError(f"zstd dictionary {dict_id} is in no open database")


_CUT_SHORT = "A zstd frame header is cut short: the value is not a whole frame."
_DICT_ID_BYTES = (0, 1, 2, 4)  # by the frame header descriptor's last two bits (RFC 8878, 3.1.1.1.1)


def dictionary_id(frame: bytes) -> int:
    """The id of the dictionary frame `frame` was packed with; 0 for none. Read off the frame header (RFC 8878,
    3.1.1.1): `get_frame_info`, which parses the whole header in Python, was 6% of a reindex's reading thread."""
    if len(frame) < 6:  # the magic number, the descriptor and one more byte begin every frame header
        raise zstd.ZstdError(_CUT_SHORT)
    descriptor = frame[4]
    size = _DICT_ID_BYTES[descriptor & 3]
    if not size:
        return 0
    start = 5 if descriptor & 0x20 else 6  # a window descriptor byte precedes it unless Single_Segment_flag
    if len(frame) < start + size:
        raise zstd.ZstdError(_CUT_SHORT)
    return int.from_bytes(frame[start:start + size], "little")


def pack(data: bytes, dictionary: zstd.ZstdDict | None = None) -> bytes:
    """`data` compressed (with `dictionary` when given): one frame, the same bytes `zstd.compress` gives."""
    compressors: dict[int, zstd.ZstdCompressor] | None = getattr(_THREAD, "compressors", None)
    if compressors is None:
        compressors = _THREAD.compressors = {}
    key = dictionary.dict_id if dictionary is not None else 0  # a hash of the dictionary's content
    compressor = compressors.pop(key, None) or zstd.ZstdCompressor(LEVEL, zstd_dict=dictionary)
    packed = compressor.compress(data, zstd.ZstdCompressor.FLUSH_FRAME)
    compressors[key] = compressor  # kept only once it has finished a frame
    return packed


def unpack(value: bytes | memoryview | str, dialect: Dialect | None = None) -> bytes:
    """The bytes `pack` was given, or an unpacked value as it is (`dialect`: of the database it was read from)."""
    if isinstance(value, str):  # an unpacked JSON value read back as text (SQLite keeps the storage class)
        return value.encode()
    data = bytes(value)
    if data[:4] != MAGIC:
        return data
    dict_id = dictionary_id(data)
    if zstandard.frame_content_size(data) < 0:  # no size in the header (not written by `pack`): the one-shot way
        return zstd.decompress(data, dictionary(dict_id, dialect)) if dict_id else zstd.decompress(data)
    return _decompressor(dict_id, dialect).decompress(data)


def _decompressor(dict_id: int, dialect: Dialect | None) -> zstandard.ZstdDecompressor:
    """This thread's decompressor for dictionary `dict_id` (0: none), used for frame after frame. The standard
    library's zstd (and its backport) makes a decompression context for every value; python-zstandard's keeps one:
    half the time of an unpack (a 9 KB record: 21 -> 11 us), which every record read, OAI page and reindex pays."""
    decompressors: dict[int, zstandard.ZstdDecompressor] | None = getattr(_THREAD, "decompressors", None)
    if decompressors is None:
        decompressors = _THREAD.decompressors = {}
    found = decompressors.get(dict_id)
    if found is None:
        found = decompressors[dict_id] = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
            dictionary(dict_id, dialect).dict_content) if dict_id else None)
    return found


def is_packed(value: bytes | memoryview | str) -> bool:
    return not isinstance(value, str) and bytes(value[:4]) == MAGIC


def _writing_dictionary(dialect: Dialect, kind: str | None) -> zstd.ZstdDict | None:
    writing = _WRITING.get(dialect) if kind else None
    return writing.get(kind) if writing is not None and kind else None


class Packed(TypeDecorator[bytes]):
    """Bytes stored compressed, given back as they were; packed with the newest dictionary of `kind`, if any."""

    impl = LargeBinary
    cache_ok = True

    def __init__(self, kind: str | None = None) -> None:
        super().__init__()
        self.kind = kind

    def process_bind_param(self, value: bytes | None, dialect: Dialect) -> bytes | None:
        return None if value is None else pack(value, _writing_dictionary(dialect, self.kind))

    def process_result_value(self, value: Any, dialect: Dialect) -> bytes | None:
        return None if value is None else unpack(value, dialect)


class PackedJSON(TypeDecorator[Any]):
    """A JSON value stored compressed (never queried inside by SQL); packed as `Packed(kind)` is."""

    impl = LargeBinary
    cache_ok = True

    def __init__(self, kind: str | None = None) -> None:
        super().__init__()
        self.kind = kind

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        if value is None:
            return None
        try:
            data = orjson.dumps(value)
        except TypeError:  # what orjson refuses (an integer beyond 64 bits) the json module writes
            data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        return pack(data, _writing_dictionary(dialect, self.kind))

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        data = unpack(value, dialect)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return json.loads(data)
