"""`/api/records/`: search (the envelope, or any export format) and one record in any format of the registry."""

from __future__ import annotations

import dataclasses
from urllib.parse import quote, urlencode

from flask import Blueprint, Response, redirect, request
from werkzeug.datastructures import MultiDict

import serializers
from repository.errors import ApiError, Gone, NotFound
from repository.files import buckets as files
from repository.records import build as records_mod
from repository.records import stored as built_records
from repository.records.access import can_read_files
from repository.records.render_context import render_context
from repository.search.params import page_links, parse_search_args
from repository.storage.tables.deposits import concepts
from repository.timeutil import http_date
from repository.web.openapi import doc
from repository.web.request import identity, json_response, services
from serializers.jsonformats import render_v1_search
from serializers.negotiation import negotiate

bp = Blueprint("records", __name__, url_prefix="/api/records")

SEARCH_PARAMS = [
    {"name": name, "in": "query", "schema": {"type": "string"}, "description": text}
    for name, text in (
        ("q", "query string syntax (fields, phrases, AND/OR/NOT, ranges, wildcards, _exists_)"),
        ("status", "published (the default) or draft; records are published, so draft finds none"),
        ("sort", "bestmatch, mostrecent, mostviewed, publication_date, conference_session, journal, version; - reverses"),
        ("page", "page number from 1"), ("size", "records per page (default 10)"),
        ("all_versions", "true/1 lists every version"), ("communities", "community identifier"),
        ("type", "upload type"), ("subtype", "publication or image type"), ("access_right", "access right"),
        ("file_type", "file extension"), ("keywords", "keyword"), ("publication_date", "range yyyy--yyyy"),
        ("bounds", "minLon,minLat,maxLon,maxLat"), ("custom", "[field]:value"), ("facets", "aggregations to add"),
        ("cursor", "opaque position from links.next, to read past the 10,000-result window"),
        ("format", "media type or short name (bibtex, marcxml, datacite, dc, csl, jsonld, json)"),
    )
]  # fmt: skip


def _context():  # type: ignore[no-untyped-def]
    s = services()
    return render_context(s.settings, s.db, request.args.get("style"), request.args.get("locale"))


def _serializer():  # type: ignore[no-untyped-def]
    return negotiate(
        request.headers.get("Accept"), request.args.get("format"), list(serializers.REGISTRY.values()),
        serializers.DEFAULT,
    )


def _content_type(serializer) -> str:  # type: ignore[no-untyped-def]
    # The v1 format answers as application/json, as the reference system does, so every JSON client reads it.
    if serializer.name == "v1":
        return "application/json"
    if serializer.mimetype.startswith("text/") or serializer.mimetype.endswith("xml"):
        return serializer.mimetype + "; charset=utf-8"
    return serializer.mimetype


def search_response(args: MultiDict, path: str) -> Response:
    """Run a search and render it in the negotiated format (the envelope for v1)."""
    s = services()
    serializer = _serializer()
    if serializer.name != "v1" and serializer.render_page is None:
        serializer = serializers.DEFAULT
    window = s.settings.SEARCH_WINDOW
    req = parse_search_args(args, cursor_key=s.extras["secret"], window=window)
    if serializer.name != "v1" or (req.after is not None and not args.get("facets")):
        # Export pages have no place for facets, and a cursor walk reads pages, not counts: computing them was
        # most of a search's cost on a large corpus.
        req = dataclasses.replace(req, facets=())
    result = s.extras["search"].search(req)
    base = s.settings.BASE_URL + path
    links = {rel: f"{base}?{urlencode(args_)}" for rel, args_ in page_links(req, result.next_cursor, window).items()}
    header = ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())
    if serializer.name == "v1":
        body = render_v1_search(result.hits, result.total, links, result.aggregations)
    else:
        body = serializer.render_page(result.hits, _context())
    return Response(body, 200, headers={"Link": header}, content_type=_content_type(serializer))


@bp.get("/")
@doc(parameters=SEARCH_PARAMS, responses={"200": {"description": "The search envelope, or the chosen format."}})
def search() -> Response:
    """Search published records; `Accept`/`?format=` choose the rendering (legacy JSON: a bare array)."""
    return search_response(request.args, "/api/records/")


def record_row(recid: int) -> dict:
    """The record row (for every view about one record); 301 for a concept id, 410 for a deleted record, 404 for anything else."""
    s = services()
    with s.db.read() as conn:
        row = records_mod.get_row_with_counts(conn, recid)
        if row is not None:
            if row["deleted"] is not None:
                raise Gone("PID has been deleted.")
            return row
        is_concept = conn.execute(concepts.select().where(concepts.c.id == recid)).first() is not None
        latest = records_mod.latest_version(conn, recid) if is_concept else None
    if latest is not None:
        raise Moved(f"{s.settings.BASE_URL}/api/records/{latest}", latest)
    raise NotFound("PID does not exist.")


class Moved(ApiError):
    """A concept id: the answer is a redirect to its latest version."""

    status = 301
    default_message = "Moved Permanently"

    def __init__(self, location: str, recid: int) -> None:
        super().__init__(headers={"Location": location})
        self.location, self.recid = location, recid

    def body(self) -> dict:
        return {**super().body(), "location": self.location}


def record_response(row: dict) -> Response:
    """One record in the negotiated format, with ETag/Last-Modified and conditional requests."""
    s = services()
    serializer = _serializer()
    with_files = can_read_files(row, identity())
    etag = f'"{row["revision"]}-{serializer.name}-{int(with_files)}{_counts_tag(serializer, row)}"'
    if request.if_none_match.contains_weak(etag.strip('"')):
        return Response(status=304, headers={"ETag": etag})
    cache = s.extras["record_cache"]
    key = cache.key(row, with_files)
    record = cache.get(key)
    if record is None:
        from repository.vocabularies.lookups import DatabaseLookups

        with s.db.read() as conn:
            # The copy stored when the record was last indexed, if current; else built now.
            record = built_records.stored_record(conn, s.settings, s.extras["search"], row, with_files) or \
                records_mod.build_records(conn, s.settings, DatabaseLookups(conn), [row], with_files)[0]
        cache.put(key, record)
    else:
        # The counts of this version and of its concept came with the row: as of this moment.
        record = {**record, "stats": records_mod.current_stats(None, row)}
    s.extras["stats"].view(row["id"])
    body = serializer.render(record, _context())
    headers = {
        "ETag": etag,
        "Last-Modified": http_date(row["updated"]),
        "Link": f'<{record["links"]["self"]}>; rel="self"',
        "Vary": "Accept, Authorization",
    }
    return Response(body, 200, headers=headers, content_type=_content_type(serializer))


@bp.get("/<int:recid>")
@doc(responses={"200": {"description": "The record"}, "301": {"description": "Concept id: latest version"}})
def get_record(recid: int) -> Response:
    """One record (v1 JSON by default; any registry format through Accept or ?format=). 410 once deleted."""
    return record_response(record_row(recid))


@bp.get("/<int:recid>/versions")
@doc(parameters=SEARCH_PARAMS)
def versions(recid: int) -> Response:
    """Every version of the record's concept, newest first, in the search envelope."""
    row = record_row(recid)
    args = MultiDict(request.args)
    args["q"] = f"conceptrecid:{row['conceptrecid']}"
    args["all_versions"] = "true"
    args.setdefault("sort", "-version")
    return search_response(args, f"/api/records/{recid}/versions")


def _counts_tag(serializer, row: dict) -> str:  # type: ignore[no-untyped-def]
    """The part of the ETag for the counts a format shows (only v1 has `stats`): a view or download of any
    version changes the body without a new revision."""
    if serializer.name != "v1":
        return ""
    return "-" + ".".join(str(n) for n in (*row[records_mod.CONCEPT_COUNTS], row["views"], row["downloads"]))


def newest_version(recid: int) -> int:
    """The newest published version of the concept of `recid` (a record, taken down or not, or a concept id):
    404 for an unknown id, 410 when every version was taken down."""
    with services().db.read() as conn:
        concept = records_mod.concept_of(conn, recid)
        newest = records_mod.latest_version(conn, concept) if concept is not None else None
    if concept is None:
        raise NotFound("PID does not exist.")
    if newest is None:
        raise Gone("Every version of this record has been deleted.")
    return newest


@bp.get("/<int:recid>/versions/latest")
@doc(responses={"302": {"description": "Redirect to the newest published version of the record's concept"},
                "404": {"description": "No such record"}, "410": {"description": "Every version deleted"}})
def latest(recid: int) -> Response:
    """`links.latest`: 302 to the newest published version of the record's concept, whenever it is followed."""
    return redirect(f"{services().settings.BASE_URL}/api/records/{newest_version(recid)}", 302)


@bp.get("/<int:recid>/files")
def record_files(recid: int) -> Response:
    """The record's files as `{"entries": [...]}`; 404 to those who may not see them."""
    row = record_row(recid)
    if not can_read_files(row, identity()):
        raise NotFound("The record's files are not available to you.")
    base = services().settings.BASE_URL
    with services().db.read() as conn:
        objs = files.list_objects(conn, row["bucket_id"])
    return json_response(
        {
            "entries": [
                {
                    "file_id": o["file_id"],
                    "key": o["key"],
                    "size": o["size"],
                    "checksum": o["checksum"],
                    "links": {"self": f"{base}/api/files/{row['bucket_id']}/{quote(o['key'])}"},
                }
                for o in objs
            ]
        }
    )
