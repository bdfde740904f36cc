"""`repository-admin import csv`: a spreadsheet of records (docs/operators/migration.md#importing-a-spreadsheet).

Every row is read and checked first (its metadata as a publish checks them, its files there and readable, its
owner's address, its id new in the sheet and in the ledger); a sheet with any bad row writes nothing, and
`--dry-run` stops after the check in any case. Then each row is one transaction: its files, copied in before, are
added to a new deposit of its owner, which is published or left as a draft, and the row is noted in the ledger."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import requests

from repository.accounts.tokens import EMAIL_RE, create_user
from repository.config import Settings
from repository.datadesc import checks
from repository.deposits import actions
from repository.errors import ApiError, ValidationError
from repository.files import buckets, quotas
from repository.files.keys import check_key
from repository.files.store import FileStore, StoredFile
from repository.imports import ledger
from repository.imports.publishing import reason
from repository.metadata import DoiPolicy, validate_draft, validate_for_publish
from repository.records.lookups import DatabaseLookups
from repository.storage import Database

# The columns, in the template's order: (name, what it holds). docs/operators/migration.md#the-columns repeats it.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "required: the row's identifier in this sheet, unique; a rerun skips the ids already imported"),
    ("owner", "e-mail address of the record's owner (default: --owner); a new address makes a new user"),
    ("upload_type", "publication, dataset, software, image, video, poster, presentation, lesson, other, ..."),
    ("publication_type", "for a publication: article, book, thesis, report, preprint, ..."),
    ("image_type", "for an image: figure, photo, drawing, diagram, plot, other"),
    ("title", "the title"),
    ("creators", "people separated by ';', each 'Family, Given', an ORCID in brackets after it if known"),
    ("description", "the description (HTML allowed)"),
    ("publication_date", "YYYY-MM-DD (default: the day of the import)"),
    ("keywords", "separated by ';'"),
    ("access_right", "open (default), embargoed, restricted or closed"),
    ("license", "a license id, such as cc-by-4.0"),
    ("embargo_date", "YYYY-MM-DD, for embargoed"),
    ("access_conditions", "for restricted"),
    ("doi", "the record's DOI if it has one already (kept, never registered here)"),
    ("language", "ISO 639-2 or 639-3 code, such as eng"),
    ("version", "the version"),
    ("notes", "notes"),
    ("files", "paths (relative to the sheet's folder) or http(s) URLs, separated by ';'"),
    ("original_url", "where the work is held, for a row without files: makes a metadata-only record"),
)
NAMES = tuple(name for name, _ in COLUMNS)
_LISTS = ("keywords",)
_COPIED = ("upload_type", "publication_type", "image_type", "title", "description", "publication_date",
           "access_right", "license", "embargo_date", "access_conditions", "doi", "language", "version", "notes")
MAX_ROWS = 100_000


def template() -> str:
    """The template the command writes: the header row and one example row."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(NAMES)
    writer.writerow(["thesis-0001", "someone@example.org", "publication", "thesis", "", "A thesis about soil",
                     "Doe, Jane [0000-0002-1825-0097]; Roe, Richard", "<p>What the thesis finds.</p>", "2024-06-30",
                     "soil; nitrogen", "open", "cc-by-4.0", "", "", "", "eng", "", "", "thesis.pdf", ""])
    return out.getvalue()


@dataclass
class Row:
    """One checked row: where it is, its id and owner, its deposit metadata, its files, and what is wrong."""

    number: int
    ident: str
    owner: str
    metadata: dict[str, Any]
    files: list[str]
    errors: list[str] = field(default_factory=list)


def read_rows(path: str) -> Iterator[tuple[int, dict[str, str]]]:
    """The rows of the sheet at `path` as {column: text}, numbered as a spreadsheet shows them (the header is 1)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        unknown = [name for name in reader.fieldnames or [] if name not in NAMES]
        if not reader.fieldnames or "id" not in reader.fieldnames or unknown:
            raise ValueError(f"{path}: the header must name the columns of the template (an id column, and no "
                             f"other column than those){'; unknown: ' + ', '.join(unknown) if unknown else ''}")
        for number, raw in enumerate(reader, start=2):
            if number > MAX_ROWS:
                raise ValueError(f"{path}: more than {MAX_ROWS} rows: split the sheet")
            yield number, {key: (value or "").strip() for key, value in raw.items() if key is not None}


def creators(text: str) -> list[dict[str, str]]:
    """`Family, Given [ORCID]; ...` -> the deposit's creators."""
    people = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        person = {"name": part}
        if part.endswith("]") and "[" in part:
            name, orcid = part[:-1].rsplit("[", 1)
            person = {"name": name.strip(), "orcid": orcid.strip()}
        people.append(person)
    return people


def metadata_of(cells: dict[str, str]) -> dict[str, Any]:
    """A row's cells -> deposit metadata (empty cells are not given)."""
    meta: dict[str, Any] = {key: cells[key] for key in _COPIED if cells.get(key)}
    if cells.get("creators"):
        meta["creators"] = creators(cells["creators"])
    for key in _LISTS:
        if cells.get(key):
            meta[key] = [v.strip() for v in cells[key].split(";") if v.strip()]
    if cells.get("original_url"):
        meta["related_identifiers"] = [{"identifier": cells["original_url"], "relation": "isIdenticalTo"}]
        if not cells.get("files"):
            meta["files"] = {"enabled": False}
    return meta


def check(db: Database, settings: Settings, path: str, default_owner: str | None, source: str,
          publish: bool) -> tuple[list[Row], list[Row]]:
    """Every row of the sheet checked, nothing written: (rows to import, rows already imported)."""
    folder = os.path.dirname(os.path.abspath(path))
    rows: list[Row] = []
    seen: set[str] = set()
    policy = DoiPolicy(prefix=settings.doi_prefix, test_prefix=settings.SANDBOX_DOI_PREFIX)
    with db.read() as conn:
        lookups = DatabaseLookups(conn)
        for number, cells in read_rows(path):
            row = Row(number, cells.get("id", ""), (cells.get("owner") or default_owner or "").lower(),
                      metadata_of(cells), [f.strip() for f in cells.get("files", "").split(";") if f.strip()])
            if not row.ident:
                row.errors.append("id: missing")
            elif row.ident in seen:
                row.errors.append("id: the same id as an earlier row")
            seen.add(row.ident)
            if not EMAIL_RE.match(row.owner):
                row.errors.append(f"owner: not an e-mail address ({row.owner!r}); give one, or --owner")
            try:
                (validate_for_publish if publish else validate_draft)(row.metadata, lookups, doi_policy=policy)
            except ValidationError as exc:
                row.errors.append(reason(exc))
            row.errors.extend(_file_problems(folder, row, publish))
            row.files = [_where(folder, f) for f in row.files]
            rows.append(row)
        done = ledger.known(conn, source, (row.ident for row in rows if row.ident))
    return [row for row in rows if row.ident not in done], [row for row in rows if row.ident in done]


def _where(folder: str, name: str) -> str:
    return name if name.startswith(("http://", "https://")) else os.path.join(folder, name)


def _file_problems(folder: str, row: Row, publish: bool) -> Iterator[str]:
    if row.metadata.get("files") == {"enabled": False}:
        return
    if publish and not row.files:
        yield "files: none, and no original_url for a metadata-only record"
    keys: set[str] = set()
    for name in row.files:
        try:
            key = check_key(name.rsplit("/", 1)[-1])
        except ApiError as exc:
            yield f"files: {name}: {exc}"
            continue
        if key in keys:
            yield f"files: two files named {key}"
        keys.add(key)
        if name.startswith(("http://", "https://")):
            continue
        if name.startswith("/") or ".." in name.split("/"):
            yield f"files: {name}: give a path inside the sheet's folder"
        elif not os.path.isfile(os.path.join(folder, name)) or not os.access(os.path.join(folder, name), os.R_OK):
            yield f"files: {name}: no readable file at {os.path.join(folder, name)}"


def _open(where: str, session: requests.Session, timeout: float) -> BinaryIO:
    if not where.startswith(("http://", "https://")):
        return open(where, "rb")
    answer = session.get(where, stream=True, timeout=timeout)
    if answer.status_code != 200:
        answer.close()
        raise OSError(f"HTTP {answer.status_code} for {where}")
    answer.raw.decode_content = True
    return answer.raw


def import_rows(db: Database, settings: Settings, store: FileStore, rows: list[Row], source: str, publish: bool,
                progress: Callable[[int], object] | None = None, timeout: float = 60.0) -> ledger.ImportReport:
    """Import checked rows, one transaction each; a row that fails (a file that cannot be fetched) is reported
    and leaves nothing behind."""
    report = ledger.ImportReport()
    quota = quotas.Quota.of(settings)
    session = requests.Session()
    for row in rows:
        stored: list[tuple[str, StoredFile]] = []
        try:
            for where in row.files:
                with _open(where, session, timeout) as stream:
                    stored.append((check_key(where.rsplit("/", 1)[-1]), store.write(stream)))
            record_id = _write(db, settings, store, quota, row, stored, source, publish)
        except (ApiError, OSError, requests.RequestException) as exc:
            for _, done in stored:
                store.remove(done.uri)
            report.failed.append((f"row {row.number} ({row.ident})", reason(exc)))
        else:
            report.imported.append((row.ident, record_id))
        if progress is not None:
            progress(len(report.imported) + len(report.failed))
    return report


def _write(db: Database, settings: Settings, store: FileStore, quota: quotas.Quota, row: Row,
           stored: list[tuple[str, StoredFile]], source: str, publish: bool) -> int:
    with db.write() as conn:
        owner_id = create_user(conn, row.owner)
        ctx = actions.Context(settings, DatabaseLookups(conn), store, metadata_only=True)
        dep_id = actions.create(conn, ctx, owner_id, row.metadata)
        bucket = actions.get_deposit(conn, dep_id, owner_id)["bucket_id"]
        for key, done in stored:
            buckets.put_object(conn, bucket, key, done, replace=False, quota=quota, field="file")
            checks.file_changed(conn, store, bucket, key)
        if publish:
            actions.publish(conn, ctx, dep_id, owner_id)
        ledger.note(conn, source, row.ident, dep_id, None)
    return dep_id
