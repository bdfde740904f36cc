"""A v1 record dict -> the flat document the search index holds (field names of docs/reference-behaviour.md#index-fields)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

from dateutil.parser import isoparse

from repository.search.mapping import SOURCE_FIELD

# Natural direction of every sort option; a leading "-" in `sort` flips it (docs/reference-behaviour.md#sort-options).
SORT_ORDERS: dict[str, str] = {
    "bestmatch": "desc",
    "mostrecent": "desc",
    "mostviewed": "desc",
    "publication_date": "asc",
    "conference_session": "asc",
    "journal": "asc",
    "version": "asc",
}

# Version of the index document (to_index_document, and the record it carries from records.build_records): part of
# the name of every engine-ready form, so bumping it makes the documents stored in built_records stale.
DOCUMENT_VERSION = 1

_TAGS = re.compile(r"<[^>]+>")
UTC_SECONDS = "%Y-%m-%dT%H:%M:%SZ"  # how timestamps are indexed: both engines and the sort keys agree on them
_TOP = "\U0010ffff"  # sorts after every character a real value starts with
STATS = ("views", "unique_views", "downloads", "unique_downloads", "volume", "version_views",
         "version_unique_views", "version_downloads", "version_unique_downloads", "version_volume")


def _values(items: Iterable[Any] | None, key: str) -> list[Any]:
    return [item[key] for item in items or [] if isinstance(item, dict) and item.get(key) not in (None, "")]


def _plain(text: str | None) -> str | None:
    """Descriptions are HTML; index their words, not the tags."""
    if not text:
        return None
    return html.unescape(_TAGS.sub(" ", text)).strip() or None


def _utc(value: str | None) -> str | None:
    """A timestamp normalized to `YYYY-MM-DDTHH:MM:SSZ` so both engines and the sort keys agree."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        moment = isoparse(value)  # rarer ISO 8601 forms (week dates, basic format)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(UTC_SECONDS)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _custom_terms(custom: dict[str, Any] | None) -> list[str]:
    """`term:value` strings; relationship terms give `term:subject:object` for each pair."""
    out: list[str] = []
    for term, values in (custom or {}).items():
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, dict):
                for subject in value.get("subject") or [""]:
                    for obj in value.get("object") or [""]:
                        out.append(f"{term}:{subject}:{obj}")
            elif value not in (None, ""):
                out.append(f"{term}:{value}")
    return out


def _str_part(value: Any, desc: bool = False) -> str:
    """One string component of a sort key; a missing value sorts after every present one."""
    if value in (None, ""):
        return _TOP * 2
    text = str(value)[:100]
    if not desc:
        return text + "\x00"
    # Invert code points so a plain ascending sort of the key orders this part descending.
    inverted = "".join(chr(min(0x10FFFF - ord(ch), 0xD7FF) if 0xD800 <= 0x10FFFF - ord(ch) <= 0xDFFF
                           else 0x10FFFF - ord(ch)) for ch in text)
    return inverted + _TOP


def _int_part(value: Any) -> str:
    number = _int(value)
    if number is None:
        return _TOP * 2
    return f"{max(number, 0):020d}"


def sort_key(parts: list[str], recid: int) -> str:
    """Join sort components and the record id (tie-breaker) into one hex string that sorts bytewise."""
    return sort_prefix("".join(parts) + _int_part(recid))


def mostrecent_key(created: str | None, recid: int) -> str:
    """The `sort_mostrecent` key of record `recid` created at `created` (as indexed, UTC_SECONDS); also made from
    the two columns by repository.search.embedded.deep_pages."""
    return sort_key([_str_part(created)], recid)


def mostviewed_key(views: int | None, recid: int) -> str:
    """The `sort_mostviewed` key of record `recid` whose version was viewed `views` times (as deep_pages too)."""
    return sort_key([_int_part(views)], recid)


def day_keys(first: date | None, last: date | None) -> tuple[str | None, str | None]:
    """The keys of a sort whose first part is a day (`sort_publication_date`) that lie from day `first` to day `last`
    (None: open on that side), as the bounds [lower, upper) of a range over the key column: a day's keys start with
    the day and `\\x00`."""
    return (None if first is None else sort_prefix(first.isoformat() + "\x00"),
            None if last is None else sort_prefix(last.isoformat() + "\x01"))


def number_keys(value: int) -> tuple[str, str]:
    """The keys of a sort whose first part is a number (`sort_version`: the concept) that start with `value`, as the
    bounds [lower, upper) of a range over the key column."""
    return sort_prefix(_int_part(value)), sort_prefix(_int_part(value + 1))


def sort_prefix(text: str) -> str:
    """The start of every sort key whose parts begin with `text` (sort_key's encoding)."""
    return text.encode("utf-8").hex()


MISSING_KEY = sort_prefix(_TOP * 2)  # where the keys whose first part has no value start: after every other


def sort_keys(doc: dict[str, Any]) -> dict[str, str]:
    """The `sort_<option>` fields of one index document (see SORT_ORDERS)."""
    recid = doc["recid"]
    return {
        "sort_mostrecent": mostrecent_key(doc.get("created"), recid),
        "sort_mostviewed": mostviewed_key(doc.get("stats.version_views"), recid),
        "sort_publication_date": sort_key([_str_part(doc.get("publication_date"))], recid),
        "sort_conference_session": sort_key(
            [_str_part(doc.get("meeting.session")), _str_part(doc.get("meeting.session_part"), desc=True)], recid),
        "sort_journal": sort_key([_str_part(doc.get(f"journal.{k}")) for k in ("year", "volume", "issue", "pages")],
                                 recid),
        "sort_version": sort_key([_int_part(doc.get("conceptrecid")), _int_part(doc.get("relations.version.index"))],
                                 recid),
    }


def files_public(record: dict[str, Any]) -> bool:
    """Open records, and embargoed ones past their date (the indexer builds those with their files)."""
    right = (record.get("metadata") or {}).get("access_right")
    return right == "open" or (right == "embargoed" and bool(record.get("files")))


def stored_record(record: dict[str, Any]) -> dict[str, Any]:
    """The copy kept in the index: records whose files are not public carry no files in search hits."""
    if files_public(record):
        return record
    kept = {k: v for k, v in record.items() if k != "files"}
    if isinstance(kept.get("links"), dict):
        kept["links"] = {k: v for k, v in kept["links"].items() if k != "bucket"}
    return kept


def add_member(document: bytes, member: bytes) -> bytes:
    """Serialized JSON object `document` with `member` (`"key":value`, serialized) added last."""
    body = document.rstrip()
    if body == b"{}":
        return b"{" + member + b"}"
    return body[:-1] + b"," + member + b"}"


def to_index_document(record: dict[str, Any]) -> dict[str, Any]:
    """Flatten a v1 record into the index document; the whole record rides along under `record`."""
    meta = record.get("metadata") or {}
    is_open = files_public(record)
    files = [f for f in record.get("files") or [] if isinstance(f, dict)]
    versions = ((meta.get("relations") or {}).get("version") or [{}])[0]
    resource_type = meta.get("resource_type") or {}
    journal, meeting, imprint = meta.get("journal") or {}, meta.get("meeting") or {}, meta.get("imprint") or {}
    grants = meta.get("grants") or []
    points = [{"lat": float(loc["lat"]), "lon": float(loc["lon"])} for loc in meta.get("locations") or []
              if isinstance(loc, dict) and isinstance(loc.get("lat"), int | float)
              and isinstance(loc.get("lon"), int | float)]
    stats = record.get("stats") or {}
    publication_date = meta.get("publication_date")
    doc: dict[str, Any] = {
        "recid": int(record["id"]),
        "conceptrecid": _int(record.get("conceptrecid")),
        "revision": _int(record.get("revision")) or 0,
        "doi": record.get("doi") or meta.get("doi"),
        "conceptdoi": record.get("conceptdoi"),
        "owners": [o for o in record.get("owners") or [] if isinstance(o, int)],
        "title": meta.get("title"),
        "description": _plain(meta.get("description")),
        "creators.name": _values(meta.get("creators"), "name"),
        "creators.orcid": _values(meta.get("creators"), "orcid"),
        "creators.gnd": _values(meta.get("creators"), "gnd"),
        "creators.affiliation": _values(meta.get("creators"), "affiliation"),
        "contributors.name": _values(meta.get("contributors"), "name"),
        "contributors.orcid": _values(meta.get("contributors"), "orcid"),
        "contributors.gnd": _values(meta.get("contributors"), "gnd"),
        "contributors.affiliation": _values(meta.get("contributors"), "affiliation"),
        "contributors.type": _values(meta.get("contributors"), "type"),
        "keywords": [k for k in meta.get("keywords") or [] if isinstance(k, str) and k],
        "subject.term": _values(meta.get("subjects"), "term"),
        "subject.identifier": _values(meta.get("subjects"), "identifier"),
        "subject.scheme": _values(meta.get("subjects"), "scheme"),
        "communities": _values(meta.get("communities"), "id"),
        "resource_type.type": resource_type.get("type"),
        "resource_type.subtype": resource_type.get("subtype"),
        "access_right": meta.get("access_right"),
        "license.id": (meta.get("license") or {}).get("id"),
        "grants.code": _values(grants, "code"),
        "grants.acronym": _values(grants, "acronym"),
        "grants.title": _values(grants, "title"),
        "grants.funder.doi": _values([g.get("funder") for g in grants if isinstance(g, dict)], "doi"),
        "grants.funder.name": _values([g.get("funder") for g in grants if isinstance(g, dict)], "name"),
        **{f"journal.{k}": str(journal[k]) for k in ("volume", "issue", "pages", "year") if journal.get(k)},
        "journal.title": journal.get("title"),
        **{f"meeting.{k}": meeting.get(k) for k in ("title", "acronym", "place", "dates", "url", "session",
                                                     "session_part")},
        "imprint.publisher": imprint.get("publisher"),
        "imprint.isbn": imprint.get("isbn"),
        "language": meta.get("language"),
        "version": meta.get("version"),
        "notes": meta.get("notes"),
        "publication_date": publication_date,
        "year": _int(str(publication_date)[:4]) if publication_date else None,
        "created": _utc(record.get("created")),
        "updated": _utc(record.get("updated")),
        "filename": [f["key"] for f in files if f.get("key")] if is_open else [],
        "filetype": sorted({f["type"] for f in files if f.get("type")}) if is_open else [],
        "filecount": len(files),
        "size": sum(_int(f.get("size")) or 0 for f in files),
        "related.identifier": _values(meta.get("related_identifiers"), "identifier"),
        "related.relation": _values(meta.get("related_identifiers"), "relation"),
        "related.scheme": _values(meta.get("related_identifiers"), "scheme"),
        "alternate.identifier": _values(meta.get("alternate_identifiers"), "identifier"),
        "alternate.scheme": _values(meta.get("alternate_identifiers"), "scheme"),
        # Legacy records without versioning count as the last (only) version, as the reference indexes them.
        "relations.version.is_last": bool(versions.get("is_last", True)),
        "relations.version.index": _int(versions.get("index")) or 0,
        "relations.version.count": _int(versions.get("count")) or 1,
        **{f"stats.{k}": _int(stats.get(k)) or 0 for k in STATS},
        "locations.point": points,
        "locations.place": _values(meta.get("locations"), "place"),
        "custom": _custom_terms(meta.get("custom")),
    }
    doc = {k: v for k, v in doc.items() if v not in (None, "", [])}
    doc.update(sort_keys(doc))
    doc[SOURCE_FIELD] = stored_record(record)
    return doc
