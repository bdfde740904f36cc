"""The OAI-PMH envelope: `<OAI-PMH>` with responseDate and request, headers, tokens and errors, as bytes.

The `<metadata>` of records is kept serialized (`serializers.oai.metadata_body`, stored in `renditions`): the tree holds a
numbered slot where each goes and `to_bytes` fills them, so a page parses no stored XML back."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from lxml import etree

from repository.oai.args import PREFIX_PATTERN, SET_PATTERN, datestamp
from serializers.oai import ENVELOPE_NS as NS
from serializers.oai import XSI
from serializers.text import sub, xml_text

SCHEMA = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
DC_NS = "http://purl.org/dc/elements/1.1/"
OAI_DC_NS = "http://www.openarchives.org/OAI/2.0/oai_dc/"
OAI_DC_SCHEMA = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
MIMETYPE = "text/xml; charset=utf-8"
_SLOT = "rendition"
_SLOTS = re.compile(rb"<!--rendition (\d+)-->")

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
        q("OAI-PMH"), {f"{{{XSI}}}schemaLocation": f"{NS} {SCHEMA}"}, nsmap={None: NS, "xsi": XSI}
    )
    sub(root, q("responseDate"), datestamp(now))
    attrib = {
        name: value for name, value in args.items()
        if name in _ATTRIBUTES and ((pattern := _ATTRIBUTES[name]) is None or pattern.fullmatch(value))
    }  # fmt: skip
    sub(root, q("request"), base_url, **attrib)
    return root


def error(root: etree._Element, code: str, message: str) -> None:
    sub(root, q("error"), message, code=code)


def header(identifier: str, stamp: datetime, sets: list[str], deleted: bool) -> bytes:
    """A record's `<header>` serialized as lxml writes it inside the envelope (whose root declares the OAI-PMH
    namespace as the default one); a tombstone's carries status="deleted". Written directly rather than through
    a tree: a page's hundred headers as elements were a tenth of its time."""
    parts = [b'<header status="deleted">' if deleted else b"<header>",
             b"<identifier>", _escaped(identifier), b"</identifier><datestamp>", datestamp(stamp).encode(),
             b"</datestamp>"]  # fmt: skip
    for spec in sets:
        parts += (b"<setSpec>", _escaped(spec), b"</setSpec>")
    parts.append(b"</header>")
    return b"".join(parts)


def _escaped(value: str) -> bytes:
    """Element text as lxml serializes it: the characters XML forbids dropped (`xml_text`), markup escaped."""
    text = xml_text(value)
    if "&" in text or "<" in text or ">" in text or "\r" in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    return text.encode()


def record(header_xml: bytes, body: bytes | None) -> bytes:
    """A `<record>`: its header and, unless a tombstone, its `<metadata>` holding `body` (a stored rendition)."""
    if body is None:
        return b"<record>" + header_xml + b"</record>"
    return b"".join((b"<record>", header_xml, b"<metadata>", body, b"</metadata></record>"))


def slot(parent: etree._Element, bodies: list[bytes], serialized: bytes) -> None:
    """Place `serialized` (elements as lxml writes them inside the envelope: stored renditions, headers) as the
    next child of `parent`: the tree keeps a numbered comment in its place, which `to_bytes` replaces with
    `bodies[n]`. A comment is the one thing record content cannot produce (lxml escapes "<" in text and
    attributes, and so does `header`), so no record can forge a slot."""
    bodies.append(serialized)
    parent.append(etree.Comment(f"{_SLOT} {len(bodies) - 1}"))


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


def to_bytes(root: etree._Element, bodies: Sequence[bytes] = ()) -> bytes:
    """The document, each `metadata_slot` filled with its body."""
    text = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    return _SLOTS.sub(lambda m: bodies[int(m.group(1))], text) if bodies else text
