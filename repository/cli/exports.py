"""Full public exports (docs/operators/export.md): writing one now, and loading one into an empty instance."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from repository.cli.importing import source
from repository.cli.preamble import CommandError, Context, arg, command


@command("export", arguments=[
    arg("what", choices=["records"], help="what to export: every public record's metadata"),
    arg("out", type=Path, metavar="OUT", nargs="?",
        help="the folder the export's dated folder is written under (default: EXPORTS_ROOT, served at /api/exports/)"),
    arg("--keep", type=int, help="how many exports to keep under OUT (default: EXPORT_KEEP)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def export(args: argparse.Namespace, ctx: Context) -> int:
    """Write a full public export now: every public record as gzipped JSON Lines (the v1 record of the anonymous
    API) and as a gzipped DataCite XML bundle, with a manifest of counts and SHA-256 checksums. The export's folder
    appears whole at the end or not at all; older exports beyond --keep are removed. Exit code: 0 written, 2 not
    (another export is being written, a bad argument)."""
    from tqdm import tqdm

    from repository.exports.writer import ExportError, export_records
    from repository.search.open import open_from_settings

    if args.keep is not None and args.keep < 1:
        raise CommandError("--keep must be at least 1")
    root = str(args.out or ctx.settings.EXPORTS_ROOT)
    started = time.monotonic()
    with tqdm(unit="rec", disable=args.quiet, file=sys.stderr) as bar:
        try:
            manifest = export_records(ctx.db, ctx.settings, open_from_settings(ctx.settings), root, keep=args.keep,
                                      progress=lambda count: bar.update(count - bar.n))
        except ExportError as exc:
            raise CommandError(str(exc)) from exc
    elapsed = time.monotonic() - started
    print(f"exported {manifest['records']} records to {Path(root) / manifest['id']} in {elapsed:.1f} s")
    return 0


@source("dump", summary="a full public export, into an empty instance", needs="services", overrides={"BACKGROUND_WORKER": False}, arguments=[
    arg("file", type=Path, metavar="FILE", help="the export: its folder or its manifest.json"),
    arg("--owner", required=True, help="e-mail address of the user who will own the records (created if new)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def import_dump(args: argparse.Namespace, ctx: Context) -> int:
    """Load a full public export into an empty instance: the same records (ids, versions, concept ids, DOIs and
    metadata; the DOIs are never registered again), searchable at the end. The export's SHA-256 is checked first;
    a wrong one is refused. Rerun after an interruption, it loads only what is missing. Exit code: 0 loaded, 1
    loaded with records that failed (listed with their reasons), 2 nothing loaded."""
    from tqdm import tqdm

    from repository.accounts.tokens import create_user
    from repository.exports.dump import DumpError, load

    services = ctx.services
    with services.db.write() as conn:
        owner_id = create_user(conn, args.owner)
    started = time.monotonic()
    with tqdm(unit="rec", disable=args.quiet, file=sys.stderr) as bar:
        try:
            report = load(services.db, str(args.file), owner_id, progress=lambda count: bar.update(count - bar.n))
        except DumpError as exc:
            raise CommandError(str(exc)) from exc
    while services.indexer.apply_index_rows():  # what the commits' own indexing left (it takes 500 at a time)
        pass
    print(f"loaded {report.loaded} records, {report.skipped} already there, {len(report.failed)} failed, in "
          f"{time.monotonic() - started:.1f} s")
    if report.dropped_communities:
        print(f"{report.dropped_communities} record(s) listed communities, which are not carried over")
    for recid, reason in report.failed:
        print(f"failed: record {recid}: {reason}")
    return 1 if report.failed else 0
