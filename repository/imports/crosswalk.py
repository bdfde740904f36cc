"""Dublin Core (oai_dc) and DataCite (oai_datacite, kernel 4) -> deposit metadata, with what could not be mapped
(docs/operators/migration.md#what-is-mapped).

The result is the metadata of a metadata-only record (`files: {enabled: false}`): it links to where the work is
held (`isIdenticalTo` the source's landing page) and keeps the source's DOI as the record's own. Every element
that has no place in the deposit metadata, or whose value the mapping cannot read, is named in `unmapped`, so an
operator sees what an import leaves behind."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pycountry
from lxml import etree

from repository.vocabularies.identifiers import normalize_doi
from repository.vocabularies.languages import normalize_language
from repository.vocabularies.terms import CONTRIBUTOR_TYPES, RELATION_TYPES

DC = "http://purl.org/dc/elements/1.1/"
DATACITE_NAMESPACES = ("http://datacite.org/schema/kernel-4", "http://datacite.org/schema/kernel-3")

# Resource types of both vocabularies (DataCite's resourceTypeGeneral, DC's DCMI and eu-repo types, and the words
# DSpace and EPrints write) -> (upload_type, publication_type).
_TYPES: dict[str, tuple[str, str | None]] = {
    "dataset": ("dataset", None), "software": ("software", None), "image": ("image", None),
    "stillimage": ("image", None), "audiovisual": ("video", None), "movingimage": ("video", None),
    "video": ("video", None), "sound": ("video", None), "poster": ("poster", None),
    "presentation": ("presentation", None), "lesson": ("lesson", None), "interactiveresource": ("other", None),
    "collection": ("other", None), "workflow": ("workflow", None), "physicalobject": ("physicalobject", None),
    "article": ("publication", "article"), "journalarticle": ("publication", "article"),
    "book": ("publication", "book"), "bookchapter": ("publication", "section"), "booksection": ("publication", "section"),
    "thesis": ("publication", "thesis"), "dissertation": ("publication", "thesis"),
    "doctoralthesis": ("publication", "thesis"), "masterthesis": ("publication", "thesis"),
    "conferencepaper": ("publication", "conferencepaper"), "conferenceobject": ("publication", "conferencepaper"),
    "conferenceorworkshopitem": ("publication", "conferencepaper"), "preprint": ("publication", "preprint"),
    "report": ("publication", "report"), "workingpaper": ("publication", "workingpaper"),
    "text": ("publication", "other"), "other": ("other", None),
    # EPrints' own type names (docs/operators/migration.md#what-is-mapped)
    "journalonlineunpaginated": ("publication", "article"), "journalpaginated": ("publication", "article"),
    "conferenceposter": ("poster", None), "monograph": ("publication", "report"),
    "reportorpaper": ("publication", "report"),
}  # fmt: skip
# EPrints writes whether an item was refereed as a second dc:type: a status, not a resource type.
_REFEREED = ("peerreviewed", "nonpeerreviewed")
_ACCESS = {"openaccess": "open", "closedaccess": "closed", "embargoedaccess": "closed",
           "restrictedaccess": "closed", "metadataonlyaccess": "closed"}  # fmt: skip
_YEAR = re.compile(r"^\d{4}$")
_CC_URL = re.compile(r"creativecommons\.org/licenses/([a-z-]+)/(\d\.\d)")
_CC_ZERO = re.compile(r"creativecommons\.org/publicdomain/zero/1\.0")
_MONTH = re.compile(r"^\d{4}-\d{2}$")
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
# EPrints' license ids (cc_by_nc_nd), the service's with hyphens.
_EPRINTS_LICENSE = re.compile(r"^cc(_[a-z]+)+$")
# An EPrints abstract page, `https://host/1234/`: where the record is held (its files lie below it).
_EPRINTS_PAGE = re.compile(r"^https?://[^/\s]+/\d+/?$")
# The year in brackets of a citation EPrints writes as an identifier: `Chico, RM (2011) Azithromycin plus ...`.
_CITED_YEAR = re.compile(r"\s\(\d{4}\)\s")
# A kind of data (DDI's "Survey data", "Census data"), as Dataverse writes it for dc:type.
_KIND_OF_DATA = re.compile(r"\bdata$", re.IGNORECASE)


@dataclass
class Mapped:
    """Deposit metadata made from one source record, and what the mapping left out (`element: why`)."""

    metadata: dict[str, Any] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)


def metadata_only(mapped: Mapped, landing: str | None) -> Mapped:
    """Mark `mapped` metadata-only and link it to the source's landing page; defaults for what a publish needs."""
    meta = mapped.metadata
    meta["files"] = {"enabled": False}
    if landing:
        related = meta.setdefault("related_identifiers", [])
        if not any(r["identifier"] == landing for r in related):
            related.insert(0, {"identifier": landing, "relation": "isIdenticalTo"})
    if "description" not in meta and "title" in meta:
        meta["description"] = meta["title"]
        mapped.unmapped.append("description: none at the source; the title stands in")
    if "upload_type" not in meta:
        meta["upload_type"] = "other"
        mapped.unmapped.append("type: none the mapping knows; taken as other")
    if meta.get("access_right", "open") == "open" and "license" not in meta:
        mapped.unmapped.append("license: none at the source the service knows; the default license applies")
    return mapped


def person_name(value: str) -> str:
    """A name as the deposit wants it (`Family, Given`): `Given Family` is turned round, organisations kept."""
    value = " ".join(value.split())
    if "," in value or " " not in value:
        return value
    given, family = value.rsplit(" ", 1)
    return f"{family}, {given}"


def _names(values: list[str]) -> list[str]:
    """A record's names, each once: turned round to `Family, Given` (Zenodo writes `Given Family`), unless the
    record writes its persons `Family, Given` already (DSpace, EPrints, Dataverse): then a name without a comma is an
    organisation's (`ICSS Investigators`) and kept as written."""
    family_first = any("," in value for value in values)
    return list(dict.fromkeys(" ".join(v.split()) if family_first else person_name(v) for v in values))


def iso_date(value: str) -> str | None:
    """`YYYY-MM-DD` from a full date or timestamp, a year-month or a year (their first day); None otherwise."""
    value = value.strip()
    if _YEAR.match(value):
        return f"{value}-01-01"
    if _MONTH.match(value):
        return f"{value}-01"
    found = _DATE.match(value)
    return found.group(1) if found else None


def language(value: str) -> str | None:
    """An ISO 639-2/3 code from a 639-2/3 or 639-1 code; None if neither."""
    code = normalize_language(value)
    if code is not None:
        return code
    found = pycountry.languages.get(alpha_2=value.strip().lower()) if len(value.strip()) == 2 else None
    return getattr(found, "alpha_3", None)


def upload_type(words: Iterable[str]) -> tuple[str, str | None] | None:
    """The first of `words` (types, eu-repo URIs) that names a known resource type."""
    for word in words:
        if _type_key(word) in _TYPES:
            return _TYPES[_type_key(word)]
        if _KIND_OF_DATA.search(word.strip()):
            return ("dataset", None)
    return None


def _type_key(word: str) -> str:
    # A URI's last segment (info:eu-repo/semantics/article); a name whole (EPrints' "Journal (On-line/Unpaginated)").
    return re.sub(r"[^a-z]", "", (word.rsplit("/", 1)[-1] if ":" in word else word).lower())


def access_right(value: str) -> str | None:
    """open or closed from an eu-repo access right (`info:eu-repo/semantics/openAccess`), else None."""
    return _ACCESS.get(value.rsplit("/", 1)[-1].strip().lower())


def identifiers(values: Iterable[str]) -> tuple[str | None, str | None, list[str]]:
    """(DOI, landing page URL, the rest) of a record's identifiers."""
    doi = landing = None
    rest: list[str] = []
    for value in values:
        value = value.strip()
        found = normalize_doi(value) if ("10." in value) else None
        if found and doi is None:
            doi = found
        elif value.startswith(("http://", "https://")) and landing is None:
            landing = value
        elif value:
            rest.append(value)
    return doi, landing, rest


def _texts(parent: etree._Element, path: str, ns: dict[str, str]) -> list[str]:
    return [" ".join(t.split()) if "\n" not in t.strip() else t.strip()
            for t in (el.text or "" for el in parent.iterfind(path, ns)) if t.strip()]


def _set_type(meta: dict[str, Any], found: tuple[str, str | None] | None) -> None:
    if found is not None:
        meta["upload_type"] = found[0]
        if found[1]:
            meta["publication_type"] = found[1]


def license_of(right: str, license_id: Callable[[str], str | None]) -> str | None:
    """A known license id from a rights statement: an id (EPrints' `cc_by_nc` too), or a Creative Commons deed or
    legal code URL."""
    found = _CC_URL.search(right)
    if found:
        return license_id(f"cc-{found.group(1)}-{found.group(2)}")
    if _CC_ZERO.search(right):
        return license_id("cc0")
    value = right.strip()
    return license_id(value.replace("_", "-") if _EPRINTS_LICENSE.match(value) else value)


def _set_license(meta: dict[str, Any], rights: Iterable[str], license_id: Callable[[str], str | None],
                 unmapped: list[str]) -> None:
    unknown = []
    for right in rights:
        if (access := access_right(right)) is not None:
            meta["access_right"] = access
        elif (known := license_of(right, license_id)) is not None:
            meta.setdefault("license", known)
        else:
            unknown.append(right)
    if "license" not in meta:  # a license's name beside its URL says nothing more
        unmapped.extend(f"rights: {right}" for right in unknown)
    if meta.get("access_right") == "closed":
        meta.pop("license", None)


def from_dublin_core(element: etree._Element, license_id: Callable[[str], str | None]) -> tuple[Mapped, str | None]:
    """An oai_dc record's metadata element -> (mapped metadata, landing page)."""
    ns = {"dc": DC}
    out = Mapped()
    meta, unmapped = out.metadata, out.unmapped
    titles = [" ".join(t.split()) for t in _texts(element, "dc:title", ns)]  # EPrints breaks long titles
    if titles:
        meta["title"] = titles[0]
        unmapped.extend(f"title: {t}" for t in titles[1:])
    if creators := _names(_texts(element, "dc:creator", ns)):
        meta["creators"] = [{"name": c} for c in creators]
    if contributors := _names(_texts(element, "dc:contributor", ns)):
        meta["contributors"] = [{"name": c, "type": "Other"} for c in contributors]
    descriptions = _texts(element, "dc:description", ns)
    # Dataverse adds the dataset's citation as a description of its own.
    unmapped.extend(f"citation: {d.removeprefix('Citation:').strip()}" for d in descriptions
                    if d.startswith("Citation:"))
    if descriptions := [d for d in descriptions if not d.startswith("Citation:")]:
        # Zenodo escapes its HTML descriptions once more than XML asks: read them as the HTML they are.
        meta["description"] = "\n\n".join(html.unescape(d) if "&lt;" in d else d for d in descriptions)
    if subjects := _texts(element, "dc:subject", ns):
        meta["keywords"] = list(dict.fromkeys(subjects))
    for date in _texts(element, "dc:date", ns):
        if (iso := iso_date(date)) is not None and "publication_date" not in meta:
            meta["publication_date"] = iso
        elif iso is None:
            unmapped.append(f"date: {date}")
    _dc_types(meta, _texts(element, "dc:type", ns), unmapped)
    for lang in _texts(element, "dc:language", ns):
        if (code := language(lang)) is not None and "language" not in meta:
            meta["language"] = code
        else:
            unmapped.append(f"language: {lang}")
    if publishers := _texts(element, "dc:publisher", ns):
        meta["imprint_publisher"] = publishers[0]
    _set_license(meta, _texts(element, "dc:rights", ns), license_id, unmapped)
    landing = _dc_links(meta, _texts(element, "dc:identifier", ns), _texts(element, "dc:relation", ns), unmapped)
    for name in ("format", "coverage", "source"):
        unmapped.extend(f"{name}: {value}" for value in _texts(element, f"dc:{name}", ns))
    return out, landing


def _dc_types(meta: dict[str, Any], types: list[str], unmapped: list[str]) -> None:
    kinds = [t for t in types if _type_key(t) not in _REFEREED]
    _set_type(meta, upload_type(kinds))
    if kinds and meta.get("upload_type", "other") == "other":
        unmapped.append(f"type: {', '.join(kinds)}")
    unmapped.extend(f"type: {t} (refereed or not: no place in the deposit metadata)" for t in types
                    if _type_key(t) in _REFEREED)


def _dc_links(meta: dict[str, Any], idents: list[str], relations: list[str], unmapped: list[str]) -> str | None:
    """The record's DOI and landing page from its identifiers and relations; the landing page is returned.

    EPrints names the item's files as identifiers and its abstract page (above them) as a relation, writes a
    citation as one more identifier and the work's DOI as a relation."""
    doi, landing, rest = identifiers(idents)
    if doi:
        meta["doi"] = doi
    for value in rest:
        if value.startswith("oai:"):
            continue
        unmapped.append(f"citation: {value}" if _CITED_YEAR.search(value) else f"identifier: {value}")
    page = next((r for r in relations if _EPRINTS_PAGE.match(r) and (landing is None or landing.startswith(r))),
                None)
    if page is not None:
        if landing is not None:
            unmapped.append(f"identifier: {landing} (a file of the record at the source)")
        landing = page
    for value in relations:
        if value in (landing, page):
            continue
        # EPrints' relation DOI is its id_number, the same work's DOI (another repository's relation may be any
        # related work's); the record's own DOI it never is, since other copies of the work name it too.
        eprints_doi = page is not None and doi is None and value.startswith(("10.", "https://doi.org/"))
        if eprints_doi and (found := normalize_doi(value)):
            meta.setdefault("related_identifiers", []).append({"identifier": found, "relation": "isIdenticalTo"})
        else:
            # Dublin Core does not say how a relation relates: the deposit metadata needs a relation type.
            unmapped.append(f"relation: {value}")
    return landing


def _creator(el: etree._Element, ns: dict[str, str], name_tag: str) -> dict[str, Any]:
    name_el = el.find(f"d:{name_tag}", ns)
    name = " ".join((name_el.text or "").split()) if name_el is not None else ""
    # Only a person's name is turned round: Dataverse leaves an organisation's (`Tromsø Geophysical Observatory`)
    # without a nameType, Zenodo marks every name Personal.
    personal = name_el is not None and (name_el.get("nameType") == "Personal" or el.find("d:familyName", ns) is not None)
    person: dict[str, Any] = {"name": person_name(name) if personal else name}
    for ident in el.iterfind("d:nameIdentifier", ns):
        if (ident.get("nameIdentifierScheme") or "").upper() == "ORCID" and ident.text:
            person["orcid"] = ident.text.strip().rsplit("/", 1)[-1]
    affiliation = el.findtext("d:affiliation", None, ns)
    if affiliation and affiliation.strip():
        person["affiliation"] = affiliation.strip()
    return person


def from_datacite(resource: etree._Element, license_id: Callable[[str], str | None]) -> tuple[Mapped, str | None]:
    """A DataCite `resource` element (kernel 4, or 3) -> (mapped metadata, landing page)."""
    ns = {"d": etree.QName(resource).namespace or DATACITE_NAMESPACES[0]}
    out = Mapped()
    meta, unmapped = out.metadata, out.unmapped
    handled = {"identifier", "creators", "titles", "publisher", "publicationYear", "resourceType", "subjects",
               "contributors", "dates", "language", "alternateIdentifiers", "relatedIdentifiers", "rightsList",
               "descriptions", "version"}
    ident = resource.find("d:identifier", ns)
    if ident is not None and (ident.get("identifierType") or "").upper() == "DOI" and ident.text:
        meta["doi"] = normalize_doi(ident.text.strip()) or ident.text.strip()
    creators = [_creator(c, ns, "creatorName") for c in resource.iterfind("d:creators/d:creator", ns)]
    if creators := [c for c in creators if c["name"]]:
        meta["creators"] = creators
    for title in resource.iterfind("d:titles/d:title", ns):
        if title.text and title.text.strip():
            if "title" not in meta and not title.get("titleType"):
                meta["title"] = " ".join(title.text.split())
            else:
                unmapped.append(f"title ({title.get('titleType') or 'another'}): {title.text.strip()}")
    if publisher := (resource.findtext("d:publisher", "", ns) or "").strip():
        meta["imprint_publisher"] = publisher
    issued = [d.text.strip() for d in resource.iterfind("d:dates/d:date", ns)
              if d.get("dateType") == "Issued" and d.text]
    year = (resource.findtext("d:publicationYear", "", ns) or "").strip()
    for candidate in [*issued, year]:
        if candidate and (iso := iso_date(candidate)) is not None:
            meta["publication_date"] = iso
            break
    rtype = resource.find("d:resourceType", ns)
    if rtype is not None:
        _set_type(meta, upload_type([rtype.text or "", rtype.get("resourceTypeGeneral") or ""]))
    if keywords := _texts(resource, "d:subjects/d:subject", ns):
        meta["keywords"] = list(dict.fromkeys(keywords))
    contributors = []
    for el in resource.iterfind("d:contributors/d:contributor", ns):
        person = _creator(el, ns, "contributorName")
        kind = el.get("contributorType") or "Other"
        if person["name"]:
            contributors.append({**person, "type": kind if kind in CONTRIBUTOR_TYPES else "Other"})
    if contributors:
        meta["contributors"] = contributors
    if (lang := (resource.findtext("d:language", "", ns) or "").strip()):
        if (code := language(lang)) is not None:
            meta["language"] = code
        else:
            unmapped.append(f"language: {lang}")
    landing = None
    for alt in resource.iterfind("d:alternateIdentifiers/d:alternateIdentifier", ns):
        value = (alt.text or "").strip()
        if (alt.get("alternateIdentifierType") or "").upper() == "URL" and landing is None:
            landing = value
        elif value:
            unmapped.append(f"alternateIdentifier ({alt.get('alternateIdentifierType')}): {value}")
    related = []
    for rel in resource.iterfind("d:relatedIdentifiers/d:relatedIdentifier", ns):
        value, given = (rel.text or "").strip(), rel.get("relationType") or ""
        relation = given[:1].lower() + given[1:]  # DataCite writes IsPartOf, the deposit isPartOf
        if value and relation in RELATION_TYPES:
            related.append({"identifier": value, "relation": relation})
        elif value:
            unmapped.append(f"relatedIdentifier ({given}): {value}")
    if related:
        meta["related_identifiers"] = related
    # Each of a right's forms in turn: Dataverse names CC0 by its URI and a text the vocabulary does not know.
    rights = [value for r in resource.iterfind("d:rightsList/d:rights", ns)
              for value in (r.get("rightsIdentifier"), r.get("rightsURI"), (r.text or "").strip()) if value]
    _set_license(meta, list(dict.fromkeys(rights)), license_id, unmapped)
    descriptions = [d for d in resource.iterfind("d:descriptions/d:description", ns) if (d.text or "").strip()]
    abstracts = [d for d in descriptions if d.get("descriptionType") in (None, "Abstract")] or descriptions
    if abstracts:
        meta["description"] = abstracts[0].text.strip()  # type: ignore[union-attr]
    unmapped.extend(f"description ({d.get('descriptionType')})" for d in descriptions if d is not abstracts[0])
    if version := (resource.findtext("d:version", "", ns) or "").strip():
        meta["version"] = version
    for child in resource:
        if isinstance(child.tag, str) and etree.QName(child).localname not in handled:
            unmapped.append(etree.QName(child).localname)
    return out, landing
