"""`repository-admin import oai` and `import csv` (docs/operators/migration.md): records from an OAI-PMH
repository or a spreadsheet, with a report of what was imported, skipped and failed, and why."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from repository.cli.imports import source
from repository.cli.preamble import CommandError, Context, arg


def _owner(ctx: Context, email: str) -> int:
    from repository.accounts.tokens import create_user

    with ctx.services.db.write() as conn:
        return create_user(conn, email)


@source("oai", "an OAI-PMH repository, as metadata-only records", [
    arg("url", metavar="OAI_URL", help="the repository's OAI-PMH base URL"),
    arg("--prefix", required=True, choices=["oai_datacite", "datacite", "oai_dc"], help="the metadata format to harvest"),
    arg("--set", dest="set_spec", help="harvest only this set"),
    arg("--from", dest="from_", metavar="DATE",
        help="only records changed since DATE (YYYY-MM-DD); default: since the last complete harvest of this "
             "source, or everything"),
    arg("--owner", required=True, help="e-mail address of the user who will own the records (created if new)"),
    arg("--retries", type=int, default=5, help="tries after the first for each request (default 5)"),
    arg("--backoff", type=float, default=1.0, metavar="SECONDS",
        help="wait before the first retry, doubled for each next one up to a minute (default 1; a 429's or 503's "
             "Retry-After wins)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def import_oai(args: argparse.Namespace, ctx: Context) -> int:
    """Harvest an OAI-PMH repository into metadata-only records linking to the originals, their DOIs kept as the
    records' DOIs (never registered here). Rerun, it imports only what is missing. Exit code: 0 all imported, 1
    some records failed or the harvest stopped early (each listed with its source identifier and the reason)."""
    from tqdm import tqdm

    from repository.imports.harvest import Fetcher
    from repository.imports.oai import Source, import_oai

    if not args.url.startswith(("http://", "https://")):
        raise CommandError("OAI_URL must be an http(s) URL")
    if args.retries < 0 or args.backoff < 0:
        raise CommandError("--retries and --backoff must be 0 or more")
    owner_id = _owner(ctx, args.owner)
    started = time.monotonic()
    with tqdm(unit="rec", disable=args.quiet, file=sys.stderr) as bar:
        report = import_oai(ctx.services.db, ctx.settings, owner_id, Source(args.url, args.prefix, args.set_spec),
                            Fetcher(args.url, retries=args.retries, backoff=args.backoff), args.from_,
                            progress=lambda count: bar.update(count - bar.n))
    for line in report.lines():
        print(line)
    print(f"in {time.monotonic() - started:.1f} s")
    return 1 if report.failed or report.stopped else 0


@source("csv", "a spreadsheet of records, with their files", [
    arg("file", type=Path, metavar="FILE", help="the spreadsheet, as CSV (UTF-8); with --template, where to write one"),
    arg("--template", action="store_true", help="write the template (the columns and an example row) to FILE"),
    arg("--owner", help="e-mail address of the owner of the rows without an owner column"),
    arg("--dry-run", action="store_true", help="check every row and report; write nothing"),
    arg("--publish", action="store_true", help="publish the records (default: leave them as drafts for their owners)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def import_csv(args: argparse.Namespace, ctx: Context) -> int:
    """Import the rows of a spreadsheet as deposits of their owners, published or left as drafts; every row is
    checked before anything is written. Exit code: 0 imported (or a clean dry run), 1 some rows failed while
    importing, 2 rows that do not pass the check (nothing written)."""
    from tqdm import tqdm

    from repository.imports import csv_rows

    if args.template:
        if args.file.exists():
            raise CommandError(f"{args.file} exists: the template is written to a new file only")
        args.file.write_text(csv_rows.template(), encoding="utf-8")
        print(f"wrote the template to {args.file}")
        return 0
    key = f"csv:{args.file.name}"
    try:
        rows, done = csv_rows.check(ctx.services.db, ctx.settings, str(args.file), args.owner, key, args.publish)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"cannot read {args.file}: {exc}") from exc
    bad = [row for row in rows if row.errors]
    print(f"checked {len(rows) + len(done)} rows: {len(rows) - len(bad)} to import, {len(done)} already imported, "
          f"{len(bad)} with problems")
    for row in bad:
        print(f"row {row.number} ({row.ident or 'no id'}): {'; '.join(row.errors)}")
    if bad:
        print("nothing written: correct the rows above and run again")
        return 2
    if args.dry_run:
        print("dry run: nothing written")
        return 0
    with tqdm(total=len(rows), unit="row", disable=args.quiet, file=sys.stderr) as bar:
        report = csv_rows.import_rows(ctx.services.db, ctx.settings, ctx.services.files, rows, key, args.publish,
                                      progress=lambda count: bar.update(count - bar.n))
    report.skipped = [(row.ident, "already imported") for row in done]
    for line in report.lines():
        print(line)
    return 1 if report.failed else 0
