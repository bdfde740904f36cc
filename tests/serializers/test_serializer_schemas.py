"""Every XML output of every reference record validates offline against its official XSD."""

from __future__ import annotations

import pytest
from helpers.xsd import OAI_NS, validate, validate_oai
from lxml import etree
from reference_records import all_records

from serializers import OAI_FORMATS, REGISTRY, oai_format

NAMES = sorted(all_records())
XML_FORMATS = {"marcxml": "marc21", "datacite": "datacite4", "datacite3": "datacite3", "dc": "oai_dc"}
# What a whole OAI-PMH response needs imported to check each prefix's <metadata> content.
OAI_SCHEMAS = {
    "oai_registry": ("oai_datacite", "datacite4"),
    "oai_registry4": ("oai_datacite", "datacite4"),
    "oai_registry3": ("oai_datacite", "datacite3"),
    "registry": ("datacite4",),
    "registry3": ("datacite3",),
    "oai_dc": ("oai_dc",),
    "marc21": ("marc21",),
}


@pytest.mark.parametrize("fmt", sorted(XML_FORMATS))
@pytest.mark.parametrize("name", NAMES)
def test_record_validates(records, ctx, name, fmt):
    validate(REGISTRY[fmt].render(records[name], ctx), XML_FORMATS[fmt])


def test_marcxml_collection_validates(records, ctx):
    validate(REGISTRY["marcxml"].render_page(list(records.values()), ctx), "marc21")


@pytest.mark.parametrize("fmt", ["datacite", "datacite3", "dc"])
def test_page_children_validate(records, ctx, fmt):
    page = etree.fromstring(REGISTRY[fmt].render_page(list(records.values()), ctx))
    assert page.tag == "records" and len(page) == len(records)
    for child in page:
        validate(child, XML_FORMATS[fmt])


def _oai_response(elements: list[etree._Element]) -> etree._Element:
    """A minimal ListRecords response around the given <metadata> contents."""
    root = etree.Element(f"{{{OAI_NS}}}OAI-PMH", nsmap={None: OAI_NS})
    etree.SubElement(root, f"{{{OAI_NS}}}responseDate").text = "2026-11-22T03:00:00Z"
    etree.SubElement(root, f"{{{OAI_NS}}}request", verb="ListRecords").text = "https://repo.example.org/oai2d"
    listing = etree.SubElement(root, f"{{{OAI_NS}}}ListRecords")
    for number, element in enumerate(elements, start=1):
        record = etree.SubElement(listing, f"{{{OAI_NS}}}record")
        header = etree.SubElement(record, f"{{{OAI_NS}}}header")
        etree.SubElement(header, f"{{{OAI_NS}}}identifier").text = f"oai:repo.example.org:{number}"
        etree.SubElement(header, f"{{{OAI_NS}}}datestamp").text = "2024-03-02T11:30:45Z"
        etree.SubElement(record, f"{{{OAI_NS}}}metadata").append(element)
    return root


@pytest.mark.parametrize("prefix", sorted(OAI_FORMATS))
def test_oai_response_validates(records, ctx, prefix):
    fmt = OAI_FORMATS[prefix]
    response = _oai_response([fmt.element(r, ctx) for r in records.values()])
    validate_oai(response, *OAI_SCHEMAS[prefix])
    metadata = response.find(f".//{{{OAI_NS}}}metadata")
    assert metadata[0].tag.startswith(f"{{{fmt.namespace}}}")


def test_oai_driver_checks_metadata_content(records, ctx):
    # <metadata> is strict: an element no imported schema declares fails.
    response = _oai_response([etree.Element("{urn:example:unknown}thing")])
    with pytest.raises(AssertionError):
        validate_oai(response, "oai_dc")
    # The wrapper's payload is untyped, so the kernel inside is checked against the imported kernel schema.
    wrapped = oai_format("oai_datacite").element(records["article"], ctx)
    resource = wrapped.find(".//{http://datacite.org/schema/kernel-4}resource")
    resource.remove(resource.find("{http://datacite.org/schema/kernel-4}titles"))
    with pytest.raises(AssertionError, match="titles"):
        validate_oai(_oai_response([wrapped]), "oai_datacite", "datacite4")


def test_invalid_output_is_caught(records, ctx):
    tree = etree.fromstring(REGISTRY["datacite"].render(records["article"], ctx))
    tree.remove(tree.find("{http://datacite.org/schema/kernel-4}titles"))
    with pytest.raises(AssertionError, match="titles"):
        validate(tree, "datacite4")
