"""HTML pages behind `links.html`: a record's landing page (with schema.org JSON-LD and citation meta tags),
and the latest version's redirect. (A deposition's page is repository.pages.deposit.)"""

from __future__ import annotations

from flask import Blueprint, Response, redirect, render_template
from werkzeug.wrappers import Response as BaseResponse

import serializers
from repository.records import read
from repository.records.render_context import render_context
from repository.web.request import identity, services
from repository.web.usage import reader_visit

bp = Blueprint("landing", __name__, template_folder="../templates")

EXPORTS = (("bibtex", "BibTeX"), ("csl", "CSL JSON"), ("datacite", "DataCite XML"), ("dc", "Dublin Core"),
           ("marcxml", "MARCXML"), ("jsonld", "JSON-LD"), ("json", "JSON"))


# Inside <script>, "</script" ends the element and "<!--" followed by "<script" makes an HTML5 parser swallow the
# rest of the page: no "<" may appear at all. JSON has these characters only inside strings, where the \u escape
# means the same; ">" and "&" go too, and the line separators old JavaScript parsers refuse.
_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                                 "\u2029": "\\u2029"})


def script_safe(json_text: str) -> str:
    """JSON text that means the same and can be placed inside an HTML <script> element as it is."""
    return json_text.translate(_SCRIPT_ESCAPES)


@bp.get("/records/<int:recid>")
def record_page(recid: int) -> BaseResponse:
    """The record's landing page (HTML); a concept id redirects to the latest version."""
    s = services()
    try:
        found = read.read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, identity(),
                                 visit=reader_visit())
    except read.Moved as moved:
        return redirect(f"{s.settings.BASE_URL}/records/{moved.recid}", 301)
    record = found.record
    assert record is not None  # no ETag to match: always read
    jsonld = script_safe(serializers.REGISTRY["jsonld"].render(record, render_context(s.settings, s.db)).decode())
    html = render_template(
        "record.html", record=record, m=record["metadata"], jsonld=jsonld, exports=EXPORTS,
        repository_name=s.settings.REPOSITORY_NAME,
    )
    return Response(html, mimetype="text/html")


@bp.get("/records/<int:recid>/latest")
def latest_page(recid: int) -> BaseResponse:
    """`links.latest_html`: 302 to the page of the newest published version of the record's concept."""
    newest = read.newest_version(services().db, recid)
    return redirect(f"{services().settings.BASE_URL}/records/{newest}", 302)
