"""The OAI-PMH envelope: `<OAI-PMH>` with responseDate and request, headers, tokens and errors, as bytes.

The records of a page are written as bytes, their `<metadata>` content kept serialized (`metadata_body`, stored
in `renditions`): the tree holds a marker where they go and `to_bytes` splices them in."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from lxml import etree

from repository.oai.args import PREFIX_PATTERN, SET_PATTERN, datestamp
from serializers.context import RenderContext
from serializers.oai import OaiFormat, oai_format
from serializers.text import sub, xml_text

NS = "http://www.openarchives.org/OAI/2.0/"
SCHEMA = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
DC_NS = "http://purl.org/dc/elements/1.1/"
OAI_DC_NS = "http://www.openarchives.org/OAI/2.0/oai_dc/"
OAI_DC_SCHEMA = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
MIMETYPE = "text/xml; charset=utf-8"
_NSMAP = {None: NS, "xsi": XSI}  # the envelope root's declarations
_MARK = "records"
_RECORDS = f"<!--{_MARK}-->".encode()  # markup cannot occur in text or attributes, where "<" is escaped
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})

_DATESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?")
# `<request>` attributes and what the schema lets each hold; anything else is left out rather than made invalid.
_ATTRIBUTES = {
    "verb": None, "identifier": re.compile(r"\S+"), "metadataPrefix": PREFIX_PATTERN, "from": _DATESTAMP,
    "until": _DATESTAMP, "set": SET_PATTERN, "resumptionToken": re.compile(r".+", re.S),
}  # fmt: skip


def q(name: str) -> str:
    """An element name in the OAI-PMH namespace."""
    return f"{{{NS}}}{name}"


def envelope(now: datetime, base_url: str, args: dict[str, str]) -> etree._Element:
    """`<OAI-PMH>` with responseDate and the request echoed (only the attributes the schema accepts)."""
    root = etree.Element(
        q("OAI-PMH"), {f"{{{XSI}}}schemaLocation": f"{NS} {SCHEMA}"}, nsmap=_NSMAP
    )
    sub(root, q("responseDate"), datestamp(now))
    attrib = {
        name: value for name, value in args.items()
        if name in _ATTRIBUTES and (_ATTRIBUTES[name] is None or _ATTRIBUTES[name].fullmatch(value))
    }  # fmt: skip
    sub(root, q("request"), base_url, **attrib)
    return root


def error(root: etree._Element, code: str, message: str) -> None:
    sub(root, q("error"), message, code=code)


def record(
    identifier: str, stamp: datetime, sets: list[str], deleted: bool, body: bytes | None, whole: bool = True
) -> bytes:
    """A `<record>` holding its `<header>` (a tombstone's has status="deleted") and `body` as `<metadata>`, or
    the header alone (`whole=False`, ListIdentifiers): the bytes lxml writes for the same elements."""
    parts = ['<header status="deleted">' if deleted else "<header>", "<identifier>", _escape(identifier),
             "</identifier><datestamp>", datestamp(stamp), "</datestamp>"]  # fmt: skip
    for spec in sets:
        parts += ("<setSpec>", _escape(spec), "</setSpec>")
    parts.append("</header>")
    header = "".join(parts).encode()
    if not whole:
        return header
    if body is None:
        return b"<record>" + header + b"</record>"
    return b"".join((b"<record>", header, b"<metadata>", body, b"</metadata></record>"))


def _escape(text: str) -> str:
    """Element text as libxml2 writes it in UTF-8 (after removing what XML 1.0 forbids, as `sub` does)."""
    return xml_text(text).translate(_TEXT_ESCAPES)


def records_here(parent: etree._Element) -> None:
    """Mark where `to_bytes` puts the records (before a resumptionToken appended after this)."""
    parent.append(etree.Comment(_MARK))


def resumption(
    parent: etree._Element, token: str | None, expires: datetime | None, size: int, cursor: int
) -> None:
    """`<resumptionToken>`; empty on the last page of a list that had tokens (the protocol's end marker)."""
    attrib = {"completeListSize": str(size), "cursor": str(cursor)}
    if token is not None and expires is not None:
        attrib["expirationDate"] = datestamp(expires)
    sub(parent, q("resumptionToken"), token, **attrib)


def dublin_core(parent: etree._Element, description: str) -> None:
    """An `<oai_dc:dc>` holding one description (ListSets' setDescription)."""
    dc = etree.SubElement(
        parent, f"{{{OAI_DC_NS}}}dc", {f"{{{XSI}}}schemaLocation": f"{OAI_DC_NS} {OAI_DC_SCHEMA}"},
        nsmap={"oai_dc": OAI_DC_NS, "dc": DC_NS, "xsi": XSI},
    )  # fmt: skip
    sub(dc, f"{{{DC_NS}}}description", description)


def metadata_body(element: etree._Element) -> bytes:
    """`element` serialized as it is inside an envelope's `<metadata>`: namespaces the envelope's root declares
    (xsi) are not declared again, exactly as when the element is appended to the envelope itself."""
    root = etree.Element(q("OAI-PMH"), nsmap=_NSMAP)
    etree.SubElement(root, q("metadata")).append(element)
    text = etree.tostring(root, encoding="UTF-8")
    return text[text.index(b"<metadata>") + len(b"<metadata>") : text.rindex(b"</metadata>")]


def rendition_name(fmt: OaiFormat) -> str:
    """The format's name in the renditions table."""
    return f"oai:{fmt.prefix}"


def renderers(prefixes: list[str]) -> list[tuple[str, Callable[[dict[str, Any], RenderContext], bytes]]]:
    """(rendition name, renderer) of each metadataPrefix, for `renditions.rendered`."""
    formats = [oai_format(prefix) for prefix in prefixes]
    return [(rendition_name(fmt), metadata_renderer(fmt)) for fmt in formats if fmt is not None]


def metadata_renderer(fmt: OaiFormat) -> Callable[[dict[str, Any], RenderContext], bytes]:
    """record, ctx -> the body of its `<metadata>` in `fmt`."""

    def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
        return metadata_body(fmt.element(record, ctx))

    return render


def to_bytes(root: etree._Element, records: Sequence[bytes] = ()) -> bytes:
    """The document, with `records` where `records_here` marked."""
    text = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    before, mark, after = text.partition(_RECORDS)
    return b"".join((before, *records, after)) if mark else text
