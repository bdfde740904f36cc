"""Subject vocabularies (docs/operators/subjects.md): files of terms with their identifiers, loaded into the `subjects`
table under the vocabulary's name, suggested for the deposit form's subjects as one types, and filled in when a term
typed without its identifier is a term of exactly one loaded vocabulary.

A file is JSON lines (`{"term": ..., "identifier": ...}` a line) or CSV with the header `term,identifier`. Each
identifier must be one the deposit API takes for a subject (a URL, a GND id, ...: the same detection), and appear
once. Every line is checked before anything is written, and a vocabulary's rows change in one transaction: loading
the same file again changes nothing; terms no longer in the file are removed."""

from __future__ import annotations

import csv
from typing import Any

from sqlalchemy import Connection, Row, case, delete, func, insert, select, update

from repository.paging import Page
from repository.storage import Database
from repository.storage.tables.vocabularies import subjects
from repository.timeutil import utcnow
from repository.vocabularies.identifiers import SUBJECT_SCHEMES, detect_scheme, normalize_identifier
from repository.vocabularies.listing import matches_all, query_terms
from repository.vocabularies.loader import Changes, DataFileError, LoadError, read_jsonl

MAX_TERM = 500
MAX_NAME = 64


def read_file(path: str) -> list[dict[str, str]]:
    """The terms of a vocabulary file as `{term, identifier}`; DataFileError naming the line that is wrong."""
    lines = _csv_lines(path) if path.lower().endswith(".csv") else read_jsonl(path)
    rows: dict[str, dict[str, str]] = {}
    for number, line in lines:
        term, identifier = line.get("term"), line.get("identifier")
        if not isinstance(term, str) or not term.strip() or len(term.strip()) > MAX_TERM:
            raise DataFileError(path, number, f"`term` must be a text of 1 to {MAX_TERM} characters")
        if not isinstance(identifier, str) or not identifier.strip():
            raise DataFileError(path, number, "`identifier` is missing")
        scheme = detect_scheme(identifier.strip(), SUBJECT_SCHEMES)
        if scheme is None:
            raise DataFileError(path, number, f"{identifier!r} is not an identifier a subject may have (a URL, a "
                                              "GND id, ...)")
        normalized = normalize_identifier(identifier.strip(), scheme)
        if len(normalized) > MAX_TERM:
            raise DataFileError(path, number, f"the identifier is longer than {MAX_TERM} characters")
        if normalized in rows:
            raise DataFileError(path, number, f"{normalized} appears twice")
        rows[normalized] = {"term": " ".join(term.split()), "identifier": normalized}
    return list(rows.values())


def _csv_lines(path: str) -> list[tuple[int, dict[str, Any]]]:
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or not {"term", "identifier"} <= set(reader.fieldnames):
            raise DataFileError(path, 1, "the header must name the columns `term` and `identifier`")
        try:
            return [(reader.line_num, row) for row in reader]
        except csv.Error as exc:
            raise DataFileError(path, reader.line_num, f"not valid CSV ({exc})") from None


def load_file(db: Database, path: str, vocabulary: str) -> Changes:
    """(Re)load vocabulary `vocabulary` from `path`; its terms no longer in the file are removed, other
    vocabularies are left alone. LoadError (nothing changed) for a bad name or file."""
    name = vocabulary.strip()
    if not name or len(name) > MAX_NAME:
        raise LoadError(f"the vocabulary's name must be 1 to {MAX_NAME} characters")
    rows = read_file(path)
    now, changes = utcnow(), Changes()
    with db.write() as conn:
        existing = {row.identifier: row.term for row in conn.execute(
            select(subjects.c.identifier, subjects.c.term).where(subjects.c.vocabulary == name))}
        added = [row for row in rows if row["identifier"] not in existing]
        changed = [row for row in rows if existing.get(row["identifier"], row["term"]) != row["term"]]
        stale = set(existing) - {row["identifier"] for row in rows}
        if added:
            conn.execute(insert(subjects), [{**row, "vocabulary": name, "search_text": _search_text(row),
                                             "created": now, "updated": now} for row in added])
        for row in changed:
            conn.execute(update(subjects).where(subjects.c.vocabulary == name,
                                                subjects.c.identifier == row["identifier"])
                         .values(term=row["term"], search_text=_search_text(row), updated=now))
        if stale:
            conn.execute(delete(subjects).where(subjects.c.vocabulary == name, subjects.c.identifier.in_(stale)))
    changes.added, changes.updated, changes.removed = len(added), len(changed), len(stale)
    return changes


def _search_text(row: dict[str, str]) -> str:
    return f"{row['term']} {row['identifier']}".lower()


def search(conn: Connection, q: str | None, page: Page) -> tuple[list[Row], int]:
    """Terms whose text or identifier contain every word of `q`, the term typed exactly first, then by term."""
    terms = query_terms(q)
    where = matches_all(subjects.c.search_text, [[term] for term in terms])
    total = conn.execute(select(func.count()).select_from(subjects).where(where)).scalar_one()
    exact = case((func.lower(subjects.c.term) == " ".join(terms), 0), else_=1)
    query = (select(subjects).where(where).order_by(exact, subjects.c.term, subjects.c.vocabulary,
                                                    subjects.c.identifier).limit(page.size).offset(page.offset))
    return list(conn.execute(query)), total


def by_term(conn: Connection, term: str) -> Row | None:
    """The one loaded term that is `term` (any case); None if none or several are (two vocabularies naming the same
    term differently do not say which is meant)."""
    wanted = " ".join(term.split()).lower()
    if not wanted:
        return None
    found = list(conn.execute(select(subjects).where(func.lower(subjects.c.term) == wanted).limit(2)))
    return found[0] if len(found) == 1 else None


def to_json(row: Row) -> dict[str, Any]:
    """A term as the suggestions give it: `{term, identifier, scheme, vocabulary}` (`scheme` as the API detects it)."""
    return {"term": row.term, "identifier": row.identifier,
            "scheme": detect_scheme(row.identifier, SUBJECT_SCHEMES) or "", "vocabulary": row.vocabulary}
