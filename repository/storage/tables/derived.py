"""Derived copies kept next to the records so that reads which would otherwise rebuild every record (reindex,
OAI-PMH harvests, exports) can stream them. Never a source of truth: each row says what it was derived from, is
rewritten whenever the record is indexed, and is rebuilt from the records when missing or stale."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, ForeignKey, Integer, LargeBinary, String, Table

from repository.storage.packing import Packed
from repository.storage.tables.metadata import metadata

# The record as last given to the search index: the built public record (orjson) and the same document in the
# form its engine loads directly (`engine` names that form and its version, so a change of either is a rebuild),
# both compressed. The document is kept without the record it carries when that is `record` itself (see
# records/stored.py: `b"S"` + the document without it, or `b"F"` + the whole document), so it is not stored twice.
built_records = Table(
    "built_records",
    metadata,
    Column("record_id", Integer, ForeignKey("records.id", ondelete="CASCADE"), primary_key=True),
    Column("revision", Integer, nullable=False),
    Column("record", Packed("built_records.record"), nullable=False),
    Column("engine", String(32), nullable=False),
    Column("document", Packed("built_records.document"), nullable=False),
    Column("updated", DateTime, nullable=False),
    # SHA-256 of `record` (hex), what renditions are keyed by: a harvest checks them without reading the records.
    # NULL in rows stored before migration 0010 (then computed from `record` when needed).
    Column("digest", String(64), nullable=True),
)

# A record rendered in one export format (OAI-PMH metadata, DataCite XML, ...), keyed by a digest of the built
# record it was rendered from: any change of the record gives a new digest, so a stale rendition is never served.
renditions = Table(
    "renditions",
    metadata,
    Column("record_id", Integer, ForeignKey("records.id", ondelete="CASCADE"), primary_key=True),
    Column("format", String(32), primary_key=True),
    Column("digest", String(64), nullable=False),
    Column("body", Packed("renditions.body"), nullable=False),  # compressed
)

# The zstd dictionaries of the packed columns (storage.dictionaries), each trained on the values of one `kind`
# (the column it names, e.g. "built_records.record"). `id` is zstd's own dictionary id, a hash of the dictionary
# that each value packed with it carries in its frame header. Never deleted: a value names the one it needs.
pack_dictionaries = Table(
    "pack_dictionaries",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(64), nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("samples", Integer, nullable=False),  # how many values it was trained on
    Column("created", DateTime, nullable=False),  # the newest of a kind is the one values are packed with
)
