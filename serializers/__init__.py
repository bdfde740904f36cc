"""The format registry: pure functions from a record dict to bytes, chosen by media type or OAI prefix.

`REGISTRY` lists the formats of the API, `OAI_FORMATS` those of OAI-PMH (ListMetadataFormats reads it); both are
built from the same renderer modules.

INPUT CONTRACT — every renderer takes the published record in its v1 form (docs/reference-behaviour.md#record-json), built once
by the records module, plus a RenderContext; no Flask, no database in here.

    record = {
      "id": int, "conceptrecid": str, "doi": str, "conceptdoi": str (absent without a concept DOI),
      "created": ts, "updated": ts, "revision": int, "owners": [int], "stats": {...},
      "links": {"self", "html", "doi", "badge", "conceptdoi", "conceptbadge", "bucket"?, "latest",
                "latest_html", ...}                                  # absolute URLs
      "files": [{"id": uuid, "bucket", "checksum": "md5:<hex>", "key", "size", "type",
                 "links": {"self"}}],                                # only when the caller may see files;
                                                                     # "id" is dropped from v1 output;
                 # for formats with `file_details` (RO-Crate, Croissant) the view adds "sha256" (hex, where kept)
                 # and, to a CSV file a tabular descriptor describes, "fields": [{"name", "type"}]
      "metadata": {
        "title", "publication_date": "YYYY-MM-DD", "description" (HTML),
        "resource_type": {"type", "subtype"?, "title"},
        "access_right": open|embargoed|restricted|closed, "access_right_category",
        "license": {"id"}, "embargo_date", "access_conditions" (HTML), "doi",
        "creators": [{"name": "Family, Given", "affiliation"?, "orcid"?, "gnd"?}],
        "contributors": [... + "type"], "thesis": {"university", "supervisors": [person]},
        "keywords": [str], "subjects": [{"term", "identifier", "scheme"}],
        "communities": [{"id"}],
        "grants": [{"code", "title", "acronym", "program",
                    "funder": {"doi", "name", "acronyms", "links"}, "links"}],
        "journal": {"title", "volume", "issue", "pages", "year"},
        "meeting": {"title", "acronym", "dates", "place", "url", "session", "session_part"},
        "imprint": {"publisher", "place", "isbn"}, "part_of": {"title", "pages"},
        "related_identifiers": [{"identifier", "relation", "scheme", "resource_type"?}],
        "alternate_identifiers"?: [{"identifier", "scheme"}],  # or relation isAlternateIdentifier
        "relations": {"version": [...]}, "references": [str], "notes", "method" (HTML), "version",
        "language": ISO 639-2/3 lower case, "dates": [{"start"?, "end"?, "type", "description"?}],
        "locations": [{"lat"?, "lon"?, "place", "description"?}],
      },
    }

Absent optional keys are simply missing. Service DOIs look like `<ctx.doi_prefix>/<namespace>.<recid>`;
any other DOI is external. Control characters XML 1.0 forbids are stripped from every XML and BibTeX
output, so output is always well-formed whatever the record holds.
"""

from __future__ import annotations

from typing import Any

from . import (
    bibtex,
    cff,
    codemeta,
    croissant,
    csl,
    datacite,
    datacite3,
    dublincore,
    jsonformats,
    jsonld,
    linkset,
    marc,
    oai,
    rocrate,
)
from .context import RenderContext
from .format import Render as Render
from .format import RenderPage as RenderPage
from .format import Serializer as Serializer
from .negotiation import negotiate, parse_accept
from .oai import OaiFormat, wrapped


def metadata_formats(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(short name, media type, profile) of each format that describes `record`: every one but the linksets, and
    but those made for other kinds of record (Croissant for datasets...). FAIR Signposting links each as
    `describedby`; the media type is without parameters, as the link's `profile` names the profile."""
    return [(s.name, s.base_type, s.profile) for s in _ALL if s.describes and s.applies(record)]


_ALL = (
    Serializer("v1", "application/vnd.service.v1+json", jsonformats.render_v1, None,
               ("application/vnd.zenodo.v1+json",)),
    Serializer("json", "application/json", jsonformats.render_legacy, jsonformats.render_legacy_page),
    Serializer("marcxml", "application/marcxml+xml", marc.render, marc.render_page, ("application/marc+xml",),
               profile=marc.NS),
    Serializer("bibtex", "application/x-bibtex", bibtex.render, bibtex.render_page, ("text/x-bibtex",)),
    Serializer("datacite", "application/x-registry+xml", datacite.render, datacite.render_page,
               ("application/x-datacite+xml", "application/vnd.datacite.datacite+xml",
                "application/x-datacite-v41+xml"), profile=datacite.NS),
    Serializer("datacite3", "application/x-registry-v3+xml", datacite3.render, datacite3.render_page,
               ("application/x-datacite-v3+xml",), profile=datacite3.NS),
    Serializer("dc", "application/x-dc+xml", dublincore.render, dublincore.render_page, profile=dublincore.NS),
    Serializer("csl", "application/vnd.citationstyles.csl+json", csl.render, csl.render_page),
    Serializer("jsonld", "application/ld+json", jsonld.render, jsonld.render_page, profile=jsonld.PROFILE),
    Serializer("citation", "text/x-bibliography", csl.render_citation, csl.render_citation_page),
    # Formats for some kinds of record (`applies`): a search page holds the documents of those among its records.
    Serializer("rocrate", rocrate.MEDIA_TYPE, rocrate.render, rocrate.render_page, profile=rocrate.PROFILE,
               file_details=True),
    Serializer("croissant", croissant.MEDIA_TYPE, croissant.render, croissant.render_page, profile=croissant.PROFILE,
               applies=croissant.is_dataset, file_details=True),
    Serializer("codemeta", codemeta.MEDIA_TYPE, codemeta.render, codemeta.render_page, profile=codemeta.PROFILE,
               applies=codemeta.is_software),
    Serializer("cff", cff.MEDIA_TYPE, cff.render, cff.render_page, aliases=("application/x-cff",),
               profile=cff.PROFILE, applies=cff.is_citable),
    # FAIR Signposting level 2: the record's links (landing page, files, formats), not a description of it.
    Serializer("linkset", linkset.LINKSET_JSON, *linkset.renderers(linkset.render_json, metadata_formats),
               describes=False),
    Serializer("linkset-text", linkset.LINKSET_TEXT, *linkset.renderers(linkset.render_text, metadata_formats),
               describes=False),
)

# Short name -> serializer; the order is the order 406 messages list the media types in.
REGISTRY: dict[str, Serializer] = {s.name: s for s in _ALL}
DEFAULT = REGISTRY["v1"]
# Formats the search endpoint offers (all of them: each has a page form or, for v1, the envelope).
SEARCH_FORMATS: list[Serializer] = list(_ALL)


def by_media_type(media_type: str) -> Serializer | None:
    """The serializer for a canonical or alias media type, if any."""
    wanted = media_type.lower()
    return next((s for s in _ALL if wanted in s.media_types), None)


# The OAI-PMH formats, in the order ListMetadataFormats lists them; bare DataCite (`registry`, `registry3`) is
# the `<resource>` without the OAI wrapper, as the reference system serves it.
_OAI = (
    OaiFormat("oai_registry", oai.WRAPPER_NS, oai.WRAPPER_SCHEMA, wrapped(datacite), ("oai_datacite",)),
    OaiFormat("oai_registry4", oai.WRAPPER_NS, oai.WRAPPER_SCHEMA, wrapped(datacite), ("oai_datacite4",)),
    OaiFormat("oai_registry3", oai.WRAPPER_NS, oai.WRAPPER_SCHEMA, wrapped(datacite3), ("oai_datacite3",)),
    OaiFormat("registry", datacite.NS, datacite.SCHEMA, datacite.resource_element, ("datacite", "datacite4")),
    OaiFormat("registry3", datacite3.NS, datacite3.SCHEMA, datacite3.resource_element, ("datacite3",)),
    OaiFormat("oai_dc", dublincore.NS, dublincore.SCHEMA, dublincore.dc_element),
    OaiFormat("marc21", marc.NS, marc.SCHEMA, marc.marc_element, ("marcxml",)),
)
# metadataPrefix -> its format; ListMetadataFormats lists each with its aliases.
OAI_FORMATS: dict[str, OaiFormat] = {fmt.prefix: fmt for fmt in _OAI}
# Every prefix and alias -> its format.
OAI_PREFIXES: dict[str, OaiFormat] = {name: fmt for fmt in _OAI for name in (fmt.prefix, *fmt.aliases)}


def oai_format(prefix: str) -> OaiFormat | None:
    """The format of a metadataPrefix or one of the reference's alias prefixes; None if unknown."""
    return OAI_PREFIXES.get(prefix)


__all__ = [
    "DEFAULT", "OAI_FORMATS", "OAI_PREFIXES", "REGISTRY", "SEARCH_FORMATS", "OaiFormat", "RenderContext",
    "Serializer", "by_media_type", "csl", "jsonformats", "metadata_formats", "negotiate", "oai_format", "parse_accept",
]
