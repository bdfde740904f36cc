"""Research organisations from the Research Organization Registry (ROR): a data dump loaded into the
`organizations` table, searched to suggest affiliations (docs/operators/ror.md).

A dump is ROR's public release: a JSON array of organisations (schema v2, or v1), as a `.json` file or the release's
`.zip`, which holds the v1 and v2 files side by side (the v2 one is read). Every record is checked before anything
is written, and the table changes in one transaction, so a load can be repeated: the second one changes nothing.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from sqlalchemy import Connection, Row, case, func, literal, select

from repository.paging import Page
from repository.storage import Database
from repository.storage.tables.vocabularies import organizations
from repository.vocabularies.identifiers import normalize_ror
from repository.vocabularies.listing import escape_like, matches_all, query_terms
from repository.vocabularies.loader import Changes, LoadError, remove_rows, sync_rows

# What a v2 record's `names[].types` say about each name.
DISPLAY, ACRONYM = "ror_display", "acronym"
STATUSES = ("active", "inactive", "withdrawn")
SUGGESTED_STATUSES = ("active", "inactive")  # a withdrawn record was a mistake or a duplicate: never suggested


@contextmanager
def _open_dump(path: str) -> Iterator[IO[bytes]]:
    """The JSON of a dump: the file itself, or the v2 file of a release's zip (its only JSON file otherwise)."""
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as handle:
            yield handle
        return
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n.endswith(".json")]
        v2 = [n for n in names if "schema_v2" in n]
        if len(v2) != 1 and len(names) != 1:
            raise LoadError(f"{path}: expected one JSON file of schema v2 in the zip, found {', '.join(names) or 'none'}")
        with archive.open(v2[0] if len(v2) == 1 else names[0]) as handle:
            yield handle


def read_dump(path: str) -> list[dict[str, Any]]:
    """The organisations of a dump as rows of the table; LoadError naming the record that is malformed."""
    with _open_dump(path) as handle:
        try:
            records = json.load(handle)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise LoadError(f"{path}: not a ROR dump: not valid JSON ({exc})") from None
    if not isinstance(records, list):
        raise LoadError(f"{path}: not a ROR dump: expected a JSON array of organisations")
    rows: dict[str, dict[str, Any]] = {}
    for index, record in enumerate(records):
        row = _row(record)
        if isinstance(row, str):
            raise LoadError(f"{path}, organisation {index + 1}: {row}")
        rows[row["id"]] = row
    return list(rows.values())


def _row(record: Any) -> dict[str, Any] | str:
    """A table row for one dump record (v2, or v1 where `names` is absent), or what is wrong with it."""
    if not isinstance(record, dict):
        return "expected a JSON object"
    ror_id = normalize_ror(str(record.get("id", "")))
    if ror_id is None:
        return f"'id' {record.get('id')!r} is not a ROR id"
    if "names" in record:
        name, acronyms, aliases = _v2_names(record["names"])
        country = _v2_country(record.get("locations"))
    else:
        name = record.get("name")
        acronyms = _strings(record.get("acronyms"))
        labels = [label.get("label") for label in record.get("labels") or [] if isinstance(label, dict)]
        aliases = _strings(record.get("aliases")) + _strings(labels)
        country = str((record.get("country") or {}).get("country_code") or "")
    if not isinstance(name, str) or not name.strip():
        return f"{ror_id} has no name"
    status = record.get("status")
    if status not in STATUSES:
        return f"{ror_id}: 'status' {status!r} is not one of {', '.join(STATUSES)}"
    name = name.strip()[:500]
    aliases = [a for a in dict.fromkeys(aliases) if a != name]
    return {"id": ror_id, "name": name, "acronyms": json.dumps(acronyms, ensure_ascii=False),
            "aliases": json.dumps(aliases, ensure_ascii=False), "country": country.upper()[:2], "status": status,
            "search_text": " ".join([ror_id.rsplit("/", 1)[1], name, *acronyms, *aliases]).lower()}


def _strings(values: Any) -> list[str]:
    return [v.strip() for v in values or [] if isinstance(v, str) and v.strip()]


def _v2_names(names: Any) -> tuple[str | None, list[str], list[str]]:
    """The displayed name, the acronyms and the other names of a v2 record's `names`."""
    display, acronyms, others = None, [], []
    for entry in names if isinstance(names, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), str) or not entry["value"].strip():
            continue
        types = entry.get("types") or []
        if DISPLAY in types and display is None:
            display = entry["value"]
        elif ACRONYM in types:
            acronyms.append(entry["value"].strip())
        else:
            others.append(entry["value"].strip())
    return display, acronyms, others


def _v2_country(locations: Any) -> str:
    for location in locations if isinstance(locations, list) else []:
        details = location.get("geonames_details") if isinstance(location, dict) else None
        if isinstance(details, dict) and isinstance(details.get("country_code"), str):
            return details["country_code"]
    return ""


def load_dump(db: Database, path: str, progress: bool = False) -> Changes:
    """(Re)load the organisations of a ROR dump; those no longer in it are removed. LoadError (nothing changed) on
    a malformed dump."""
    rows = read_dump(path)
    with db.write() as conn:
        changes, stale = sync_rows(conn, organizations, ("id",), rows, progress, "organisations")
        remove_rows(conn, organizations, ("id",), stale, changes)
    return changes


def get(conn: Connection, ror_id: str) -> Row | None:
    """The organisation with this ROR id (bare or as a URL), or None."""
    normalized = normalize_ror(ror_id)
    return None if normalized is None else conn.execute(
        select(organizations).where(organizations.c.id == normalized)).first()


def by_name(conn: Connection, name: str) -> Row | None:
    """The one suggested organisation whose name (or other name) is `name`, any case; None if none or several
    are: a name two organisations share does not say which one is meant."""
    wanted = name.strip().lower()
    if not wanted:
        return None
    found = [row for row in conn.execute(
        select(organizations).where(organizations.c.status.in_(SUGGESTED_STATUSES),
                                    organizations.c.search_text.like(f"%{escape_like(wanted)}%", escape="\\"))
        .limit(50))
        if wanted in [row.name.lower(), *(a.lower() for a in json.loads(row.aliases))]]
    return found[0] if len(found) == 1 else None


def search(conn: Connection, q: str | None, page: Page) -> tuple[list[Row], int]:
    """Organisations (not withdrawn) whose names, acronyms or id contain every word of `q`; the one named exactly,
    or by its acronym, first. No close spellings, unlike the smaller vocabularies: finding them would read the
    whole registry's words (120,000 organisations) at every keystroke that matches nothing."""
    terms = query_terms(q)
    exact = " ".join(terms)
    where = matches_all(organizations.c.search_text, [[term] for term in terms]) & organizations.c.status.in_(
        SUGGESTED_STATUSES)
    total = conn.execute(select(func.count()).select_from(organizations).where(where)).scalar_one()
    named = func.lower(organizations.c.name) == exact
    whole_words = (literal(" ") + organizations.c.search_text + " ").like(f"% {escape_like(exact)} %", escape="\\")
    order = (case((named, 0), (whole_words, 1), else_=2), organizations.c.status, organizations.c.name,
             organizations.c.id)
    query = select(organizations).where(where).order_by(*order).limit(page.size).offset(page.offset)
    return list(conn.execute(query)), total


def to_json(row: Row) -> dict[str, Any]:
    """An organisation as the suggestions give it: `{id, name, acronyms, aliases, country, status}`."""
    return {"id": row.id, "name": row.name, "acronyms": json.loads(row.acronyms), "aliases": json.loads(row.aliases),
            "country": row.country, "status": row.status}
