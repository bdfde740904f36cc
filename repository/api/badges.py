"""`/badge/doi/<doi>.svg`: the DOI badges README files embed (`links.badge`, `links.conceptbadge`), as SVG."""

from __future__ import annotations

import hashlib
import re

from flask import Blueprint, Response, request
from lxml import etree
from werkzeug.wrappers import Response as BaseResponse

from repository.errors import Gone, NotFound
from repository.records.build import doi_state
from repository.web.openapi import doc
from repository.web.request import services

bp = Blueprint("badges", __name__, url_prefix="/badge")

SVG_NS = "http://www.w3.org/2000/svg"
MIMETYPE = "image/svg+xml"
MAX_AGE = 3600  # a badge changes only if its record is taken down
_DOI = re.compile(r"10\.[0-9]{4,9}/\S{1,200}")
# Badges are images, never documents: nothing in one may run or load anything, even if opened directly.
_HEADERS = {
    "Cache-Control": f"public, max-age={MAX_AGE}",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    "X-Content-Type-Options": "nosniff",
}


def _width(text: str) -> int:
    """The width of `text` in 11px Verdana, near enough for a badge (wide glyphs count double)."""
    return 10 + sum(13 if ord(ch) > 0x2E7F else 7 for ch in text)


def badge_svg(label: str, value: str, color: str = "#1f73b7") -> bytes:
    """A two-part flat badge; `label` and `value` are text nodes written by lxml, so any text is escaped."""
    left, right = _width(label), _width(value)
    svg = etree.Element(f"{{{SVG_NS}}}svg", {"width": str(left + right), "height": "20", "role": "img",
                                            "aria-label": f"{label}: {value}"}, nsmap={None: SVG_NS})  # fmt: skip
    etree.SubElement(svg, f"{{{SVG_NS}}}title").text = f"{label}: {value}"
    etree.SubElement(svg, f"{{{SVG_NS}}}rect", width=str(left), height="20", fill="#555")
    etree.SubElement(svg, f"{{{SVG_NS}}}rect", x=str(left), width=str(right), height="20", fill=color)
    text = etree.SubElement(svg, f"{{{SVG_NS}}}g", {"fill": "#fff", "text-anchor": "middle", "font-size": "11",
                                                     "font-family": "Verdana,DejaVu Sans,sans-serif"})
    for x, content in ((left / 2, label), (left + right / 2, value)):
        etree.SubElement(text, f"{{{SVG_NS}}}text", x=f"{x:g}", y="14").text = content
    return etree.tostring(svg, xml_declaration=False, encoding="UTF-8")


@bp.get("/doi/<path:doi>.svg")
@doc(
    tags=["badges"],
    responses={
        "200": {"description": "The DOI badge (SVG), with ETag and Cache-Control", "content": {MIMETYPE: {}}},
        "304": {"description": "If-None-Match matched the badge's ETag"},
        "404": {"description": "No record or concept of this repository has this DOI"},
        "410": {"description": "Every record this DOI names was taken down"},
    },
)
def doi_badge(doi: str) -> BaseResponse:
    """The badge of one of this repository's DOIs (a record's or a concept's): 404 for any other DOI."""
    doi = doi.lower()  # DOIs are case-insensitive; this repository keeps them in lower case
    if not _DOI.fullmatch(doi):
        raise NotFound("This repository has no record with that DOI.")
    with services().db.read() as conn:
        state = doi_state(conn, doi)
    if state is None:
        raise NotFound("This repository has no record with that DOI.")
    if state == "deleted":
        raise Gone("The record with that DOI has been deleted.")
    body = badge_svg("DOI", doi)
    response = Response(body, mimetype=MIMETYPE, headers=_HEADERS)
    response.set_etag(hashlib.sha256(body).hexdigest()[:32])
    return response.make_conditional(request)
