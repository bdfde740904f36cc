"""Full public exports (docs/operators/export.md): writing one now (loading one is `import dump`, in `imports.py`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

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
