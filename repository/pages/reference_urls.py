"""The reference service's page addresses that people paste, sent to this service's own
(docs/reference-behaviour.md): `/record/<id>` (the older singular form) to the record's page, and a file's page
address `/records/<id>/files/<name>` (also under `/record/`) to the record's page with that file previewed, or with
`?download=1` to the file itself; a depositor's `/uploads/<id>` and `/me/uploads` to the deposit form and their
list of uploads. A file redirect is temporary (302): where it leads depends on who may read the files; the page
addresses are permanent (301)."""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Blueprint, request
from flask import redirect as redirect_to
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.errors import NotFound
from repository.records import read
from repository.web.request import identity, services

bp = Blueprint("reference_urls", __name__)


@bp.get("/record/<int:recid>")
def singular_record(recid: int) -> BaseResponse:
    query = "?" + request.query_string.decode() if request.query_string else ""
    return redirect_to(urls.record_html(services().settings.BASE_URL, recid) + query, 301)


@bp.get("/uploads/<int:dep_id>")
def upload_form(dep_id: int) -> BaseResponse:
    return redirect_to(urls.deposit_html(services().settings.BASE_URL, dep_id), 301)


@bp.get("/me/uploads")
def my_uploads() -> BaseResponse:
    return redirect_to(urls.deposits_html(services().settings.BASE_URL), 301)


@bp.get("/record/<int:recid>/files/<path:key>")
@bp.get("/records/<int:recid>/files/<path:key>")
def file_page(recid: int, key: str) -> BaseResponse:
    s = services()
    if request.args.get("download") not in ("1", "true"):
        page = urls.record_html(s.settings.BASE_URL, recid) + "?" + urlencode({"preview": key})
        return redirect_to(page, 301)
    try:
        found = read.read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, identity())
    except read.Moved as moved:  # a concept id: the file of its latest version
        return file_page(moved.recid, key)
    for item in (found.record or {}).get("files", []):
        if item["key"] == key:
            return redirect_to(item["links"]["self"], 302)
    raise NotFound(f"Record {recid} has no file {key!r} that you may read.")
