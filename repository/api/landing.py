"""HTML pages behind `links.html`: a record's landing page (with schema.org JSON-LD and citation meta tags),
and a deposition's page, which points its owner at the API."""

from __future__ import annotations

from flask import Blueprint, Response, redirect, render_template

import serializers
from repository.records import build as records_mod
from repository.records.access import can_read_files
from repository.records.render_context import render_context
from repository.web.request import identity, services

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
def record_page(recid: int) -> Response:
    """The record's landing page (HTML); a concept id redirects to the latest version."""
    from repository.api.records import Moved, record_row
    from repository.vocabularies.lookups import DatabaseLookups

    s = services()
    try:
        row = record_row(recid)
    except Moved as moved:
        return redirect(f"{s.settings.BASE_URL}/records/{moved.recid}", 301)
    with s.db.read() as conn:
        record = records_mod.build_records(
            conn, s.settings, DatabaseLookups(conn), [row], with_files=can_read_files(row, identity())
        )[0]
    s.extras["stats"].view(recid)
    jsonld = script_safe(serializers.REGISTRY["jsonld"].render(record, render_context(s.settings, s.db)).decode())
    html = render_template(
        "record.html", record=record, m=record["metadata"], jsonld=jsonld, exports=EXPORTS,
        repository_name=s.settings.REPOSITORY_NAME,
    )
    return Response(html, mimetype="text/html")


@bp.get("/records/<int:recid>/latest")
def latest_page(recid: int) -> Response:
    """`links.latest_html`: 302 to the page of the newest published version of the record's concept."""
    from repository.api.records import newest_version

    return redirect(f"{services().settings.BASE_URL}/records/{newest_version(recid)}", 302)


@bp.get("/deposit/<int:dep_id>")
def deposit_page(dep_id: int) -> Response:
    """A deposition's page: drafts are edited through the API, so this points at its API resource."""
    return redirect(f"{services().settings.BASE_URL}/api/deposit/depositions/{dep_id}", 303)
