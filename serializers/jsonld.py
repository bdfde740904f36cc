"""schema.org JSON-LD (docs/reference-behaviour.md#json-ld), corrected where the reference's output misleads crawlers and Google's
Dataset rich results: the description as plain text (not HTML), files with a media type (`encodingFormat`) and a
size, `spatialCoverage`/`temporalCoverage` (the names Google reads), the repository as the `DataCatalog`, and links
(`isPartOf`, `citation`, `hasPart`, `sameAs`) only to identifiers that resolve to a URL (an ISSN or ISBN does not,
and an `@id` must be one).
"""

from __future__ import annotations

from typing import Any

import idutils
import orjson

from .context import RenderContext
from .linkset import file_media_type
from .text import (
    alternate_identifiers,
    doi_url,
    language_639_3,
    language_name,
    license_info,
    organization,
    related_identifiers,
    strip_html,
)
from .vocabulary import type_info

PROFILE = "https://schema.org/"  # the vocabulary, as its @context names it


def _id_url(identifier: str, scheme: str | None) -> str | None:
    """The URL an identifier resolves at, None when its kind has no resolver (ISSN, ISBN, LSID...)."""
    scheme = (scheme or "").lower()
    if scheme == "arxiv":  # idutils would keep the `arXiv:` prefix in the URL
        return f"https://arxiv.org/abs/{identifier.removeprefix('arXiv:')}"
    if scheme == "ark":
        return f"https://n2t.net/{identifier}" if identifier.startswith("ark:/") else None
    try:
        return idutils.to_url(identifier, scheme, url_scheme="https") or None
    except Exception:  # noqa: BLE001 - idutils raises on malformed values of some kinds: no URL then
        return None


def _urls(pairs: list[dict[str, Any]]) -> list[str]:
    return [url for url in (_id_url(p["identifier"], p.get("scheme")) for p in pairs) if url]


def _person(person: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"@type": "Person", "name": person["name"]}
    if person.get("orcid"):
        out["@id"] = f"https://orcid.org/{person['orcid']}"
    elif person.get("gnd"):
        out["@id"] = f"https://d-nb.info/gnd/{person['gnd']}"
    if person.get("affiliation"):
        out["affiliation"] = organization(person)
    return out


def _relations(md: dict[str, Any], relations: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"@id": url} for url in _urls([r for r in related_identifiers(md) if r.get("relation") in relations])]


def _place(location: dict[str, Any]) -> dict[str, Any]:
    place: dict[str, Any] = {"@type": "Place", "name": location["place"]}
    if location.get("description"):
        place["description"] = location["description"]
    if location.get("lat") is not None and location.get("lon") is not None:
        place["geo"] = {"@type": "GeoCoordinates", "latitude": location["lat"], "longitude": location["lon"]}
    return place


def _download(item: dict[str, Any]) -> dict[str, Any]:
    return {"@type": "DataDownload", "name": item["key"], "encodingFormat": file_media_type(item["key"]),
            "contentSize": f"{item['size']} B", "contentUrl": item["links"]["self"]}


def _funders(md: dict[str, Any]) -> list[dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for grant in md.get("grants", []):
        funder = grant.get("funder") or {}
        if funder.get("name") and funder["name"] not in found:
            found[funder["name"]] = {"@type": "Organization", "name": funder["name"]} | (
                {"@id": doi_url(funder["doi"])} if funder.get("doi") else {})
    return list(found.values())


def jsonld(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """One record as a schema.org JSON-LD object."""
    md = record.get("metadata", {})
    info = type_info(md)
    doi = record.get("doi", "")
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    out: dict[str, Any] = {
        "@context": PROFILE,
        "@type": info.schema_org,
        "@id": doi_url(doi) if doi else record.get("links", {}).get("self", ""),
        "identifier": doi_url(doi) if doi else "",
        "url": record.get("links", {}).get("html") or ctx.record_html(record["id"]),
        "name": md.get("title", ""),
        "description": strip_html(md.get("description")),
        "keywords": md.get("keywords", []),
        "datePublished": md.get("publication_date", ""),
        "creator": [_person(c) for c in md.get("creators", [])],
        "contributor": [_person(c) for c in md.get("contributors", [])],
        "version": md.get("version", ""),
        "license": lic.get("url") or lic.get("id", ""),
        "citation": _relations(md, ("cites", "references")),
        "isPartOf": _relations(md, ("isPartOf",)) + [{"@id": ctx.community_url(c["id"])} for c in
                                                     md.get("communities", [])],
        "hasPart": _relations(md, ("hasPart",)),
        "sameAs": _urls([r for r in related_identifiers(md) if r.get("relation") == "isIdenticalTo"]
                        + alternate_identifiers(md)),
        "funder": _funders(md),
        "about": [{"@id": s["identifier"], "name": s["term"]} for s in md.get("subjects", [])],
    }
    if md.get("language"):
        out["inLanguage"] = {"@type": "Language", "name": language_name(md["language"]),
                             "alternateName": language_639_3(md["language"])}
    places = [_place(loc) for loc in md.get("locations", []) if loc.get("place")]
    if places:
        out["spatialCoverage"] = places
    temporal = [f"{d.get('start') or '..'}/{d.get('end') or '..'}" for d in md.get("dates", [])]
    if temporal:
        out["temporalCoverage"] = temporal
    if md.get("access_right") == "open":
        out["isAccessibleForFree"] = True
    meeting = md.get("meeting") or {}
    if meeting.get("title"):
        event = {"@type": "Event", "name": meeting["title"], "alternateName": meeting.get("acronym"),
                 "location": meeting.get("place"), "url": meeting.get("url")}
        out["workFeatured"] = {key: value for key, value in event.items() if value}
    if info.schema_org == "Dataset":
        if md.get("access_right") == "open":
            out["distribution"] = [_download(f) for f in record.get("files", [])]
        out["measurementTechnique"] = strip_html(md.get("method"))
        out["includedInDataCatalog"] = {"@type": "DataCatalog", "name": ctx.publisher, "url": ctx.base_url}
    if info.schema_org == "SoftwareSourceCode":
        repos = [r["identifier"] for r in related_identifiers(md)
                 if r.get("relation") == "isSupplementTo" and "github.com" in r["identifier"]]
        if repos:
            out["codeRepository"] = repos[0]
    if info.schema_org == "ScholarlyArticle":
        out["headline"] = md.get("title", "")
    return {key: value for key, value in out.items() if value not in ("", [], None, {})}


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `application/ld+json`."""
    return orjson.dumps(jsonld(record, ctx))


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as a JSON array of JSON-LD objects."""
    return orjson.dumps([jsonld(r, ctx) for r in records])
