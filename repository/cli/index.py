"""The search index (reindex) and the stored renditions (prerender, packing dictionaries)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from repository.config import Settings

if TYPE_CHECKING:
    from repository.storage import Database

from repository.cli.preamble import CommandError, Context, arg, command


@command("reindex", arguments=[
    arg("--check", action="store_true",
        help="only compare the index with the database, and each published deposit's files with its record's"),
    arg("--quiet", action="store_true", help="no progress bar"),
    arg("--rebuild-all", action="store_true",
        help="build every record again rather than load the stored documents (after a change of vocabularies, or "
             "to refresh view counts)"),
])
def reindex(args: argparse.Namespace, ctx: Context) -> int:
    """Rebuild the search index from the database with no downtime, then verify it; `--check` only verifies.

    Exits 1 when the index does not hold exactly the published records at their current revisions, or (`--check`)
    when a published deposit's files differ from its record's file snapshot."""
    from tqdm import tqdm

    from repository.search.open import open_from_settings
    from repository.worker import jobs
    from repository.worker import reindex as rebuilding

    search = open_from_settings(ctx.settings)
    if not args.check:
        started = time.monotonic()
        with tqdm(total=len(rebuilding.published_revisions(ctx.db)), unit="rec", disable=args.quiet,
                  file=sys.stderr) as bar:

            def advance(count: int) -> None:
                bar.update(count)

            loaded = rebuilding.rebuild(ctx.db, ctx.settings, search, advance, rebuild_all=args.rebuild_all)
        elapsed = time.monotonic() - started
        rate = loaded / elapsed if elapsed else 0.0
        print(f"reindexed {loaded} records in {elapsed:.1f} s ({rate:.0f} records/s)")
    problems = rebuilding.check(ctx.db, search)
    file_problems = rebuilding.check_files(ctx.db) if args.check else []
    for problem in problems + file_problems:
        print(problem)
    if problems:
        print(f"index check FAILED: {len(problems)} difference(s)")
    else:
        print("index check passed: the index holds exactly the published records at their current revisions")
    if file_problems:
        print(f"file check FAILED: {len(file_problems)} published deposit(s) whose files differ from their "
              "record")
    elif args.check:
        print("file check passed: every published deposit holds exactly its record's files")
    # Kept for the jobs page of the administration area (docs/operators/administration.md#jobs).
    summary = (f"{len(problems)} index difference(s)" + (f", {len(file_problems)} file difference(s)" if args.check
                                                         else "") + ("" if args.check else " after reindexing"))
    jobs.record_run(ctx.db, "reindex-check", not (problems or file_problems), summary, problems + file_problems)
    return 1 if problems or file_problems else 0


PRERENDER_BATCH = 500
_prerender: dict[str, Any] = {}  # per rendering process: settings, database, render context


@command("prerender", arguments=[
    arg("--formats", help="metadataPrefixes, comma-separated (default: OAI_PRERENDER)"),
    arg("--jobs", type=int, default=os.cpu_count() or 1, help="rendering processes"),
    arg("--batch", type=int, default=PRERENDER_BATCH, help="records per unit of work"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def prerender(args: argparse.Namespace, ctx: Context) -> int:
    """Render every published record's OAI-PMH metadata that is missing or stale, in several processes.

    The indexer renders the OAI_PRERENDER formats whenever it indexes a record, so this is needed only when every
    stored rendition went stale at once: after a release that changed the renderers, a change of BASE_URL or of
    the license vocabulary, a new format added to OAI_PRERENDER, or migration 0010. Harvests work meanwhile;
    this does the same work ahead of them, on every core. Safe to interrupt and to run again."""
    import multiprocessing

    from tqdm import tqdm

    from repository.worker.reindex import published_revisions
    from serializers import oai_format

    formats = ctx.settings.oai_prerender
    if args.formats is not None:
        formats = [name.strip() for name in args.formats.split(",") if name.strip()]
        unknown = [name for name in formats if oai_format(name) is None]
        if unknown:
            raise CommandError(f"unknown metadataPrefix {', '.join(unknown)}")
    records = rendered = 0
    started = time.monotonic()
    total = len(published_revisions(ctx.db))
    jobs = ((formats, ids) for ids in _published_batches(ctx.db, args.batch))
    context = multiprocessing.get_context("spawn")  # fresh processes: no database handle crosses a fork
    with tqdm(total=total, unit="rec", disable=args.quiet, file=sys.stderr) as bar, \
            context.Pool(max(1, args.jobs), initializer=_prerender_init, initargs=(ctx.settings,)) as pool:
        for done, count in pool.imap_unordered(_prerender_batch, jobs):
            records, rendered = records + done, rendered + count
            bar.update(done)
    elapsed = time.monotonic() - started
    print(f"checked {records} records in {', '.join(formats) or 'no format'}: rendered {rendered} renditions in "
          f"{elapsed:.1f} s ({records / elapsed if elapsed else 0:.0f} records/s)")
    return 0


def _prerender_init(settings: Settings) -> None:
    """A rendering process's database and render context."""
    from repository.records.render_context import render_context
    from repository.storage import open_database

    db = open_database(settings.DATABASE_URL)
    _prerender.update(settings=settings, db=db, ctx=render_context(settings, db))


def _prerender_batch(job: tuple[list[str], list[int]]) -> tuple[int, int]:
    """Render the stale renditions of one batch in each format; (records, renditions rendered)."""
    from repository.records import renditions
    from repository.records.renditions import oai_renderers

    formats, recids = job
    db, settings, context = _prerender["db"], _prerender["settings"], _prerender["ctx"]
    rendered = 0
    for name, render in oai_renderers(formats):
        rendered += renditions.fill(db, settings, context, recids, name, render)
    return len(recids), rendered


def _published_batches(db: Database, size: int) -> Iterator[list[int]]:
    """Ids of the published records, `size` at a time (keyset scan)."""
    from sqlalchemy import select

    from repository.storage.tables.records import records

    last = 0
    while True:
        with db.read() as conn:
            query = select(records.c.id).where(records.c.id > last, records.c.deleted.is_(None),
                                               records.c.review.is_(None))
            ids = list(conn.execute(query.order_by(records.c.id).limit(size)).scalars())
        if not ids:
            return
        yield ids
        last = ids[-1]


@command("pack-dictionaries", arguments=[
    arg("--retrain", action="store_true",
        help="train a new dictionary of every kind, even of those that have one (after the records changed shape)"),
    arg("--min-values", type=int, default=None, help="train a kind only with at least this many values"),
])
def pack_dictionaries(args: argparse.Namespace, ctx: Context) -> int:
    """Train the zstd dictionaries of the packed columns and pack every value again with its kind's newest one.

    The worker and the bulk loader do this by themselves for a kind without a dictionary once it has enough
    values; this does it at once, and `--retrain` replaces dictionaries trained on records that no longer look
    like today's. Safe while the service runs, to interrupt, and to run again. Then `VACUUM` (SQLite) or
    `VACUUM FULL` (PostgreSQL) gives the space back."""
    from repository.storage import dictionaries

    least = dictionaries.MIN_VALUES if args.min_values is None else args.min_values
    for kind in dictionaries.KINDS:
        with ctx.db.read() as conn:
            has = kind in dictionaries.newest(conn)
        trained = dictionaries.train(ctx.db, kind, least) if args.retrain or not has else None
        if trained is None and not has:
            print(f"{kind}: no dictionary (fewer than {least} values, or too few for zstd's trainer)")
            continue
        print(f"{kind}: {'trained dictionary ' + str(trained) if trained else 'dictionary kept'}, "
              f"{dictionaries.repack(ctx.db, kind)} values packed again")
    return 0
