"""Fixity: checking the stored files against their checksums."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from repository.cli.preamble import Context, arg, command


@command("fixity", arguments=[
    arg("--state", type=Path, help="the resume file (default: INSTANCE_PATH/fixity-state.json)"),
    arg("--restart", action="store_true", help="start a new pass, forgetting where the last one stopped"),
    arg("--rate", type=int, help="bytes read per second (default: FIXITY_BYTES_PER_SECOND; 0: no limit)"),
    arg("--max-files", type=int, help="check at most this many files in this run, then stop (resumable)"),
    arg("--json", type=Path, metavar="PATH", help="also write the report as JSON to PATH (`-`: standard output)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def fixity(args: argparse.Namespace, ctx: Context) -> int:
    """Re-hash the stored files and compare them with the database (size, MD5, SHA-256): lists missing or altered files.

    Resumable: a pass stopped (a signal, --max-files) goes on from the last file checked when run again.
    Exit code: 0 every file checked and sound, 1 a file missing or not matching (listed), 3 stopped before the end
    (run again to resume), 2 a usage or set-up error."""
    from tqdm import tqdm

    from repository.files import fixity as checking
    from repository.files.s3store import store_for
    from repository.worker import jobs

    state = str(args.state or Path(ctx.settings.INSTANCE_PATH) / "fixity-state.json")
    rate = ctx.settings.FIXITY_BYTES_PER_SECOND if args.rate is None else args.rate
    previous = None if args.restart else checking.load_state(state)
    total = checking.remaining_bytes(ctx.db, previous.after if previous else "")
    try:
        with tqdm(total=total, unit="B", unit_scale=True, disable=args.quiet, file=sys.stderr) as bar:
            progress = checking.run_pass(ctx.db, store_for(ctx.settings), state, rate, args.restart,
                                         args.max_files, bar.update)
    except KeyboardInterrupt:  # the state file holds the last file checked
        print(f"interrupted: run again to resume from {state}", file=sys.stderr)
        return 3
    report = json.dumps(dataclasses.asdict(progress), indent=2)
    if args.json is not None:
        if str(args.json) == "-":
            print(report)
        else:
            args.json.write_text(report + "\n", encoding="utf-8")
    for problem in progress.problems:
        print(f"problem: {problem['problem']} {problem['uri']} (file {problem['file_id']}, records "
              f"{problem.get('records')}, deposits {problem.get('deposits')}): expected {problem['expected']}, "
              f"found {problem['actual']}", file=sys.stderr)
    state_word = "complete" if progress.complete else f"stopped (resume with the same command; state in {state})"
    print(f"fixity: {progress.checked} files ({progress.bytes} bytes) checked, {len(progress.problems)} problem(s); "
          f"pass {state_word}", file=sys.stderr)
    if progress.complete or progress.problems:  # for the jobs page (docs/operators/administration.md#jobs)
        jobs.record_run(ctx.db, "fixity", not progress.problems, f"{progress.checked} files ({progress.bytes} bytes) "
                        f"checked, {len(progress.problems)} problem(s); pass {state_word.split(' ')[0]}",
                        progress.problems)
    if progress.problems:
        return 1
    return 0 if progress.complete else 3


@command("files", arguments=[
    arg("action", choices=["migrate-to-s3"], help="migrate-to-s3: copy every stored file from FILES_ROOT to "
                                                  "S3_BUCKET and check it there"),
    arg("--state", type=Path, help="the resume file (default: INSTANCE_PATH/migrate-to-s3.json)"),
    arg("--restart", action="store_true", help="start again from the first file, forgetting where the last run "
                                               "stopped"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def files(args: argparse.Namespace, ctx: Context) -> int:
    """Copy the stored files of the local directory (FILES_ROOT) to the S3 bucket of the S3_* settings, under the
    same names, and check each one there against its recorded size, MD5 and SHA-256 (docs/operators/object-storage.md).

    Resumable: run it again after an interruption and it goes on from the last file checked (a file already in the
    bucket is checked, not sent again). Nothing is deleted. Exit code: 0 every file copied and sound, 1 a file
    missing or not matching (listed), 3 interrupted (run again to resume), 2 a usage or set-up error."""
    from tqdm import tqdm

    from repository.config import StartupError
    from repository.files import migration
    from repository.files.s3store import S3Store
    from repository.files.store import FileStore

    if not ctx.settings.S3_BUCKET:
        ctx.parser.error("set S3_BUCKET (and the other S3_* settings) to the bucket to copy the files to")
    target = S3Store.from_settings(ctx.settings)
    try:
        target.check()
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    state = str(args.state or Path(ctx.settings.INSTANCE_PATH) / "migrate-to-s3.json")
    try:
        with tqdm(unit=" files", disable=args.quiet, file=sys.stderr) as bar:
            progress = migration.migrate(ctx.db, FileStore(ctx.settings.FILES_ROOT), target, state, args.restart,
                                         lambda row: bar.update())
    except KeyboardInterrupt:
        print(f"interrupted: run again to resume from {state}", file=sys.stderr)
        return 3
    for problem in progress.problems:
        print(f"problem: {problem['problem']} {problem['uri']} (file {problem['file_id']}): expected "
              f"{problem['expected']}, found {problem['actual']}", file=sys.stderr)
    print(f"files migrate-to-s3: {progress.copied} copied ({progress.bytes} bytes), {progress.skipped} already there "
          f"and checked, {len(progress.problems)} problem(s)", file=sys.stderr)
    return 1 if progress.problems else 0
