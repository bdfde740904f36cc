"""`repository-admin import SOURCE ...`: bringing records in (docs/operators/migration.md). One command, one
sub-command a kind of source, each declared in `SOURCES` with its arguments: `dump` (a full public export of
another instance) and `api` (a service that speaks this API)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from repository.cli.preamble import Arg, Body, CommandError, Context, arg, command


@dataclass(frozen=True)
class ImportSource:
    """One kind of source: its sub-command's summary, arguments and body."""

    summary: str
    arguments: Sequence[Arg]
    run: Body
    short: str  # one line for `import --help`


SOURCES: dict[str, ImportSource] = {}


def source(name: str, short: str, arguments: Sequence[Arg]) -> Callable[[Body], Body]:
    """Register the decorated function as `import NAME` (`short`: its line in the list); its docstring is the
    sub-command's description."""

    def register(run: Body) -> Body:
        SOURCES[name] = ImportSource((run.__doc__ or "").strip(), arguments, run, short)
        return run

    return register


def _sub_commands(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)
    for name, declared in SOURCES.items():
        sub = subs.add_parser(name, help=declared.short, description=declared.summary)
        for flags, options in declared.arguments:
            sub.add_argument(*flags, **options)
        sub.set_defaults(body=declared.run)


@command("import", needs="services", overrides={"BACKGROUND_WORKER": False}, configure=_sub_commands)
def import_(args: argparse.Namespace, ctx: Context) -> int:
    """Import records from another repository: `dump` (a full public export), `api` (a service of this API)."""
    code = args.body(args, ctx)
    while ctx.services.indexer.apply_index_rows():  # what the commits' own indexing left (it takes 500 at a time)
        pass
    return int(code)


@source("dump", "a full public export of another instance, into an empty instance", [
    arg("file", type=Path, metavar="FILE", help="the export: its folder or its manifest.json"),
    arg("--owner", required=True, help="e-mail address of the user who will own the records (created if new)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def dump(args: argparse.Namespace, ctx: Context) -> int:
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
    print(f"loaded {report.loaded} records, {report.skipped} already there, {len(report.failed)} failed, in "
          f"{time.monotonic() - started:.1f} s")
    if report.dropped_communities:
        print(f"{report.dropped_communities} record(s) listed communities, which are not carried over")
    for recid, reason in report.failed:
        print(f"failed: record {recid}: {reason}")
    return 1 if report.failed else 0


def _base_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(f"not a base URL (https://host[/path]): {value!r}")
    return value.rstrip("/")


def _concurrency(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 32:
        raise argparse.ArgumentTypeError(f"a number of parallel requests from 1 to 32, not {value!r}")
    return int(value)


@source("api", "the published records of a service that speaks this API, with their files", [
    arg("base_url", type=_base_url, metavar="BASE_URL",
        help="the source's base URL (https://zenodo.org, or another instance of this service)"),
    arg("--community", help="only the records of this community (its identifier at the source)"),
    arg("--query", help="only the records the source's search finds for this q"),
    arg("--token", help="a personal access token at the source (restricted files its owner may read)"),
    arg("--owner", help="e-mail address of the user who will own the records here (created if new; "
                        "default: import@<the source's host>)"),
    arg("--concurrency", type=_concurrency, default=4,
        help="requests to the source at a time (default 4; keep it low for a service you do not run)"),
    arg("--ca-cert", metavar="FILE", help="a CA bundle to trust for the source (a self-signed certificate)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def api(args: argparse.Namespace, ctx: Context) -> int:
    """Import the published records of a service that speaks this API, with every version, their files
    (checksums verified after the transfer), creators, communities (created when missing) and identifiers; the
    DOIs are kept and never registered again, and each record links its original. A second run changes nothing;
    an interrupted one takes exactly what is missing. Exit code: 0 all imported, 1 some failed (listed with their
    source id and reason), 2 nothing could be read."""
    from tqdm import tqdm

    from repository.accounts.tokens import create_user
    from repository.imports.api import ApiImport
    from repository.imports.source import Source

    services = ctx.services
    owner = args.owner or f"import@{urlsplit(args.base_url).hostname}"
    with services.db.write() as conn:
        owner_id = create_user(conn, owner)
    source = Source(args.base_url, args.token, verify=args.ca_cert or True, connections=args.concurrency)
    started = time.monotonic()
    try:
        with tqdm(unit="rec", disable=args.quiet, file=sys.stderr) as bar:
            run = ApiImport(services.db, services.files, source, owner_id, args.concurrency,
                            progress=lambda count: bar.update(count - bar.n))
            report = run.run(args.community, args.query)
    finally:
        source.close()
    elapsed = time.monotonic() - started
    print(f"imported {report.imported} records ({report.files} files, {report.bytes} bytes), {report.skipped} "
          f"already there, {len(report.failed)} failed, in {elapsed:.1f} s")
    if source.waited:
        print(f"waited {source.waited:.0f} s as the source asked (Retry-After, rate limits)")
    for source_id in report.duplicates:
        print(f"duplicate: record {source_id} was listed twice by the source (taken once)")
    for source_id, reason in report.failed:
        print(f"failed: record {source_id}: {reason}")
    if report.listing_error:
        print(f"the listing stopped early: {report.listing_error} (run again to go on)")
        if not report.imported and not report.skipped:
            return 2
    return 1 if report.failed or report.listing_error else 0
