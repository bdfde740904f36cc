"""Offline XML Schema loading for the tests: http schema URLs map to the copies in tests/schemas."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from lxml import etree

# Copies of the official schemas (from shared/schemas, see tests/schemas/SOURCES.md) kept with the tests, so the
# checks run offline wherever the repository is cloned.
SCHEMAS = Path(os.environ.get("SCHEMAS_DIR", Path(__file__).resolve().parent.parent / "schemas"))
HERE = Path(__file__).resolve().parent.parent / "serializers"  # oai_datacite.xsd lives with the serializer tests

# Official schema URLs -> local copies; xml.xsd is cited under three URLs by different schemas.
URL_MAP = {
    "http://www.w3.org/2001/xml.xsd": SCHEMAS / "w3c/xml.xsd",
    "http://www.w3.org/2001/03/xml.xsd": SCHEMAS / "w3c/xml.xsd",
    "http://www.w3.org/2009/01/xml.xsd": SCHEMAS / "w3c/xml.xsd",
    "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd": SCHEMAS / "oai-pmh/OAI-PMH.xsd",
    "http://www.openarchives.org/OAI/2.0/oai_dc.xsd": SCHEMAS / "oai-pmh/oai_dc.xsd",
    "http://dublincore.org/schemas/xmls/simpledc20021212.xsd": SCHEMAS / "oai-pmh/simpledc20021212.xsd",
    "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd": SCHEMAS / "marc21/MARC21slim.xsd",
    "http://schema.datacite.org/meta/kernel-4.5/metadata.xsd": SCHEMAS / "datacite/kernel-4.5/metadata.xsd",
    "http://schema.datacite.org/meta/kernel-3.1/metadata.xsd": SCHEMAS / "datacite/kernel-3.1/metadata.xsd",
    "http://schema.datacite.org/meta/kernel-3/metadata.xsd": SCHEMAS / "datacite/kernel-3.1/metadata.xsd",
    "http://www.openarchives.org/OAI/2.0/oai-identifier.xsd": SCHEMAS / "oai-pmh/oai-identifier.xsd",
    # Not among the shared official copies: a reconstruction kept next to the tests (see its header).
    "http://schema.datacite.org/oai/oai-1.0/oai.xsd": HERE / "oai_datacite.xsd",
}

# Schema file per format namespace, for single documents and for OAI-PMH driver schemas.
FORMATS = {
    "marc21": ("http://www.loc.gov/MARC21/slim", "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd"),
    "oai_dc": ("http://www.openarchives.org/OAI/2.0/oai_dc/", "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"),
    "datacite4": ("http://datacite.org/schema/kernel-4", "http://schema.datacite.org/meta/kernel-4.5/metadata.xsd"),
    "datacite3": ("http://datacite.org/schema/kernel-3", "http://schema.datacite.org/meta/kernel-3.1/metadata.xsd"),
    "oai_datacite": ("http://schema.datacite.org/oai/oai-1.0/", "http://schema.datacite.org/oai/oai-1.0/oai.xsd"),
}


class LocalResolver(etree.Resolver):
    """Serve known http schema URLs from local files; everything else is left to fail offline."""

    def resolve(self, system_url, public_id, context):  # noqa: D102 (lxml API)
        path = URL_MAP.get(system_url)
        return self.resolve_filename(str(path), context) if path else None


def _parser() -> etree.XMLParser:
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(LocalResolver())
    return parser


def _local(url: str) -> str:
    return URL_MAP[url].as_uri()


@cache
def schema(*formats: str) -> etree.XMLSchema:
    """The XMLSchema of FORMATS names, e.g. ("marc21",) or ("oai_datacite", "datacite3") (cached)."""
    if len(formats) == 1:
        return etree.XMLSchema(etree.parse(str(URL_MAP[FORMATS[formats[0]][1]]), _parser()))
    return _driver(list(formats), root_ns=None)


def _driver(formats: list[str], root_ns: str | None) -> etree.XMLSchema:
    imports = "".join(
        f'<xs:import namespace="{FORMATS[f][0]}" schemaLocation="{_local(FORMATS[f][1])}"/>' for f in formats
    )
    if root_ns:
        imports = f'<xs:import namespace="{root_ns}" schemaLocation="{_local(OAI_URL)}"/>' + imports
    text = f'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">{imports}</xs:schema>'
    return etree.XMLSchema(etree.fromstring(text.encode(), _parser(), base_url=str(HERE / "driver.xsd")))


OAI_NS = "http://www.openarchives.org/OAI/2.0/"
OAI_URL = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"


@cache
def oai_schema(*formats: str) -> etree.XMLSchema:
    """A driver schema validating a whole OAI-PMH response whose `<metadata>` holds the given formats.

    OAI-PMH.xsd is strict on `<metadata>`, so its content needs a declaration: the driver imports both.
    For oai_datacite pass the wrapper and the kernel, e.g. oai_schema("oai_datacite", "datacite4").
    """
    return _driver(list(formats), root_ns=OAI_NS)


def validate_oai(doc: bytes | etree._Element, *formats: str) -> None:
    """Raise AssertionError unless `doc` is a valid OAI-PMH response carrying the given formats."""
    tree = etree.fromstring(doc, _parser()) if isinstance(doc, bytes) else doc
    checker = oai_schema(*formats)
    if not checker.validate(tree):
        raise AssertionError("\n".join(str(e) for e in checker.error_log))


def validate(doc: bytes | etree._Element, *formats: str) -> None:
    """Raise AssertionError with the schema's messages unless `doc` is valid against `schema(*formats)`."""
    tree = etree.fromstring(doc, _parser()) if isinstance(doc, bytes) else doc
    checker = schema(*formats)
    if not checker.validate(tree):
        raise AssertionError("\n".join(str(e) for e in checker.error_log))
