"""CodeMeta 3.0 (https://w3id.org/codemeta/3.0): a software record as a `codemeta.json`.

Media type: CodeMeta defines none of its own (neither its specification nor its repository names one, and IANA
lists none), and a CodeMeta document is JSON-LD, so it is served as `application/ld+json` with the CodeMeta context
as its `profile` parameter, the way JSON-LD 1.1 (§C, "IANA considerations") lets a JSON-LD document name the
profile it follows. Version 3.0, not 2.0: its context is a superset for every term used here, and current tools
(the CodeMeta generator, Software Heritage) read both.

Only software: CodeMeta describes source code, and a record of another type is refused (NotDescribable, 406).
"""

from __future__ import annotations

from typing import Any

import orjson

from .context import RenderContext
from .errors import NotDescribable
from .jsonld import _id_url
from .text import doi_url, license_info, organization, related_identifiers, split_name, strip_html
from .vocabulary import type_info

PROFILE = "https://w3id.org/codemeta/3.0"
MEDIA_TYPE = f'application/ld+json; profile="{PROFILE}"'
# Relations of a software record that CodeMeta has a property for.
_RELATED = {"requires": "softwareRequirements", "isPartOf": "isPartOf", "hasPart": "hasPart",
            "isIdenticalTo": "sameAs", "isDocumentedBy": "softwareHelp", "cites": "citation"}


def is_software(record: dict[str, Any]) -> bool:
    """Whether CodeMeta can describe the record: software."""
    return type_info(record.get("metadata", {})).type == "software"


def _person(person: dict[str, Any]) -> dict[str, Any]:
    family, given = split_name(person["name"])
    out: dict[str, Any] = {"@type": "Person"}
    if person.get("orcid"):
        out["@id"] = f"https://orcid.org/{person['orcid']}"
    if given:
        out |= {"givenName": given, "familyName": family}
    else:
        out["name"] = person["name"]  # one name (a group, an institution): not split into parts
    if person.get("affiliation"):
        out["affiliation"] = organization(person)
    return out


def _repository(md: dict[str, Any]) -> str | None:
    """The code repository: a supplemented URL (the release integration links the source tree so)."""
    for rel in related_identifiers(md):
        if rel.get("relation") == "isSupplementTo" and (rel.get("scheme") or "").lower() == "url":
            return str(rel["identifier"])
    return None


def codemeta(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """A software record as a CodeMeta 3.0 document; NotDescribable for any other type."""
    if not is_software(record):
        raise NotDescribable("CodeMeta describes software only; this record is not software.", "format",
                             "CodeMeta (format=codemeta) is available for software only.")
    md = record.get("metadata", {})
    doi = record.get("doi", "")
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    out: dict[str, Any] = {
        "@context": PROFILE,
        "@type": "SoftwareSourceCode",
        "name": md.get("title", ""),
        "description": strip_html(md.get("description")),
        "url": record.get("links", {}).get("html") or ctx.record_html(record["id"]),
        "datePublished": md.get("publication_date", ""),
        "author": [_person(c) for c in md.get("creators", [])],
        "contributor": [_person(c) for c in md.get("contributors", [])],
        "keywords": list(md.get("keywords", [])),
        "version": md.get("version", ""),
        "license": lic.get("url") or "",
        "publisher": {"@type": "Organization", "name": ctx.publisher, "url": ctx.base_url + "/"},
        "downloadUrl": [item["links"]["self"] for item in record.get("files", [])],
        "funder": [{"@type": "Organization", "name": g["funder"]["name"]} for g in md.get("grants", [])
                   if (g.get("funder") or {}).get("name")],
    }
    if doi:
        out["@id"] = out["identifier"] = doi_url(doi)
    repository = _repository(md)
    if repository:
        out["codeRepository"] = repository
    for rel in related_identifiers(md):
        prop = _RELATED.get(rel.get("relation", ""))
        url = _id_url(rel["identifier"], rel.get("scheme")) if prop else None
        if prop and url:
            out.setdefault(prop, []).append(url)
    if md.get("notes"):
        out["releaseNotes"] = strip_html(md["notes"])
    return {key: value for key, value in out.items() if value not in ("", [], None, {})}


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One software record as CodeMeta JSON-LD."""
    return orjson.dumps(codemeta(record, ctx))


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as a JSON array of the CodeMeta documents of its software (the other records left out)."""
    return orjson.dumps([codemeta(record, ctx) for record in records if is_software(record)])
