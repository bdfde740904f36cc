"""DataCite metadata kernel 3.1, derived from the kernel 4.5 JSON form (OAI `oai_registry3`, `registry3`)."""

from __future__ import annotations

from typing import Any

from lxml import etree

from .context import RenderContext
from .datacite import datacite_json
from .text import page_document, sub

NS = "http://datacite.org/schema/kernel-3"
SCHEMA = "http://schema.datacite.org/meta/kernel-3/metadata.xsd"
VERSION = "3.1"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"

_RELATIONS = frozenset(
    "IsCitedBy Cites IsSupplementTo IsSupplementedBy IsContinuedBy Continues IsNewVersionOf IsPreviousVersionOf "
    "IsPartOf HasPart IsReferencedBy References IsDocumentedBy Documents IsCompiledBy Compiles IsVariantFormOf "
    "IsOriginalFormOf IsIdenticalTo HasMetadata IsMetadataFor Reviews IsReviewedBy IsDerivedFrom IsSourceOf".split()
)
# Kernel 3.1 predates version relations; the reference maps them onto part relations.
_RELATION_MAP = {"IsVersionOf": "IsPartOf", "HasVersion": "HasPart"}
_ID_TYPES = frozenset("ARK arXiv bibcode DOI EAN13 EISSN Handle ISBN ISSN ISTC LISSN LSID PMID PURL UPC URL URN".split())
_DATE_TYPES = frozenset("Accepted Available Collected Copyrighted Created Issued Submitted Updated Valid".split())
_DESCRIPTION_TYPES = frozenset("Abstract Methods SeriesInformation TableOfContents Other".split())
# resourceTypeGeneral of kernel 3.1; the finer kernel-4.5 terms it lacks (JournalArticle, Book, ...) are all text.
_GENERAL_TYPES = frozenset(
    "Audiovisual Collection Dataset Event Image InteractiveResource Model PhysicalObject Service Software Sound "
    "Text Workflow Other".split()
)


def _e(parent: etree._Element, name: str, value: Any = None, **attrib: str) -> etree._Element:
    return sub(parent, f"{{{NS}}}{name}", value, **{k: v for k, v in attrib.items() if v})


def _person(parent: etree._Element, tag: str, person: dict[str, Any], **attrib: str) -> None:
    elem = _e(parent, tag, **attrib)
    _e(elem, f"{tag}Name", person["name"])
    for ident in person.get("nameIdentifiers", [])[:1]:  # 3.1 allows one name identifier
        _e(elem, "nameIdentifier", ident["nameIdentifier"], nameIdentifierScheme=ident["nameIdentifierScheme"],
           schemeURI=ident.get("schemeUri", ""))
    for aff in person.get("affiliation", []):
        _e(elem, "affiliation", aff["name"])


def _contributors(root: etree._Element, data: dict[str, Any], funders: list[dict[str, Any]]) -> None:
    if not data.get("contributors") and not funders:
        return
    group = _e(root, "contributors")
    for person in data.get("contributors", []):
        _person(group, "contributor", person, contributorType=person["contributorType"])
    for ref in funders:
        elem = _e(group, "contributor", contributorType="Funder")
        _e(elem, "contributorName", ref["funderName"])
        funder = ref.get("funderIdentifier", "").removeprefix("https://doi.org/")
        _e(elem, "nameIdentifier", f"{funder}::{ref['awardNumber']}" if funder else ref["awardNumber"],
           nameIdentifierScheme="info")


def _relations(root: etree._Element, data: dict[str, Any]) -> None:
    items = []
    for rel in data.get("relatedIdentifiers", []):
        relation = _RELATION_MAP.get(rel["relationType"], rel["relationType"])
        if relation in _RELATIONS and rel["relatedIdentifierType"] in _ID_TYPES:
            items.append((rel, relation))
    if items:
        group = _e(root, "relatedIdentifiers")
        for rel, relation in items:
            _e(group, "relatedIdentifier", rel["relatedIdentifier"], relatedIdentifierType=rel["relatedIdentifierType"],
               relationType=relation)


def resource_element(record: dict[str, Any], ctx: RenderContext) -> etree._Element:
    """`<resource>` of DataCite kernel 3.1 for one record."""
    data = datacite_json(record, ctx)
    root = etree.Element(f"{{{NS}}}resource", {f"{{{_XSI}}}schemaLocation": f"{NS} {SCHEMA}"},
                         nsmap={None: NS, "xsi": _XSI})
    _e(root, "identifier", data["doi"], identifierType="DOI")
    creators = _e(root, "creators")
    for person in data["creators"]:
        _person(creators, "creator", person)
    _e(_e(root, "titles"), "title", data["titles"][0]["title"])
    _e(root, "publisher", data["publisher"]["name"])
    _e(root, "publicationYear", data["publicationYear"])
    if data.get("subjects"):
        group = _e(root, "subjects")
        for subject in data["subjects"]:
            _e(group, "subject", subject["subject"], subjectScheme=subject.get("subjectScheme", ""),
               schemeURI=subject.get("valueUri", ""))
    _contributors(root, data, data.get("fundingReferences", []))
    dates = [d for d in data["dates"] if d["dateType"] in _DATE_TYPES]
    group = _e(root, "dates")
    for date in dates:
        _e(group, "date", date["date"], dateType=date["dateType"])
    if data.get("language"):
        _e(root, "language", data["language"])
    general = data["types"]["resourceTypeGeneral"]
    _e(root, "resourceType", data["types"]["resourceType"],
       resourceTypeGeneral=general if general in _GENERAL_TYPES else "Text")
    group = _e(root, "alternateIdentifiers")
    for alt in data["alternateIdentifiers"]:
        _e(group, "alternateIdentifier", alt["alternateIdentifier"],
           alternateIdentifierType=alt["alternateIdentifierType"])
    _relations(root, data)
    for plural, singular in (("sizes", "size"), ("formats", "format")):
        if data.get(plural):
            group = _e(root, plural)
            for value in data[plural]:
                _e(group, singular, value)
    if data.get("version"):
        _e(root, "version", data["version"])
    group = _e(root, "rightsList")
    for rights in data["rightsList"]:
        _e(group, "rights", rights["rights"], rightsURI=rights.get("rightsUri", ""))
    descriptions = [d for d in data.get("descriptions", []) if d["descriptionType"] in _DESCRIPTION_TYPES]
    if descriptions:
        group = _e(root, "descriptions")
        for desc in descriptions:
            _e(group, "description", desc["description"], descriptionType=desc["descriptionType"])
    if data.get("geoLocations"):
        group = _e(root, "geoLocations")
        for geo in data["geoLocations"]:
            elem = _e(group, "geoLocation")
            point = geo.get("geoLocationPoint")
            if point:
                _e(elem, "geoLocationPoint", f"{point['pointLatitude']} {point['pointLongitude']}")
            _e(elem, "geoLocationPlace", geo["geoLocationPlace"])
    return root


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as DataCite 3.1 XML."""
    return etree.tostring(resource_element(record, ctx), xml_declaration=True, encoding="UTF-8", pretty_print=True)


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page: `<records>` holding one `<resource>` per record."""
    return page_document([resource_element(r, ctx) for r in records])
