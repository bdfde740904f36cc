"""Citation File Format 1.2.0 (https://citation-file-format.github.io): a record's `CITATION.cff`.

CFF's root `type` is `software` or `dataset`, so only those records are rendered; any other is refused
(NotDescribable, 406). Values CFF's schema would reject are left out rather than written wrong: a license without
an SPDX identifier (the schema lists SPDX ids only), a DOI with characters outside the schema's DOI pattern.

Media type: none is registered for CFF, and neither GitHub (which serves CITATION.cff files as plain text) nor
cffconvert names one. `application/x-cff+yaml` says both what it is (an unregistered `x-` type for CFF) and how to
parse it (the `+yaml` suffix RFC 9512 registered, so a generic YAML reader takes it); `application/x-cff` is
accepted as an alias.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from .context import RenderContext
from .errors import NotDescribable
from .text import license_info, spdx_id, split_name, strip_html
from .vocabulary import type_info

VERSION = "1.2.0"
PROFILE = f"https://citation-file-format.github.io/{VERSION}/schema.json"
MEDIA_TYPE = "application/x-cff+yaml"
FILE_NAME = "CITATION.cff"
_TYPES = ("software", "dataset")
# The CFF 1.2.0 schema's patterns for a DOI and an ORCID: values outside them are left out.
_DOI = re.compile(r"^10\.\d{4,9}(\.\d+)?/[A-Za-z0-9:/_;\-\.\(\)\[\]\\]+$")
_ORCID = re.compile(r"^[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$")
_URL = re.compile(r"^(https|http|ftp|sftp)://.+")


def is_citable(record: dict[str, Any]) -> bool:
    """Whether CFF can describe the record: software or a dataset."""
    return type_info(record.get("metadata", {})).type in _TYPES


def _author(person: dict[str, Any]) -> dict[str, str]:
    family, given = split_name(person["name"])
    if given and family:
        out = {"family-names": family, "given-names": given}
    else:
        out = {"name": person["name"].strip() or "Unknown"}  # an entity (a group, an institution)
    if person.get("affiliation", "").strip():
        out["affiliation"] = person["affiliation"].strip()
    if _ORCID.match(person.get("orcid") or ""):
        out["orcid"] = f"https://orcid.org/{person['orcid']}"
    return out


def _repository_code(md: dict[str, Any]) -> str | None:
    for rel in md.get("related_identifiers", []):
        if rel.get("relation") == "isSupplementTo" and _URL.match(rel.get("identifier", "")):
            return str(rel["identifier"])
    return None


def citation(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """A software or dataset record as CFF 1.2.0 (a mapping, in CFF's usual key order); NotDescribable else."""
    kind = type_info(record.get("metadata", {})).type
    if kind not in _TYPES:
        raise NotDescribable("CITATION.cff describes software and datasets only; this record is neither.",
                             "format", "CITATION.cff (format=cff) is available for software and datasets only.")
    md = record.get("metadata", {})
    doi = record.get("doi", "")
    out: dict[str, Any] = {
        "cff-version": VERSION,
        "message": "If you use this work, please cite it using these metadata.",
        "type": kind,
        "title": md.get("title", "").strip() or "Untitled",
        "authors": [_author(c) for c in md.get("creators", [])] or [{"name": ctx.publisher}],
    }
    abstract = strip_html(md.get("description"))
    if abstract:
        out["abstract"] = abstract
    if md.get("publication_date"):
        out["date-released"] = md["publication_date"]
    if _DOI.match(doi):
        out["doi"] = doi
        identifiers = [{"type": "doi", "value": doi, "description": "This version"}]
        concept = record.get("conceptdoi", "")
        if _DOI.match(concept) and concept != doi:
            identifiers.append({"type": "doi", "value": concept, "description": "Every version (concept DOI)"})
        out["identifiers"] = identifiers
    keywords = [k for k in md.get("keywords", []) if k.strip()]  # a list of its own
    if keywords:
        out["keywords"] = keywords
    license_id = spdx_id((md.get("license") or {}).get("id"))
    if license_id:
        out["license"] = license_id
    else:
        url = license_info((md.get("license") or {}).get("id"), ctx.licenses).get("url", "")
        if _URL.match(url):
            out["license-url"] = url
    code = _repository_code(md)
    if code:
        out["repository-code"] = code
    out["url"] = record.get("links", {}).get("html") or ctx.record_html(record["id"])
    if md.get("version"):
        out["version"] = str(md["version"])
    return out


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `CITATION.cff` (YAML 1.2, UTF-8; every string a YAML reader would take for another type is
    quoted, so a date or a version such as 2023.11 stays a string)."""
    return yaml.safe_dump(citation(record, ctx), allow_unicode=True, sort_keys=False, width=120).encode()


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as a YAML stream: one CFF document for each software or dataset record (each starting with
    `---`), the other records left out."""
    documents = [citation(record, ctx) for record in records if is_citable(record)]
    return yaml.safe_dump_all(documents, allow_unicode=True, sort_keys=False, width=120,
                              explicit_start=True).encode() if documents else b""
