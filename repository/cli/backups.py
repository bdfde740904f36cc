"""Backup and restore, and the environment file of the scaled shape."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from repository.cli.preamble import CommandError, Context, arg, command


@command("backup", arguments=[
    arg("target", type=Path, metavar="DIR", help="the folder to write (must not exist, or be empty)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def backup(args: argparse.Namespace, ctx: Context) -> int:
    """Back up the running instance: the database as of one commit and the files it references (not the index).

    SQLite is copied with its online backup API, PostgreSQL with pg_dump (of the server's major version); the files
    are copied and checked against their stored MD5, with a manifest of MD5 and SHA-256 checksums (repository/
    backup.py says which files and why). The folder appears whole at the end or not at all. Exit code: 0 done, 1
    done but a file was missing or did not match its checksum (listed), 2 nothing written."""
    from repository.backup import BackupError, back_up

    try:
        report = back_up(ctx.db, ctx.settings, args.target, quiet=args.quiet)
    except BackupError as exc:
        raise CommandError(str(exc)) from exc
    counts = report.counts
    print(f"backed up {counts['records']} records, {counts['deposits']} deposits, {counts['users']} users and "
          f"{report.files} files ({report.bytes} bytes) into {report.folder} in {report.seconds:.1f} s")
    if report.skipped:
        print(f"{len(report.skipped)} file(s) deleted during the backup were left out (no longer referenced)")
    for problem in report.problems:
        print(f"problem: {problem}")
    return 1 if report.problems else 0


@command("restore", arguments=[
    arg("source", type=Path, metavar="DIR", help="a folder written by the backup command"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def restore(args: argparse.Namespace, ctx: Context) -> int:
    """Restore a backup into an empty instance (empty database and FILES_ROOT), then rebuild the search index.

    The files are checked against the backup's checksums, and the result as `reindex --check` does. Exit code: 0
    restored and checked, 1 restored with problems (listed), 2 nothing restored (not a backup, not an empty
    instance, a release older than the backup)."""
    from repository.backup import BackupError
    from repository.backup import restore as restoring

    try:
        report = restoring(ctx.settings, args.source, quiet=args.quiet)
    except BackupError as exc:
        raise CommandError(str(exc)) from exc
    counts = report.counts
    print(f"restored {counts['records']} records, {counts['deposits']} deposits, {counts['users']} users and "
          f"{report.files} files ({report.bytes} bytes); indexed {counts['indexed']} records in "
          f"{report.seconds:.1f} s")
    for problem in report.problems:
        print(f"problem: {problem}")
    print("restore check FAILED" if report.problems else
          "restore check passed: every file matches its checksums, the index holds exactly the published records")
    return 1 if report.problems else 0


@command("generate-env", needs="nothing", arguments=[
    arg("--output", type=Path, default=Path(".env"), help="the file to write (default: .env, beside "
        "docker-compose.yml); an existing one is never overwritten"),
])
def generate_env(args: argparse.Namespace, ctx: Context) -> int:
    """Write the secrets docker compose refuses to start without (SECRET_KEY, POSTGRES_PASSWORD,
    OPENSEARCH_PASSWORD), and the token Prometheus scrapes /metrics with (METRICS_TOKEN), into a new .env file,
    readable by its owner only. Needs no dependency: plain python3."""
    import secrets

    from repository.timeutil import isoformat, utcnow

    # OpenSearch wants an upper-case letter, a lower-case letter, a digit and a special character in its password.
    values = {"SECRET_KEY": secrets.token_urlsafe(48), "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
              "OPENSEARCH_PASSWORD": secrets.token_urlsafe(24) + "_Aa1", "METRICS_TOKEN": secrets.token_urlsafe(32),
              "S3_SECRET_ACCESS_KEY": secrets.token_urlsafe(32)}
    lines = [f"# Written by `python3 scripts/generate_env.py` at {isoformat(utcnow())}. Keep it with your",
             "# backups: POSTGRES_PASSWORD and OPENSEARCH_PASSWORD are set in their volumes at first start, and",
             "# SECRET_KEY signs sessions, links and tokens; METRICS_TOKEN is what Prometheus sends to scrape /metrics.",
             "# S3_SECRET_ACCESS_KEY is the file store's (the seaweedfs service's) secret key.", *(f"{k}={v}" for k, v in values.items())]
    try:
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise CommandError(f"{args.output} exists: it is never overwritten (its passwords are in the volumes); "
                           "delete it first to start afresh") from exc
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {args.output}: {', '.join(values)}")
    return 0
