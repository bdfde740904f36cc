"""DataCite metadata kernel 4.5 (docs/reference-behaviour.md#datacite): the `datacite` package's JSON form, and its XML tree."""

from __future__ import annotations

import json
from typing import Any

from lxml import etree

from repository import urls

from .context import RenderContext
from .datacite_xml import resource_tree
from .text import (
    alternate_identifiers,
    cleaned,
    language_alpha2,
    license_info,
    page_document,
    related_identifiers,
    split_name,
    year_of,
)
from .vocabulary import TYPES, type_info

NS = "http://datacite.org/schema/kernel-4"
SCHEMA = "http://schema.datacite.org/meta/kernel-4.5/metadata.xsd"
VERSION = "4.5"

_ID_TYPES = {
    "doi": "DOI", "ark": "ARK", "handle": "Handle", "isbn": "ISBN", "issn": "ISSN", "eissn": "EISSN",
    "lissn": "LISSN", "ean13": "EAN13", "istc": "ISTC", "lsid": "LSID", "purl": "PURL", "upc": "UPC",
    "url": "URL", "urn": "URN", "ads": "bibcode", "bibcode": "bibcode", "arxiv": "arXiv", "pmid": "PMID",
    "igsn": "IGSN", "w3id": "w3id",
}
# Schemes DataCite has no type for, given as resolvable URLs instead of being dropped.
_AS_URL = {
    "pmcid": "https://www.ncbi.nlm.nih.gov/pmc/articles/{}",
    "swh": "https://archive.softwareheritage.org/{}",
    "orcid": "https://orcid.org/{}",
    "gnd": "https://d-nb.info/gnd/{}",
}
_ACCESS = {
    "open": "Open Access", "embargoed": "Embargoed Access", "restricted": "Restricted Access",
    "closed": "Closed Access",
}


def _person(person: dict[str, Any]) -> dict[str, Any]:
    family, given = split_name(person["name"])
    out: dict[str, Any] = {"name": person["name"]}
    if given:
        out |= {"nameType": "Personal", "givenName": given, "familyName": family}
    ids = []
    if person.get("orcid"):
        ids.append({"nameIdentifier": person["orcid"], "nameIdentifierScheme": "ORCID",
                    "schemeUri": "https://orcid.org"})
    if person.get("gnd"):
        ids.append({"nameIdentifier": person["gnd"], "nameIdentifierScheme": "GND",
                    "schemeUri": "https://d-nb.info/gnd/"})
    if ids:
        out["nameIdentifiers"] = ids
    if person.get("affiliation"):
        out["affiliation"] = [{"name": person["affiliation"]}]
        if person.get("affiliation_id"):  # a ROR id, as its URL
            out["affiliation"][0] |= {"affiliationIdentifier": person["affiliation_id"],
                                      "affiliationIdentifierScheme": "ROR", "schemeUri": "https://ror.org"}
    return out


def _related(record: dict[str, Any], md: dict[str, Any], ctx: RenderContext) -> list[dict[str, str]]:
    out = []
    for rel in related_identifiers(md):
        scheme = (rel.get("scheme") or "").lower()
        identifier, id_type = rel["identifier"], _ID_TYPES.get(scheme)
        if id_type is None and scheme in _AS_URL:
            identifier, id_type = _AS_URL[scheme].format(identifier), "URL"
        if id_type is None:
            continue
        relation = rel["relation"][0].upper() + rel["relation"][1:]
        item = {"relatedIdentifier": identifier, "relatedIdentifierType": id_type,
                "relationType": relation.replace("Formof", "FormOf")}
        if rel.get("resource_type") in TYPES:
            item["resourceTypeGeneral"] = TYPES[rel["resource_type"]].datacite
        out.append(item)
    concept = record.get("conceptdoi")
    if concept and concept != record.get("doi") and not any(r["relatedIdentifier"] == concept for r in out):
        out.append({"relatedIdentifier": concept, "relatedIdentifierType": "DOI", "relationType": "IsVersionOf"})
    out += [{"relatedIdentifier": ctx.community_url(c["id"]), "relatedIdentifierType": "URL",
             "relationType": "IsPartOf"} for c in md.get("communities", [])]
    return out


def _dates(md: dict[str, Any]) -> list[dict[str, str]]:
    if md.get("access_right") == "embargoed" and md.get("embargo_date"):
        out = [{"date": md["embargo_date"], "dateType": "Available"},
               {"date": md["publication_date"], "dateType": "Accepted"}]
    else:
        out = [{"date": md["publication_date"], "dateType": "Issued"}]
    for item in md.get("dates", []):
        start, end = item.get("start", ""), item.get("end", "")
        date = start if start == end else f"{start}/{end}"
        entry = {"date": date, "dateType": item["type"]}
        if item.get("description"):
            entry["dateInformation"] = item["description"]
        out.append(entry)
    return out


def _file_fixes(record: dict[str, Any]) -> list[dict[str, str]]:
    """One `Updated` date per publish that fixed the version's files (its `files_history`), saying which changed:
    the DOI's metadata tells that its content changed after publication (docs/researchers/corrections.md)."""
    fixes: dict[str, list[str]] = {}
    for change in record.get("files_history", []):
        fixes.setdefault(change["changed"], []).append(f"{change['key']} {change['action']}")
    return [{"date": changed[:10], "dateType": "Updated",
             "dateInformation": "Files changed after publication: " + ", ".join(what)}
            for changed, what in fixes.items()]  # fmt: skip


def _rights(md: dict[str, Any], ctx: RenderContext) -> list[dict[str, str]]:
    out = []
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    if lic:
        entry = {"rights": lic["title"] or lic["id"], "rightsIdentifier": lic["id"]}
        if lic["url"]:
            entry["rightsUri"] = lic["url"]
        out.append(entry)
    access = md.get("access_right", "open")
    out.append({"rights": _ACCESS.get(access, access), "rightsUri": f"info:eu-repo/semantics/{access}Access"})
    return out


def _descriptions(md: dict[str, Any]) -> list[dict[str, str]]:
    out = [{"description": md["description"][:20000], "descriptionType": "Abstract"}] if md.get("description") else []
    if md.get("method"):
        out.append({"description": md["method"], "descriptionType": "Methods"})
    if md.get("notes"):
        out.append({"description": md["notes"], "descriptionType": "Other"})
    if md.get("references"):
        out.append({"description": json.dumps({"references": md["references"]}, ensure_ascii=False),
                    "descriptionType": "Other"})
    return out


def _geo(md: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for loc in md.get("locations", []):
        entry: dict[str, Any] = {"geoLocationPlace": loc["place"]}
        if loc.get("lat") is not None and loc.get("lon") is not None:
            entry["geoLocationPoint"] = {"pointLatitude": loc["lat"], "pointLongitude": loc["lon"]}
        out.append(entry)
    return out


def _funding(md: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for grant in md.get("grants", []):
        funder = grant.get("funder") or {}
        entry = {"funderName": funder.get("name") or "Unknown funder"}
        if funder.get("doi"):
            entry |= {"funderIdentifier": urls.doi(funder["doi"]),
                      "funderIdentifierType": "Crossref Funder ID"}
        entry["awardNumber"] = grant["code"]
        if grant.get("title"):
            entry["awardTitle"] = grant["title"]
        out.append(entry)
    return out


# Custom metadata vocabularies whose keyword terms are subjects (Darwin Core taxa, places, ...); relationship terms
# (OBO) have no place in DataCite's kernel and stay in the JSON formats.
_CUSTOM_SUBJECT_SCHEMES = {"dwc": "http://rs.tdwg.org/dwc/terms/"}


def _custom_subjects(custom: dict[str, Any]) -> list[dict[str, str]]:
    """`{"dwc:genus": ["Felis"]}` -> a subject "Felis" with scheme `dwc:genus` and the term's URI."""
    out = []
    for term, values in custom.items():
        vocabulary, _, name = term.partition(":")
        base = _CUSTOM_SUBJECT_SCHEMES.get(vocabulary)
        if base is None or not isinstance(values, list):
            continue
        out += [{"subject": value, "subjectScheme": term, "schemeUri": base + name}
                for value in values if isinstance(value, str) and value]  # fmt: skip
    return out


def datacite_json(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """The record in the DataCite 4.5 JSON form of the `datacite` package (strings XML-safe)."""
    record = cleaned(record)
    md = record.get("metadata", {})
    info = type_info(md)
    imprint = md.get("imprint") or {}
    external = not ctx.is_own_doi(record.get("doi", ""), record)
    publisher = imprint.get("publisher") if external and imprint.get("publisher") else ctx.publisher
    contributors = [_person(c) | {"contributorType": c["type"] if c["type"] != "Funder" else "Other"}
                    for c in md.get("contributors", [])]
    contributors += [_person(s) | {"contributorType": "Supervisor"}
                     for s in (md.get("thesis") or {}).get("supervisors", [])]
    alternates = [{"alternateIdentifier": a["identifier"], "alternateIdentifierType": a.get("scheme") or "URL"}
                  for a in alternate_identifiers(md)]
    alternates.append({"alternateIdentifier": record.get("links", {}).get("html") or ctx.record_html(record["id"]),
                       "alternateIdentifierType": "URL"})
    subjects = [{"subject": kw} for kw in md.get("keywords", [])]
    subjects += [{"subject": s["term"], "subjectScheme": s.get("scheme", ""), "valueUri": s["identifier"]}
                 for s in md.get("subjects", [])]
    subjects += _custom_subjects(md.get("custom") or {})
    files = record.get("files", []) if md.get("access_right") == "open" else []
    data: dict[str, Any] = {
        "doi": record.get("doi", ""),
        "creators": [_person(c) for c in md.get("creators", [])] or [{"name": ":unav"}],
        "titles": [{"title": md.get("title", "")}],
        "publisher": {"name": publisher},
        "publicationYear": year_of(md.get("publication_date")),
        "subjects": subjects,
        "contributors": contributors,
        "dates": _dates(md) + _file_fixes(record),
        "language": language_alpha2(md.get("language")),
        "types": {"resourceTypeGeneral": info.datacite, "resourceType": info.title},
        "alternateIdentifiers": alternates,
        "relatedIdentifiers": _related(record, md, ctx),
        "sizes": [f"{f['size']} bytes" for f in files],
        "formats": sorted({f["type"] for f in files if f.get("type")}),
        "version": md.get("version", ""),
        "rightsList": _rights(md, ctx),
        "descriptions": _descriptions(md),
        "geoLocations": _geo(md),
        "fundingReferences": _funding(md),
        "schemaVersion": "http://datacite.org/schema/kernel-4",
    }
    return {key: value for key, value in data.items() if value not in ("", [], None)}


def resource_element(record: dict[str, Any], ctx: RenderContext) -> etree._Element:
    """`<resource>` of DataCite kernel 4.5 for one record."""
    return resource_tree(datacite_json(record, ctx))


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as DataCite 4.5 XML."""
    return etree.tostring(resource_element(record, ctx), xml_declaration=True, encoding="UTF-8", pretty_print=True)


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page: `<records>` holding one `<resource>` per record."""
    return page_document([resource_element(r, ctx) for r in records])
