"""schema.org JSON-LD (reference §13.6)."""

from __future__ import annotations

from typing import Any

import orjson

from .context import RenderContext
from .text import (
    alternate_identifiers,
    doi_url,
    language_639_3,
    language_name,
    license_info,
    related_identifiers,
)
from .vocabulary import type_info

_ID_URLS = {"doi": "https://doi.org/{}", "arxiv": "https://arxiv.org/abs/{}", "url": "{}",
            "handle": "https://hdl.handle.net/{}", "pmid": "https://pubmed.ncbi.nlm.nih.gov/{}"}


def _id_url(identifier: str, scheme: str | None) -> str:
    template = _ID_URLS.get((scheme or "").lower())
    if template is None:
        return identifier
    return template.format(identifier.removeprefix("arXiv:") if scheme == "arxiv" else identifier)


def _person(person: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"@type": "Person", "name": person["name"]}
    if person.get("orcid"):
        out["@id"] = f"https://orcid.org/{person['orcid']}"
    elif person.get("gnd"):
        out["@id"] = f"https://d-nb.info/gnd/{person['gnd']}"
    if person.get("affiliation"):
        out["affiliation"] = {"@type": "Organization", "name": person["affiliation"]}
    return out


def _relations(md: dict[str, Any], relations: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"@id": _id_url(r["identifier"], r.get("scheme"))} for r in related_identifiers(md)
            if r.get("relation") in relations]


def jsonld(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """One record as a schema.org JSON-LD object."""
    md = record.get("metadata", {})
    info = type_info(md)
    doi = record.get("doi", "")
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    out: dict[str, Any] = {
        "@context": "https://schema.org/",
        "@type": info.schema_org,
        "@id": doi_url(doi) if doi else record.get("links", {}).get("self", ""),
        "identifier": doi_url(doi) if doi else "",
        "url": record.get("links", {}).get("html") or ctx.record_html(record["id"]),
        "name": md.get("title", ""),
        "description": md.get("description", ""),
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
        "sameAs": [_id_url(r["identifier"], r.get("scheme")) for r in related_identifiers(md)
                   if r.get("relation") == "isIdenticalTo"]
        + [_id_url(a["identifier"], a.get("scheme")) for a in alternate_identifiers(md)],
        "about": [{"@id": s["identifier"], "name": s["term"]} for s in md.get("subjects", [])],
    }
    if md.get("language"):
        out["inLanguage"] = {"@type": "Language", "name": language_name(md["language"]),
                             "alternateName": language_639_3(md["language"])}
    places = [{"@type": "Place", "name": loc["place"]} | (
        {"geo": {"@type": "GeoCoordinates", "latitude": loc["lat"], "longitude": loc["lon"]}}
        if loc.get("lat") is not None and loc.get("lon") is not None else {}) for loc in md.get("locations", [])]
    if places:
        out["spatial"] = places
    temporal = [f"{d.get('start') or '..'}/{d.get('end') or '..'}" for d in md.get("dates", [])]
    if temporal:
        out["temporal"] = temporal
    meeting = md.get("meeting") or {}
    if meeting.get("title"):
        out["workFeatured"] = {"@type": "Event", "name": meeting["title"], "alternateName": meeting.get("acronym", ""),
                               "location": meeting.get("place", ""), "url": meeting.get("url", "")}
    if info.schema_org == "Dataset":
        if md.get("access_right") == "open":
            out["distribution"] = [{"@type": "DataDownload", "encodingFormat": f.get("type", ""),
                                    "contentUrl": f["links"]["self"]} for f in record.get("files", [])]
        out["measurementTechnique"] = md.get("method", "")
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
