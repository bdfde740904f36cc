"""Records as last given to the search index (table `built_records`): each row holds the built public record and the
same document in the form its engine loads directly, written before every index write (a crash in between leaves a
copy newer than the index, which the outbox retry overwrites). A reindex streams these documents instead of building
every record again, and rebuilds (and stores) only the rows that are missing or stale.

Both are stored compressed (storage.packing), and the document without the record it carries when that is the
stored record itself (nearly always: see `stored_document`): the record is then stored once, not twice."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    Dialect,
    LargeBinary,
    Select,
    and_,
    bindparam,
    case,
    delete,
    null,
    select,
    type_coerce,
    update,
)

from repository.config import Settings
from repository.metadata import MetadataLookups
from repository.records import build, renditions
from repository.records.access import row_files_open
from repository.records.build import build_records, get_record_rows
from repository.records.lookups import DatabaseLookups
from repository.records.render_context import render_context
from repository.search.backend import IndexBuilder
from repository.search.documents import to_index_document
from repository.search.mapping import SOURCE_FIELD
from repository.storage import Database, packing
from repository.storage.tables.derived import built_records
from repository.storage.tables.records import records
from repository.storage.upsert import upsert
from serializers.context import RenderContext

BATCH = 5000
Entry = tuple[int, int, bytes]  # recid, revision, engine-ready document


def form(settings: Settings, search: IndexBuilder, engine: str | None = None) -> str:
    """The `engine` value of fresh rows: the engine's form and version, and the base URL the record's links use."""
    return _form(engine or search.engine, settings.BASE_URL)


@functools.lru_cache(maxsize=8)
def _form(engine: str, base_url: str) -> str:
    return f"{engine}-{hashlib.sha256(base_url.encode()).hexdigest()[:6]}"


def upgradable(settings: Settings, search: IndexBuilder) -> dict[str, Callable[[bytes], bytes]]:
    """`engine` values of older rows whose documents the engine upgrades to the current form alone (its `upgrades`):
    their records are as good as the fresh rows' (only the engine document changed form), and a reindex upgrades
    and stores their documents instead of building the records again."""
    return {form(settings, search, older): upgrade for older, upgrade in search.upgrades.items()}


def readable_forms(settings: Settings, search: IndexBuilder) -> tuple[str, ...]:
    """The `engine` values whose stored records are current (asked at every record read: kept)."""
    return _readable(search.engine, tuple(search.upgrades), settings.BASE_URL)


@functools.lru_cache(maxsize=8)
def _readable(engine: str, older: tuple[str, ...], base_url: str) -> tuple[str, ...]:
    return tuple(_form(name, base_url) for name in (engine, *older))


@dataclass
class Derived:
    """What indexing records writes besides the index, all from one build: the built records (and their bytes),
    their index documents, and their renditions in the OAI_PRERENDER formats."""

    rows: list[dict]
    built: list[dict]
    data: list[bytes]
    docs: list[dict]
    renditions: list[dict]


def derive(conn: Connection, settings: Settings, lookups: MetadataLookups, ctx: RenderContext,
           rows: list[dict]) -> Derived:
    """Build records `rows` (live records rows) as the index gets them, with their documents and renditions."""
    built = build_records(conn, settings, lookups, rows)
    data = [orjson.dumps(record) for record in built]
    ready = renditions.rendered(ctx, renditions.oai_renderers(settings.oai_prerender), built, data)
    return Derived(rows, built, data, [to_index_document(record) for record in built], ready)


# How built_records.document begins: the engine document without its SOURCE_FIELD, which is the stored record
# (`search.with_source` puts it back), or the whole engine document.
WITHOUT_SOURCE, WHOLE = b"S", b"F"


def stored_document(search: IndexBuilder, record: dict, data: bytes, doc: dict) -> bytes:
    """What built_records.document keeps of index document `doc` of built record `record` (`data`: its orjson
    bytes): without the record it carries when that is `record` itself. It is not when the index gets the record
    without something the public record shows (an embargoed record whose files are open but empty: search hits
    show no `files` key)."""
    source = doc.get(SOURCE_FIELD)
    if source is record or orjson.dumps(source) == data:
        return WITHOUT_SOURCE + search.engine_document({k: v for k, v in doc.items() if k != SOURCE_FIELD})
    return WHOLE + search.engine_document(doc)


def upgrade_document(document: bytes, upgrade: Callable[[bytes], bytes]) -> bytes:
    """Stored built_records `document` of an older engine form, in the current one (`upgrade` of the engine)."""
    if document[:1] in (WITHOUT_SOURCE, WHOLE):
        return document[:1] + upgrade(document[1:])
    return upgrade(document)


def engine_document(search: IndexBuilder, document: bytes, record: bytes) -> bytes:
    """The engine-ready document of stored built_records `document` and `record`."""
    if document[:1] == WITHOUT_SOURCE:
        return search.with_source(document[1:], record)
    if document[:1] == WHOLE:
        return document[1:]
    return document  # stored before migration 0016 rewrote it


def save(conn: Connection, settings: Settings, search: IndexBuilder, derived: Derived) -> list[Entry]:
    """Upsert the built_records rows and renditions of `derived` (a stored row of a newer revision is kept); to be
    written before the index. Returns the engine-ready documents."""
    engine = form(settings, search)
    values = [{"record_id": row["id"], "revision": row["revision"], "updated": row["updated"], "record": data,
               "digest": renditions.source_digest(data).hex(), "engine": engine,
               "document": stored_document(search, record, data, doc)}
              for row, record, data, doc in zip(derived.rows, derived.built, derived.data, derived.docs,
                                                strict=True)]  # fmt: skip
    upsert(conn, built_records, values, ("record_id",), replace_if=lambda old, new: old.revision <= new.revision)
    renditions.store(conn, derived.renditions)
    return [(v["record_id"], v["revision"], engine_document(search, v["document"], v["record"])) for v in values]


@functools.lru_cache(maxsize=4)
def _row_with_copy_statement(forms: int) -> Select:
    """The records row of `recid` with its counts (`build.get_record_row_with_counts`) and its stored copy when that
    is of the row's revision and last change and in one of the `forms` engine forms `engine_0`... (`readable_forms`),
    still packed (NULL otherwise). Built once per number of forms: a bound parameter each rather than an expanding
    list, which SQLAlchemy would rewrite into the SQL at every execution."""
    copy = built_records.c
    return (build.row_with_counts_statement(packed_metadata=True)
            .add_columns(type_coerce(copy.record, LargeBinary).label(_COPY))  # unpacked only when used
            .outerjoin(built_records, and_(copy.record_id == records.c.id, copy.revision == records.c.revision,
                                           copy.updated == records.c.updated,
                                           copy.engine.in_([bindparam(f"engine_{n}") for n in range(forms)]))))


_COPY = "stored_copy"


def row_with_copy(db: Database, settings: Settings, search: IndexBuilder,
                  recid: int) -> tuple[dict, bytes | None] | None:
    """The records row of `recid` with its counts, as `build.get_record_row_with_counts` gives it but with its
    metadata still packed (`build.unpack_metadata`), and its stored copy (packed) when that is current (see
    `stored_record`), in one prepared query; None for no such row."""
    forms = readable_forms(settings, search)
    parameters = {"recid": recid, **{f"engine_{n}": form for n, form in enumerate(forms)}}
    found = db.prepared(_row_with_copy_statement(len(forms))).first(parameters)
    if found is None:
        return None
    row = build.row_with_counts(found)
    return row, row.pop(_COPY)


def stored_record(dialect: Dialect, row: dict, packed: bytes, with_files: bool) -> dict | None:
    """The record of records row `row` (read with its counts) from its stored copy `packed` (of `row_with_copy`, from the database of `dialect`),
    with current counts, when that copy is what building it now would give: of the row's revision and last change,
    in this engine form and base URL (`row_with_copy` checked those), and showing files exactly when this reader may
    see them (an embargo may have ended since). None otherwise: the caller builds it."""
    record = orjson.loads(packing.unpack(packed, dialect))
    if ("files" in record) != (with_files or row_files_open(row)):
        return None
    record["stats"] = build.current_stats(None, row)
    return record


def remove(conn: Connection, recids: list[int]) -> None:
    """Drop the rows of records that left the index."""
    if recids:
        conn.execute(delete(built_records).where(built_records.c.record_id.in_(recids)))


def documents(db: Database, settings: Settings, search: IndexBuilder, batch: int = BATCH,
              rebuild_all: bool = False) -> Iterator[list[Entry]]:
    """Engine-ready documents of every published record, a batch at a time (a keyset scan over the id): the stored
    ones that are fresh (revision, updated and form equal to the record row's), the others built again and stored
    (all of them with `rebuild_all`); those of an upgradable older form are upgraded and stored."""
    current, older = form(settings, search), upgradable(settings, search)
    fresh = and_(built_records.c.revision == records.c.revision, built_records.c.updated == records.c.updated,
                 built_records.c.engine.in_([current, *older]))
    document = null() if rebuild_all else case((fresh, built_records.c.document), else_=null())
    record = null() if rebuild_all else case((fresh, built_records.c.record), else_=null())
    last = 0
    while True:
        with db.scan() as conn:
            rows = conn.execute(
                select(records.c.id, records.c.revision, built_records.c.engine, document.label("document"),
                       record.label("record"))
                .select_from(records.outerjoin(built_records, built_records.c.record_id == records.c.id))
                .where(records.c.id > last, records.c.deleted.is_(None), records.c.review.is_(None))
                .order_by(records.c.id)
                .limit(batch)
            ).all()
        if not rows:
            return
        if older and any(row.document is not None and row.engine != current for row in rows):
            rows = _upgrade(db, current, older, rows)
        stale = [row.id for row in rows if row.document is None]
        rebuilt = {entry[0]: entry for entry in _rebuild(db, settings, search, stale)} if stale else {}
        yield [(row.id, row.revision, engine_document(search, row.document, row.record))
               if row.document is not None else rebuilt[row.id]
               for row in rows if row.document is not None or row.id in rebuilt]
        last = rows[-1].id


def _upgrade(db: Database, current: str, older: dict[str, Callable[[bytes], bytes]],
             rows: Sequence[Any]) -> list[Any]:
    """`rows` with the documents of older forms upgraded, and those stored in the current form (a row rewritten
    meanwhile, by an indexing of a newer revision, is left as that wrote it)."""
    out, changed = [], []
    for row in rows:
        if row.document is not None and row.engine != current:
            upgraded = upgrade_document(row.document, older[row.engine])
            changed.append({"b_id": row.id, "b_revision": row.revision, "b_old": row.engine, "b_document": upgraded})
            row = SimpleNamespace(**{**row._asdict(), "document": upgraded, "engine": current})
        out.append(row)
    with db.write() as conn:
        conn.execute(update(built_records).where(built_records.c.record_id == bindparam("b_id"),
                                                 built_records.c.revision == bindparam("b_revision"),
                                                 built_records.c.engine == bindparam("b_old"))
                     .values(document=bindparam("b_document"), engine=current), changed)
    return out


def _rebuild(db: Database, settings: Settings, search: IndexBuilder, recids: list[int]) -> list[Entry]:
    """Build records `recids` as the indexer does and store their rows; records deleted meanwhile are left out."""
    with db.read() as conn:
        rows = [row for row in get_record_rows(conn, recids) if row["deleted"] is None and row["review"] is None]
        derived = derive(conn, settings, DatabaseLookups(conn), render_context(settings, db), rows)
    with db.write() as conn:
        return save(conn, settings, search, derived)
