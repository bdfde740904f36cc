"""Simple Dublin Core in the `oai_dc` container (docs/reference-behaviour.md#dublin-core), the tree `dcxml` builds."""

from __future__ import annotations

from typing import Any

from dcxml import simpledc
from lxml import etree

from .context import RenderContext
from .text import (
    alternate_identifiers,
    cleaned,
    doi_url,
    language_639_3,
    license_info,
    page_document,
    related_identifiers,
    strip_html,
)
from .vocabulary import type_info, type_key

NS = "http://www.openarchives.org/OAI/2.0/oai_dc/"
SCHEMA = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
DC_NS = "http://purl.org/dc/elements/1.1/"
_NSMAP: dict[str | None, str] = {"oai_dc": NS, "dc": DC_NS, "xsi": "http://www.w3.org/2001/XMLSchema-instance"}
# dcxml's element order (its rules, in registration order) and the element each dc_json key becomes.
_ELEMENTS = tuple((plural, f"{{{DC_NS}}}{singular}") for plural, singular in (
    ("contributors", "contributor"), ("coverage", "coverage"), ("creators", "creator"), ("dates", "date"),
    ("descriptions", "description"), ("formats", "format"), ("identifiers", "identifier"),
    ("languages", "language"), ("publishers", "publisher"), ("relations", "relation"), ("rights", "rights"),
    ("sources", "source"), ("subjects", "subject"), ("titles", "title"), ("types", "type"),
))  # fmt: skip


def _grant_uri(grant: dict[str, Any]) -> str:
    funder = grant.get("funder") or {}
    acronym = (funder.get("acronyms") or [funder.get("name", "")])[0]
    return f"info:eu-repo/grantAgreement/{acronym}/{grant.get('program', '')}/{grant['code']}/"


def _source(md: dict[str, Any]) -> list[str]:
    journal = md.get("journal") or {}
    if not journal.get("title"):
        return []
    text = journal["title"]
    if journal.get("volume"):
        text += f" {journal['volume']}"
    if journal.get("issue"):
        text += f"({journal['issue']})"
    if journal.get("pages"):
        text += f" {journal['pages']}"
    if journal.get("year"):
        text += f" ({journal['year']})"
    return [text]


def dc_json(record: dict[str, Any], ctx: RenderContext) -> dict[str, list[str]]:
    """The record as `dcxml` input: element name (plural) -> values."""
    md = record.get("metadata", {})
    access = md.get("access_right", "open")
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    relations = [_grant_uri(g) for g in md.get("grants", [])]
    relations += [f"info:eu-repo/semantics/altIdentifier/{a.get('scheme', 'url')}/{a['identifier']}"
                  for a in alternate_identifiers(md)]
    relations += [f"{r.get('scheme', 'url')}:{r['identifier']}" for r in related_identifiers(md)]
    relations += [f"url:{ctx.community_url(c['id'])}" for c in md.get("communities", [])]
    dates = [md.get("publication_date", "")]
    if access == "embargoed" and md.get("embargo_date"):
        dates.append(f"info:eu-repo/date/embargoEnd/{md['embargo_date']}")
    dates += [f"{d.get('start', '')}/{d.get('end', '')}" for d in md.get("dates", [])]
    coverage = []
    for loc in md.get("locations", []):
        text = f"name={loc['place']}"
        if loc.get("lat") is not None and loc.get("lon") is not None:
            text += f"; east={loc['lon']}; north={loc['lat']}"
        coverage.append(text)
    people = md.get("contributors", []) + (md.get("thesis") or {}).get("supervisors", [])
    return {
        "identifiers": [record.get("links", {}).get("html") or ctx.record_html(record["id"]),
                        doi_url(record["doi"]) if record.get("doi") else "", ctx.oai_identifier(record["id"])],
        "titles": [md.get("title", "")],
        "creators": [c["name"] for c in md.get("creators", [])],
        "contributors": [p["name"] for p in people],
        "relations": relations,
        "rights": [f"info:eu-repo/semantics/{access}Access", lic.get("url") or lic.get("id", "")],
        "dates": dates,
        "subjects": md.get("keywords", []) + [s["term"] for s in md.get("subjects", [])],
        "descriptions": [strip_html(md.get(key)) for key in ("description", "notes", "method")],
        "publishers": [(md.get("imprint") or {}).get("publisher", "")],
        "types": [f"info:eu-repo/semantics/{type_info(md).eurepo}", type_key(md)],
        "sources": _source(md),
        "languages": [language_639_3(md.get("language"))],
        "coverage": coverage,
    }


def dc_element(record: dict[str, Any], ctx: RenderContext) -> etree._Element:
    """`<oai_dc:dc>` for one record: the tree `simpledc.dump_etree` gives, built in place (faster)."""
    data = dc_json(cleaned(record), ctx)
    root = etree.Element(simpledc.container_element, simpledc.container_attribs, nsmap=_NSMAP)
    for key, tag in _ELEMENTS:
        for value in data.get(key, ()):
            if value:
                etree.SubElement(root, tag).text = value
    return root


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `application/x-dc+xml`."""
    return etree.tostring(dc_element(record, ctx), xml_declaration=True, encoding="UTF-8", pretty_print=True)


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page: `<records>` holding one `<oai_dc:dc>` per record."""
    return page_document([dc_element(r, ctx) for r in records], _NSMAP)
