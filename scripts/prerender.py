#!/usr/bin/env python
"""Render every published record's OAI-PMH metadata that is missing or stale, in several processes.

    python scripts/prerender.py [--formats oai_dc,oai_registry] [--jobs 2]

The indexer renders the OAI_PRERENDER formats whenever it indexes a record, so this is needed only when every
stored rendition went stale at once: after a release that changed the renderers, a change of BASE_URL or of the
license vocabulary, a new format added to OAI_PRERENDER, or migration 0010 (it also fills in the record digests
that rows stored before it lack). Harvests work meanwhile (they render what they find
stale, once); this does the same work ahead of them, on every core. Safe to interrupt and to run again.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator

BATCH = 500
_worker: dict = {}  # per process: settings, database, render context


def _init(settings) -> None:  # type: ignore[no-untyped-def]
    """A worker's database and render context."""
    from repository.records.render_context import render_context
    from repository.storage import open_database

    db = open_database(settings.DATABASE_URL)
    _worker.update(settings=settings, db=db, ctx=render_context(settings, db))


def _fill(job: tuple[list[str], list[int]]) -> tuple[int, int]:
    """Render the stale renditions of one batch in each format; (records, renditions rendered)."""
    from repository.oai.response import renderers
    from repository.records import renditions

    formats, recids = job
    rendered = 0
    for name, render in renderers(formats):
        rendered += renditions.fill(_worker["db"], _worker["settings"], _worker["ctx"], recids, name, render)
    return len(recids), rendered


def _batches(db, size: int) -> Iterator[list[int]]:  # type: ignore[no-untyped-def]
    """Ids of the published records, `size` at a time (keyset scan)."""
    from sqlalchemy import select

    from repository.storage.tables.deposits import records

    last = 0
    while True:
        with db.read() as conn:
            ids = list(conn.execute(select(records.c.id).where(records.c.id > last, records.c.deleted.is_(None))
                                    .order_by(records.c.id).limit(size)).scalars())
        if not ids:
            return
        yield ids
        last = ids[-1]


def main(argv: list[str] | None = None, settings=None) -> int:  # type: ignore[no-untyped-def]
    from tqdm import tqdm

    from repository.config import Settings, StartupError
    from repository.indexing.reindex import published_revisions
    from repository.storage import open_database
    from repository.storage.engine import close_all
    from serializers.oai import oai_format

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", help="metadataPrefixes, comma-separated (default: OAI_PRERENDER)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="rendering processes")
    parser.add_argument("--batch", type=int, default=BATCH, help="records per unit of work")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        settings = settings or Settings.from_env()
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    formats = settings.oai_prerender
    if args.formats is not None:
        formats = [name.strip() for name in args.formats.split(",") if name.strip()]
        unknown = [name for name in formats if oai_format(name) is None]
        if unknown:
            print(f"error: unknown metadataPrefix {', '.join(unknown)}", file=sys.stderr)
            return 2
    db = open_database(settings.DATABASE_URL)
    records = rendered = 0
    started = time.monotonic()
    try:
        total = len(published_revisions(db))
        jobs = ((formats, ids) for ids in _batches(db, args.batch))
        context = multiprocessing.get_context("spawn")  # fresh processes: no database handle crosses a fork
        with tqdm(total=total, unit="rec", disable=args.quiet, file=sys.stderr) as bar, \
                context.Pool(max(1, args.jobs), initializer=_init, initargs=(settings,)) as pool:
            for done, count in pool.imap_unordered(_fill, jobs):
                records, rendered = records + done, rendered + count
                bar.update(done)
    finally:
        close_all()
    elapsed = time.monotonic() - started
    print(f"checked {records} records in {', '.join(formats) or 'no format'}: rendered {rendered} renditions in "
          f"{elapsed:.1f} s ({records / elapsed if elapsed else 0:.0f} records/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
