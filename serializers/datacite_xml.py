"""DataCite 4.5 XML from the `datacite` package's JSON form: the package's tree, built in place.

`schema45.dump_etree` makes each element apart and appends it (lxml then reconciles namespaces node by node),
and leaves the children without a namespace, which XPath, validation and OAI-PMH need, so every tag had to be
rewritten after: together most of a record's rendering time. This follows the package's rules, in their order,
for the fields `datacite.datacite_json` gives; the golden files hold the package's output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datacite import schema45
from lxml import etree

NS = schema45.ns[None]


def resource_tree(data: dict[str, Any]) -> etree._Element:
    """`<resource>` as `schema45.dump_etree(data)` makes it, with every element in the kernel namespace."""
    root = etree.Element(_q("resource"), schema45.root_attribs, nsmap=schema45.ns)
    for key, build in _RULES:
        value = data.get(key)
        if value:
            build(root, value)
    return root


def _q(tag: str) -> str:
    return f"{{{NS}}}{tag}"


def _text(parent: etree._Element, tag: str, value: object, **attrib: str) -> etree._Element:
    """A child holding text, as the package's `E.tag(value, **attrib)` makes it ("" too, unlike None)."""
    if not isinstance(value, str):
        raise TypeError(f"bad argument type: {type(value).__name__}({value!r})")
    child = etree.SubElement(parent, _q(tag), attrib)
    child.text = value
    return child


def _set(element: etree._Element, name: str, value: Any) -> None:
    if value:
        element.set(name, value)


def _name_parts(parent: etree._Element, value: dict[str, Any], tag: str) -> None:
    name = _text(parent, tag, value["name"])
    _set(name, "nameType", value.get("nameType"))
    _set(name, "{xml}lang", value.get("lang"))
    for part in ("givenName", "familyName"):
        if value.get(part):
            _text(parent, part, value[part])
    for ident in value.get("nameIdentifiers", []):
        if ident.get("nameIdentifier"):
            child = _text(parent, "nameIdentifier", ident["nameIdentifier"])
            child.set("nameIdentifierScheme", ident["nameIdentifierScheme"])
            _set(child, "schemeURI", ident.get("schemeUri"))
    for aff in value.get("affiliation", []):
        if aff.get("name"):
            child = _text(parent, "affiliation", aff["name"])
            _set(child, "affiliationIdentifier", aff.get("affiliationIdentifier"))
            _set(child, "affiliationIdentifierScheme", aff.get("affiliationIdentifierScheme"))
            _set(child, "schemeURI", aff.get("schemeUri"))


def _alternate_identifiers(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("alternateIdentifiers"))
    for value in values:
        child = _text(parent, "alternateIdentifier", value["alternateIdentifier"])
        _set(child, "alternateIdentifierType", value.get("alternateIdentifierType"))


def _creators(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("creators"))
    for value in values:
        _name_parts(etree.SubElement(parent, _q("creator")), value, "creatorName")


def _titles(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("titles"))
    for value in values:
        child = etree.SubElement(parent, _q("title"))
        child.text = value["title"]
        _set(child, "{xml}lang", value.get("lang"))
        _set(child, "titleType", value.get("type"))
        _set(child, "titleType", value.get("titleType"))


def _publisher(root: etree._Element, value: dict[str, Any]) -> None:
    child = _text(root, "publisher", value.get("name"))
    _set(child, "publisherIdentifier", value.get("publisherIdentifier"))
    _set(child, "publisherIdentifierScheme", value.get("publisherIdentifierScheme"))
    _set(child, "schemeURI", value.get("schemeUri"))


def _subjects(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("subjects"))
    for value in values:
        child = _text(parent, "subject", value["subject"])
        _set(child, "{xml}lang", value.get("lang"))
        _set(child, "subjectScheme", value.get("subjectScheme"))
        _set(child, "schemeURI", value.get("schemeUri"))
        _set(child, "valueURI", value.get("valueUri"))


def _contributors(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("contributors"))
    for value in values:
        child = etree.SubElement(parent, _q("contributor"))
        _name_parts(child, value, "contributorName")
        _set(child, "contributorType", value.get("contributorType"))


def _dates(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("dates"))
    for value in values:
        child = _text(parent, "date", value["date"], dateType=value["dateType"])
        _set(child, "dateInformation", value.get("dateInformation"))


def _types(root: etree._Element, value: dict[str, Any]) -> None:
    child = etree.SubElement(root, _q("resourceType"))
    child.set("resourceTypeGeneral", value["resourceTypeGeneral"])
    child.text = value.get("resourceType")


def _related_identifiers(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("relatedIdentifiers"))
    for value in values:
        child = etree.SubElement(parent, _q("relatedIdentifier"))
        child.text = value["relatedIdentifier"]
        child.set("relationType", value["relationType"])
        for name, key in (("relatedMetadataScheme", "relatedMetadataScheme"), ("schemeURI", "schemeUri"),
                          ("schemeType", "schemeType"), ("resourceTypeGeneral", "resourceTypeGeneral"),
                          ("relatedIdentifierType", "relatedIdentifierType")):
            _set(child, name, value.get(key))


def _free_text(plural: str, singular: str) -> Callable[[etree._Element, list[str]], None]:
    def build(root: etree._Element, values: list[str]) -> None:
        parent = etree.SubElement(root, _q(plural))
        for value in values:
            etree.SubElement(parent, _q(singular)).text = value

    return build


def _rights_list(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("rightsList"))
    for value in values:
        if "rights" in value:
            child = _text(parent, "rights", value["rights"])
        else:
            child = etree.SubElement(parent, _q("rights"))
        _set(child, "rightsURI", value.get("rightsUri"))
        _set(child, "rightsIdentifierScheme", value.get("rightsIdentifierScheme"))
        _set(child, "rightsIdentifier", value.get("rightsIdentifier"))
        _set(child, "schemeURI", value.get("schemeUri"))
        _set(child, "{xml}lang", value.get("lang"))


def _descriptions(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("descriptions"))
    for value in values:
        child = _text(parent, "description", value["description"], descriptionType=value["descriptionType"])
        _set(child, "{xml}lang", value.get("lang"))


def _geo_locations(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("geoLocations"))
    for value in values:
        if set(value) - {"geoLocationPlace", "geoLocationPoint"}:
            raise ValueError("only places and points are written")  # the package has boxes and polygons
        child = etree.SubElement(parent, _q("geoLocation"))
        if value.get("geoLocationPlace"):
            _text(child, "geoLocationPlace", value["geoLocationPlace"])
        point = value.get("geoLocationPoint")
        if point:
            element = etree.SubElement(child, _q("geoLocationPoint"))
            _text(element, "pointLongitude", str(point["pointLongitude"]))
            _text(element, "pointLatitude", str(point["pointLatitude"]))


def _funding_references(root: etree._Element, values: list[dict[str, Any]]) -> None:
    parent = etree.SubElement(root, _q("fundingReferences"))
    for value in values:
        child = etree.SubElement(parent, _q("fundingReference"))
        _text(child, "funderName", value.get("funderName"))
        if value.get("funderIdentifier"):
            _set(_text(child, "funderIdentifier", value["funderIdentifier"]), "funderIdentifierType",
                 value.get("funderIdentifierType"))
        if value.get("awardNumber"):
            _set(_text(child, "awardNumber", value["awardNumber"]), "awardURI", value.get("awardUri"))
        if value.get("awardTitle"):
            _text(child, "awardTitle", value["awardTitle"])


# schema45's rules in its order ("schemaVersion" has none); datacite_json gives no other keys.
_RULES: tuple[tuple[str, Callable[[etree._Element, Any], object]], ...] = (
    ("alternateIdentifiers", _alternate_identifiers),
    ("creators", _creators),
    ("titles", _titles),
    ("publisher", _publisher),
    ("publicationYear", lambda root, value: _text(root, "publicationYear", value)),
    ("subjects", _subjects),
    ("contributors", _contributors),
    ("dates", _dates),
    ("language", lambda root, value: _text(root, "language", value)),
    ("types", _types),
    ("doi", lambda root, value: _text(root, "identifier", value, identifierType="DOI")),
    ("relatedIdentifiers", _related_identifiers),
    ("sizes", _free_text("sizes", "size")),
    ("formats", _free_text("formats", "format")),
    ("version", lambda root, value: _text(root, "version", value)),
    ("rightsList", _rights_list),
    ("descriptions", _descriptions),
    ("geoLocations", _geo_locations),
    ("fundingReferences", _funding_references),
)
