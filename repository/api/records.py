"""`/api/records/`: search (the envelope, or any export format) and one record in any format of the registry."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from urllib.parse import urlencode

from flask import Blueprint, Response, g, redirect, request
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response as BaseResponse

import serializers
from repository import urls
from repository.files.buckets import file_checksums
from repository.records import read
from repository.records.file_details import with_file_details
from repository.records.render_context import render_context
from repository.search import multiselect
from repository.search.params import page_links, parse_search_args
from repository.timeutil import http_date
from repository.web import signposting
from repository.web.openapi import doc
from repository.web.request import identity, json_response, services
from repository.web.usage import reader_visit
from serializers.context import RenderContext
from serializers.jsonformats import render_v1_search
from serializers.negotiation import named_media_type, negotiate

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
        ("facet_counts", "post_filter (the default: facets ignore type, subtype, access_right, file_type and keywords) "
                         "or multiselect (each facet applies every filter but its own)"),
        ("format", "media type or short name (bibtex, marcxml, datacite, dc, csl, jsonld, json, rocrate, "
                   "croissant, codemeta, cff...)"),
    )
]  # fmt: skip


def _arg(name: str) -> str | None:
    # Werkzeug's `args.get` of a missing name raises and catches a KeyError that is an HTTPException, a cost most
    # requests (no query string) need not pay.
    args = request.args
    return args.get(name) if args else None


def _context() -> RenderContext:
    s = services()
    return render_context(s.settings, s.db, _arg("style"), _arg("locale"))


@functools.lru_cache(maxsize=512)
def _negotiated(accept: str | None, format_param: str | None) -> serializers.Serializer:
    """`negotiate` over the registry, kept per (Accept, ?format=): clients send a few Accept values over and over
    (an unacceptable one raises, and is not kept)."""
    return negotiate(accept, format_param, list(serializers.REGISTRY.values()), serializers.DEFAULT)


def _serializer() -> serializers.Serializer:
    """The format this request asks for (negotiated once: a record read asks for it twice, for its ETag first)."""
    if "serializer" not in g:
        g.serializer = _negotiated(request.headers.get("Accept"), _arg("format"))
    chosen: serializers.Serializer = g.serializer
    return chosen


@functools.lru_cache(maxsize=512)
def _v1_label(accept: str | None, format_param: str | None) -> str:
    # The v1 format answers as application/json, as the reference system does, so every JSON client reads it;
    # a client that named a v1 media type (Accept, ?format=) gets the answer labelled as it asked.
    return named_media_type(accept, format_param, serializers.DEFAULT) or "application/json"


def _content_type(serializer: serializers.Serializer) -> str:
    if serializer.name == "v1":
        return _v1_label(request.headers.get("Accept"), _arg("format"))
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
    req = parse_search_args(args, cursor_key=s.secret, window=window)
    if serializer.name != "v1" or (req.after is not None and not args.get("facets")):
        # Export pages have no place for facets, and a cursor walk reads pages, not counts: computing them was
        # most of a search's cost on a large corpus.
        req = dataclasses.replace(req, facets=())
    result = multiselect.search(s.search, req)
    base = s.settings.BASE_URL + path
    links = {rel: f"{base}?{urlencode(args_)}" for rel, args_ in page_links(req, result.next_cursor, window).items()}
    header = ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())
    if serializer.name == "v1" or serializer.render_page is None:  # None: v1 only (see above)
        body = render_v1_search(result.hits, result.total, links, result.aggregations)
    else:
        body = serializer.render_page(result.hits, _context())
    return Response(body, 200, headers={"Link": header, "Vary": "Accept"}, content_type=_content_type(serializer))


@bp.get("/")
@doc(parameters=SEARCH_PARAMS, responses={"200": {"description": "The search envelope, or the chosen format."}})
def search() -> Response:
    """Search published records; `Accept`/`?format=` choose the rendering (legacy JSON: a bare array)."""
    return search_response(request.args, urls.RECORDS)


def _variant() -> tuple[str, bool]:
    """The negotiated format's name and whether it shows the counts (only v1 has `stats`), for the ETag."""
    name = _serializer().name
    return name, name == "v1"


def _if_none_match() -> Callable[[str], bool]:
    """Whether an ETag matches the request's If-None-Match (weakly); parsed only when sent."""
    if "If-None-Match" not in request.headers:
        return read.never
    return request.if_none_match.contains_weak


@bp.get("/<int:recid>")
@doc(
    parameters=[{"name": "format", "in": "query", "schema": {"type": "string"},
                 "description": "a media type or short name: " + ", ".join(serializers.REGISTRY)},
                {"name": "download", "in": "query", "schema": {"type": "string"},
                 "description": "sent as an attachment named for the record and format (zenodo.3668.bib)"}],
    responses={"200": {"description": "The record"}, "301": {"description": "Concept id: latest version"},
               "406": {"description": "No format asked for is offered, or the one asked for describes other kinds "
                                      "of record (croissant: datasets; codemeta: software; cff: software and "
                                      "datasets)"}},
)
def get_record(recid: int) -> Response:
    """One record (v1 JSON by default; any registry format through Accept or ?format=). 410 once deleted."""
    s = services()
    found = read.read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, identity(),
                             visit=reader_visit(), variant=_variant,
                             unchanged=_if_none_match())  # fmt: skip
    if found.record is None:
        return Response(status=304, headers={"ETag": found.etag})
    serializer = _serializer()
    record = found.record
    if serializer.file_details:
        record = with_file_details(s.db, s.files, record)
    body = serializer.render(record, _context())
    link = f'<{found.record["links"]["self"]}>; rel="self"'
    if serializer.describes:  # a metadata resource of FAIR Signposting (not a linkset)
        link += ", " + signposting.metadata_link_header(found.record, services().settings)
    headers = {
        "ETag": found.etag,
        "Last-Modified": http_date(found.row["updated"]),
        "Link": link,
        "Vary": "Accept, Authorization",
    }
    if found.row.get("review"):  # in review (docs/operators/moderation.md): not for search engines
        headers["X-Robots-Tag"] = "noindex"
    if _arg("format") is not None or _arg("download") is not None:
        # An export link followed by a browser: saved under a name with the format's extension, at once with
        # ?download (docs/researchers/record-page.md#exports).
        disposition = "attachment" if _arg("download") is not None else "inline"
        headers["Content-Disposition"] = f'{disposition}; filename="{serializer.filename(record)}"'
    return Response(body, 200, headers=headers, content_type=_content_type(serializer))


@bp.get("/<int:recid>/versions")
@doc(parameters=SEARCH_PARAMS)
def versions(recid: int) -> Response:
    """Every version of the record's concept, newest first, in the search envelope."""
    row = read.record_row(services().db, services().settings, recid)
    args = MultiDict(request.args)
    args["q"] = f"conceptrecid:{row['conceptrecid']}"
    args["all_versions"] = "true"
    args.setdefault("sort", "-version")
    return search_response(args, urls.record_versions_api("", recid))


@bp.get("/<int:recid>/versions/latest")
@doc(responses={"302": {"description": "Redirect to the newest published version of the record's concept"},
                "404": {"description": "No such record"}, "410": {"description": "Every version deleted"}})
def latest(recid: int) -> BaseResponse:
    """`links.latest`: 302 to the newest published version of the record's concept, whenever it is followed."""
    newest = read.newest_version(services().db, recid)
    return redirect(urls.record_api(services().settings.BASE_URL, newest), 302)


@bp.get("/<int:recid>/files")
def record_files(recid: int) -> Response:
    """The record's files as `{"entries": [...]}`; 404 to those who may not see them."""
    row, objs = read.readable_files(services().db, services().settings, recid, identity())
    base = services().settings.BASE_URL
    return json_response(
        {
            "entries": [
                {
                    "file_id": o["file_id"],
                    "key": o["key"],
                    "size": o["size"],
                    "checksum": o["checksum"],
                    "checksums": file_checksums(o),
                    "links": {"self": urls.bucket_object(base, row["bucket_id"], o["key"])},
                }
                for o in objs
            ]
        }
    )
