"""A record's export in one format, shown as text in the site's layout: `/records/<id>/export/<format>`, with a link
that downloads it under a name with the format's extension (docs/researchers/record-page.md#exports)."""

from __future__ import annotations

from flask import Blueprint, redirect
from werkzeug.wrappers import Response as BaseResponse

import serializers
from repository import urls
from repository.errors import NotFound
from repository.pages.base import render_page
from repository.pages.records import FORMAT_LABELS
from repository.records import read
from repository.records.file_details import with_file_details
from repository.records.render_context import render_context
from repository.web.openapi import doc
from repository.web.request import identity, services

bp = Blueprint("record_exports", __name__)
SHOWN_CHARS = 2_000_000  # an export longer than this (a record of many thousand files) is shown cut, and downloaded whole


@bp.get("/records/<int:recid>/export/<name>")
@doc(tags=["pages"], responses={"200": {"description": "The export as text in a page", "content": {"text/html": {}}},
                                "404": {"description": "No such record or format, or one that does not describe "
                                                       "this kind of record"},
                                "410": {"description": "Taken down"}})  # fmt: skip
def export_page(recid: int, name: str) -> BaseResponse:
    """The record in format `name` as text (200), with its download link; 404 for an unknown record or format, or
    a format that describes other kinds of record; 410 for a record taken down; 301 for a concept id."""
    serializer = serializers.REGISTRY.get(name)
    if serializer is None:
        raise NotFound("No such export format.")
    s = services()
    try:
        found = read.read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, identity())
    except read.Moved as moved:
        return redirect(urls.record_export_html(s.settings.BASE_URL, moved.recid, name), 301)
    record = found.record
    assert record is not None  # no If-None-Match is asked about
    if not serializer.applies(record):
        raise NotFound("This format does not describe this kind of record.")
    if serializer.file_details:
        record = with_file_details(s.db, s.files, record)
    text = serializer.render(record, render_context(s.settings, s.db)).decode()
    label = FORMAT_LABELS.get(name, name)
    api = urls.record_api("", record["id"])
    return render_page("records/export.html", record=record, label=label, text=text[:SHOWN_CHARS],
                       cut=len(text) > SHOWN_CHARS, filename=serializer.filename(record),
                       download_url=f"{api}?format={name}&download=1", raw_url=f"{api}?format={name}")  # fmt: skip
