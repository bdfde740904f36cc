"""The OAI-PMH envelope: `<OAI-PMH>` with responseDate and request, headers, tokens and errors, as bytes."""

from __future__ import annotations

import re
from datetime import datetime

from lxml import etree

from repository.oai.args import PREFIX_PATTERN, SET_PATTERN, datestamp
from serializers.text import sub

NS = "http://www.openarchives.org/OAI/2.0/"
SCHEMA = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
DC_NS = "http://purl.org/dc/elements/1.1/"
OAI_DC_NS = "http://www.openarchives.org/OAI/2.0/oai_dc/"
OAI_DC_SCHEMA = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
MIMETYPE = "text/xml; charset=utf-8"

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
        if name in _ATTRIBUTES and (_ATTRIBUTES[name] is None or _ATTRIBUTES[name].fullmatch(value))
    }  # fmt: skip
    sub(root, q("request"), base_url, **attrib)
    return root


def error(root: etree._Element, code: str, message: str) -> None:
    sub(root, q("error"), message, code=code)


def header(parent: etree._Element, identifier: str, stamp: datetime, sets: list[str], deleted: bool) -> None:
    """A record's `<header>`; a tombstone's carries status="deleted"."""
    element = sub(parent, q("header"), **({"status": "deleted"} if deleted else {}))
    sub(element, q("identifier"), identifier)
    sub(element, q("datestamp"), datestamp(stamp))
    for spec in sets:
        sub(element, q("setSpec"), spec)


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


def to_bytes(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")
