"""A file's preview, shown in a frame of its record's page: `/records/<id>/preview/<key>`. A CSV or TSV file's rows
as a paged table, a PDF as itself for the browser's viewer, the head of a text file, Markdown rendered and
sanitised, JSON pretty and folded, the entries of a ZIP or tar archive; a file that is not what its name says is
named as such (docs/researchers/record-page.md#file-previews)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from flask import Blueprint, Response, request, send_file
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.datadesc import query_preview
from repository.datadesc.checks import previews as table_previews
from repository.errors import NotFound
from repository.files import buckets
from repository.files import previews as file_previews
from repository.pages.base import render_page
from repository.records import read
from repository.web.openapi import doc
from repository.web.request import identity, services

bp = Blueprint("record_previews", __name__)
PREVIEW_ROWS = 50
FRAMED = {"table", "pdf", "text", "markdown", "json", "zip", "tar"}  # images are shown by the page itself


@bp.get("/records/<int:recid>/preview/<path:key>")
@doc(tags=["pages"], parameters=[{"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0},
                                  "description": "the first row shown of a CSV or TSV file"}],
     responses={"200": {"description": "The file's preview (HTML), or a PDF inline",
                        "content": {"text/html": {}, "application/pdf": {}}},
                "404": {"description": "No such file, no preview for it, or not readable by the caller"}})
def preview(recid: int, key: str) -> BaseResponse:
    """A file's preview for a frame of the record's page (200; a PDF as itself); 404 for a file of a kind with no
    preview and to those who may not read it."""
    s = services()
    row, objs = read.readable_files(s.db, s.settings, recid, identity())
    obj = next((o for o in objs if o["key"] == key), None)
    kind = file_previews.kind_of(key, obj["mimetype"] or "") if obj is not None else ""
    if obj is None or kind not in FRAMED:
        raise NotFound("This file has no preview.")
    if kind == "pdf":
        return _pdf(obj)
    path = s.files.path(obj["uri"])
    if kind == "table":
        if not file_previews.is_text_file(path):
            return _shown(recid, row, obj, "binary")
        return _table(recid, obj, objs)
    if kind in ("zip", "tar"):
        return _shown(recid, row, obj, kind, listing=file_previews.archive_listing(path, kind, obj["size"]))
    head = file_previews.text_head(path, file_previews.JSON_BYTES if kind == "json" else file_previews.TEXT_BYTES)
    if not head.is_text:
        return _shown(recid, row, obj, "binary")
    if kind == "json" and not head.truncated:
        tree = file_previews.json_html(head.text.encode())
        if tree is not None:
            return _shown(recid, row, obj, "json", tree=tree)
        kind = "text"  # JSON that does not parse is shown as it is
    if kind == "markdown":
        return _shown(recid, row, obj, "markdown", html=file_previews.markdown_html(head.text), truncated=head.truncated)
    text = head.text if len(head.text) <= file_previews.TEXT_BYTES else head.text[: file_previews.TEXT_BYTES]
    return _shown(recid, row, obj, "text", text=text, truncated=head.truncated or len(head.text) > len(text))


def _shown(recid: int, row: dict, obj: buckets.ObjectRow, kind: str, **content: Any) -> Response:
    """The preview page of a file that is not a table: `kind` says what `content` holds ("binary": nothing)."""
    download = urls.bucket_object("", row["bucket_id"], obj["key"]) + "?download=1"
    response = render_page("records/preview_file.html", key=obj["key"], recid=recid, kind=kind,
                           size=obj["size"], download_url=download, **content)  # fmt: skip
    _frameable(response)
    return response


def _table(recid: int, obj: buckets.ObjectRow, objs: list[buckets.ObjectRow]) -> Response:
    """A CSV or TSV file's rows, PREVIEW_ROWS a page from `?offset=`."""
    s = services()
    offset = _offset(request.args.get("offset"))
    types = table_previews.column_types(s.files, objs, obj)
    db_path = table_previews.preview_db(s.settings.INSTANCE_PATH, s.files, obj, types)
    page = query_preview(db_path, PREVIEW_ROWS, offset, {}, None)
    base = urls.record_preview_html("", recid, obj["key"]) + "?offset="
    pages = {"previous": base + str(max(offset - PREVIEW_ROWS, 0)) if offset > 0 else None,
             "next": base + str(offset + PREVIEW_ROWS) if offset + PREVIEW_ROWS < page["total"] else None}
    response = render_page("records/preview.html", key=obj["key"], recid=recid, page=page, links=pages,
                           first=offset + 1, last=offset + len(page["rows"]))  # fmt: skip
    _frameable(response)
    return response


def _offset(raw: str | None) -> int:
    try:
        offset = int(raw or 0)
    except ValueError:
        offset = -1
    if offset < 0:
        raise NotFound("No such page of the preview.")
    return offset


def _pdf(obj: buckets.ObjectRow) -> Response:
    """The PDF inline: the file download sends PDFs as attachments (a browser must not show an upload as a page
    of this site); here it goes to the browser's PDF viewer, which runs nothing of the site's."""
    path = services().files.path(obj["uri"])
    with open(path, "rb") as handle:
        if not handle.read(5) == b"%PDF-":
            raise NotFound("This file has no preview: it is not a PDF.")
    response = send_file(path, mimetype="application/pdf", conditional=True, etag=obj["checksum"].replace(":", "-"),
                         download_name=obj["key"], max_age=0)  # fmt: skip
    response.headers["Content-Disposition"] = f"inline; filename*=UTF-8''{quote(obj['key'])}"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.cache_control.private = True
    _frameable(response)
    return response


def _frameable(response: Response) -> None:
    """A preview may be framed by this site's pages only."""
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'; object-src 'none'")
