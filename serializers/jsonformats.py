"""The service v1 JSON and the legacy deposition-like JSON (docs/reference-behaviour.md#record-json, #legacy-json)."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from repository import urls

from .context import RenderContext
from .text import doi_url

# Relations the deposit API accepts; versioning relations are output-only and would break a client that
# copies legacy metadata back into a deposit.
_INPUT_RELATIONS = frozenset(
    "isCitedBy cites isSupplementTo isSupplementedBy isContinuedBy continues isDescribedBy describes hasMetadata "
    "isMetadataFor isNewVersionOf isPreviousVersionOf isPartOf hasPart isReferencedBy references isDocumentedBy "
    "documents isCompiledBy compiles isVariantFormOf isOriginalFormof isIdenticalTo isAlternateIdentifier "
    "isReviewedBy reviews isDerivedFrom isSourceOf requires isRequiredBy isObsoletedBy obsoletes".split()
)
_FLAT = (
    ("journal", "journal_", ("title", "volume", "issue", "pages")),
    ("meeting", "conference_", ("title", "acronym", "dates", "place", "url", "session", "session_part")),
    ("imprint", "imprint_", ("publisher", "isbn", "place")),
    ("part_of", "partof_", ("title", "pages")),
)
_COPIED = (
    "publication_date", "title", "creators", "description", "access_right", "embargo_date", "access_conditions",
    "doi", "keywords", "notes", "contributors", "references", "subjects", "version", "language", "locations",
    "dates", "method", "custom",
)

# The keys of a record's file object in the reference's JSON: strict client models (zenodoclient's RecordFile)
# take exactly these, so the record JSON carries no other (the SHA-256 is in /api/records/<id>/files, the bucket
# object and a download's Content-Digest).
FILE_KEYS = frozenset(("bucket", "checksum", "key", "links", "size", "type"))


# Where people are in deposit metadata, and their keys beyond the specification's (name, affiliation, orcid, gnd,
# a contributor's type): kept for the form and the formats that carry them (DataCite, JSON-LD), left out of the JSON
# clients read, which rebuild objects from it and break on keys they do not know (docs/reference-behaviour.md#legacy-json).
PEOPLE_LISTS = ("creators", "contributors", "thesis_supervisors")
EXTRA_PERSON_KEYS = frozenset({"affiliation_id"})


def specification_people(metadata: dict[str, Any]) -> dict[str, Any]:
    """`metadata` with its people holding the specification's keys only (the same dict when none has more)."""
    changed = {key: [without_extra_keys(person) for person in metadata[key]] for key in PEOPLE_LISTS
               if isinstance(metadata.get(key), list) and any(
                   isinstance(person, dict) and EXTRA_PERSON_KEYS & person.keys() for person in metadata[key])}
    return {**metadata, **changed} if changed else metadata


def without_extra_keys(person: Any) -> Any:
    """A person without the keys beyond the specification's (anything else as it is)."""
    if not isinstance(person, dict):
        return person
    return {key: value for key, value in person.items() if key not in EXTRA_PERSON_KEYS}


def v1_record(record: dict[str, Any]) -> dict[str, Any]:
    """The v1 representation: the record itself, its file objects with the reference's keys only (no internal
    file ids, nor keys a record stored by an earlier release may still carry)."""
    metadata = record.get("metadata") or {}
    people = specification_people(metadata)
    thesis = metadata.get("thesis") or {}
    if isinstance(thesis.get("supervisors"), list) and any(
            isinstance(p, dict) and EXTRA_PERSON_KEYS & p.keys() for p in thesis["supervisors"]):
        people = {**people, "thesis": {**thesis, "supervisors": [without_extra_keys(p) for p in thesis["supervisors"]]}}
    if people is not metadata:
        record = {**record, "metadata": people}
    if not record.get("files"):
        return record
    files = [{k: v for k, v in item.items() if k in FILE_KEYS} for item in record["files"]]
    return {**record, "files": files}


def render_v1(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `application/vnd.service.v1+json`."""
    return orjson.dumps(v1_record(record))


# A stored record's top level, each value its JSON text as stored; file objects likewise (docs/operators/export.md#speed).
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_FILES = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_ENCODE = msgspec.json.Encoder()
# A person's extra keys as a stored record can hold them (a quote inside a JSON string is escaped: these bytes
# are a key or a whole string value, never part of a longer text).
_EXTRA_PERSON_KEYS = tuple(orjson.dumps(key) for key in EXTRA_PERSON_KEYS)


def stored_top(data: bytes) -> dict[str, msgspec.Raw] | None:
    """The top level of a stored record (`data`: its orjson bytes, as `built_records` keeps them) for
    `render_v1_stored`, each value left as its JSON text; None when the v1 record must be built from the whole
    record (its people carry keys beyond the specification's, or it is no JSON object)."""
    if any(key in data for key in _EXTRA_PERSON_KEYS):
        return None
    try:
        return _TOP.decode(data)
    except msgspec.DecodeError:  # includes ValidationError: a value that is no JSON object
        return None


def render_v1_stored(top: dict[str, msgspec.Raw], replace: dict[str, Any]) -> bytes:
    """The bytes `render_v1` gives for the stored record whose `stored_top` is `top` with its keys `replace`d (a
    key it lacks is added last, as a dict's assignment does), without building the record's objects: only the
    file objects are read, to keep their specification keys. Equal byte for byte to
    `render_v1({**orjson.loads(data), **replace})`, since orjson wrote `data` and both write compact JSON."""
    out = dict(top)
    for key, value in replace.items():
        out[key] = msgspec.Raw(orjson.dumps(value))
    files = out.get("files")
    if files is not None:
        try:
            objects = _FILES.decode(files)
        except msgspec.DecodeError:  # not a list of objects: what v1_record does with it
            return orjson.dumps(v1_record({**orjson.loads(_ENCODE.encode(top)), **replace}))
        if objects:
            out["files"] = msgspec.Raw(_ENCODE.encode([{k: v for k, v in item.items() if k in FILE_KEYS}
                                                       for item in objects]))
    return _ENCODE.encode(out)


def render_v1_search(
    records: list[dict[str, Any]], total: int, links: dict[str, str], aggregations: dict[str, Any]
) -> bytes:
    """The v1 search envelope `{"hits": {"hits", "total"}, "links", "aggregations"}`."""
    body = {"hits": {"hits": [v1_record(r) for r in records], "total": total}, "links": links,
            "aggregations": aggregations}
    return orjson.dumps(body)


def _legacy_metadata(record: dict[str, Any]) -> dict[str, Any]:
    md = record.get("metadata", {})
    out: dict[str, Any] = {key: md[key] for key in _COPIED if md.get(key) not in (None, "", [], {})}
    out = specification_people(out)
    rtype = md.get("resource_type") or {}
    out["upload_type"] = rtype.get("type", "other")
    if rtype.get("subtype"):
        out["image_type" if rtype.get("type") == "image" else "publication_type"] = rtype["subtype"]
    if md.get("license"):
        out["license"] = md["license"]["id"]
    if md.get("communities"):
        out["communities"] = [{"identifier": c["id"]} for c in md["communities"]]
    if md.get("grants"):
        out["grants"] = [{"id": _grant_id(g)} for g in md["grants"]]
    for source, prefix, keys in _FLAT:
        for key in keys:
            value = (md.get(source) or {}).get(key)
            if value:
                out[prefix + key] = value
    thesis = md.get("thesis") or {}
    if thesis.get("supervisors"):
        out["thesis_supervisors"] = [without_extra_keys(person) for person in thesis["supervisors"]]
    if thesis.get("university"):
        out["thesis_university"] = thesis["university"]
    related = [r for r in md.get("related_identifiers", []) if r.get("relation") in _INPUT_RELATIONS]
    related += [
        {"identifier": a["identifier"], "relation": "isAlternateIdentifier", "scheme": a.get("scheme", "")}
        for a in md.get("alternate_identifiers", [])
    ]
    if related:
        out["related_identifiers"] = related
    out["prereserve_doi"] = {"doi": record.get("doi", ""), "recid": record["id"]}
    return out


def _grant_id(grant: dict[str, Any]) -> str:
    funder = (grant.get("funder") or {}).get("doi")
    return f"{funder}::{grant['code']}" if funder else grant["code"]


def _legacy_file(record: dict[str, Any], item: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    file_id = item.get("id", item["key"])
    return {
        "id": file_id,
        "filename": item["key"],
        "filesize": item["size"],
        "checksum": item["checksum"].removeprefix("md5:"),
        "links": {
            "self": urls.deposit_file_api(ctx.base_url, record["id"], file_id),
            "download": item["links"]["self"],
        },
    }


def legacy_record(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """The deposition-like legacy shape of a published record."""
    doi = record.get("doi", "")
    out: dict[str, Any] = {
        "conceptdoi": record.get("conceptdoi"),
        "conceptrecid": record.get("conceptrecid"),
        "created": record.get("created"),
        "doi": doi,
        "doi_url": doi_url(doi),
        "files": [_legacy_file(record, item, ctx) for item in record.get("files", [])],
        "id": record["id"],
        "links": record.get("links", {}),
        "metadata": _legacy_metadata(record),
        "modified": record.get("updated"),
        "owner": (record.get("owners") or [None])[0],
        "record_id": record["id"],
        "state": "done",
        "submitted": True,
        "title": record.get("metadata", {}).get("title", ""),
    }
    if not out["conceptdoi"]:
        del out["conceptdoi"]
    return out


def render_legacy(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as legacy `application/json`."""
    return orjson.dumps(legacy_record(record, ctx))


def render_legacy_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as legacy `application/json`: a bare array."""
    return orjson.dumps([legacy_record(r, ctx) for r in records])

