"""RO-Crate 1.1 (https://w3id.org/ro/crate/1.1): a record's `ro-crate-metadata.json`.

Two forms of one crate. Served by the record API (`?format=rocrate`) it is a detached crate: its files are web-based
data entities whose `@id` is their download URL, since no folder holds them. Inside the RO-Crate archive
(`files-archive?format=rocrate`) it is attached: the files sit beside the metadata file and their `@id` is their
path in the zip, percent-encoded as a URI path (RO-Crate 1.1 §Data entities).

The 1.1 context (schema.org 10) has no term for a checksum; the crate's context adds two, as RO-Crate's
"ad hoc terms" section allows: `sha256` (schema.org's, added after version 10) and `md5` (the one Croissant defines
for the same purpose), rather than dropping the record's fixity information.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import orjson

from .context import RenderContext
from .linkset import file_media_type
from .text import doi_url, license_info, strip_html

PROFILE = "https://w3id.org/ro/crate/1.1"
CONTEXT = "https://w3id.org/ro/crate/1.1/context"
MEDIA_TYPE = f'application/ld+json; profile="{PROFILE}"'
METADATA_NAME = "ro-crate-metadata.json"
CHECKSUM_TERMS = {"sha256": "http://schema.org/sha256", "md5": "http://mlcommons.org/croissant/md5"}


def _one_or_many(values: list[Any]) -> Any:
    """One value bare, several as an array (the compact form RO-Crate asks for)."""
    return values[0] if len(values) == 1 else list(values)  # a list of its own, not the record's


def _people(md: dict[str, Any]) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """(references from the root, the Person and Organization entities) of the creators. A creator without an
    ORCID gets a local `#` identifier: RO-Crate wants every entity flat in the graph, referenced by `@id`."""
    refs: list[dict[str, str]] = []
    entities: list[dict[str, Any]] = []
    organizations: dict[str, str] = {}
    for index, person in enumerate(md.get("creators", [])):
        person_id = f"https://orcid.org/{person['orcid']}" if person.get("orcid") else f"#creator-{index + 1}"
        entity: dict[str, Any] = {"@id": person_id, "@type": "Person", "name": person["name"]}
        if person.get("affiliation"):
            org_id = organizations.setdefault(person["affiliation"], f"#organization-{len(organizations) + 1}")
            entity["affiliation"] = {"@id": org_id}
        refs.append({"@id": person_id})
        if all(e["@id"] != person_id for e in entities):  # the same ORCID twice: one entity, referenced twice
            entities.append(entity)
    entities += [{"@id": org_id, "@type": "Organization", "name": name} for name, org_id in organizations.items()]
    return refs, entities


def file_id(item: dict[str, Any], packaged: bool) -> str:
    """A file's `@id`: its path in the zip (a URI path) when packaged, else its download URL."""
    return quote(item["key"], safe="/") if packaged else item["links"]["self"]


def _file(item: dict[str, Any], packaged: bool) -> dict[str, Any]:
    entity: dict[str, Any] = {"@id": file_id(item, packaged), "@type": "File", "name": item["key"],
                              "contentSize": str(item["size"]), "encodingFormat": file_media_type(item["key"])}
    if not packaged:
        entity["contentUrl"] = item["links"]["self"]
    checksum = item.get("checksum", "")
    if checksum.startswith("md5:"):
        entity["md5"] = checksum[4:]
    if item.get("sha256"):
        entity["sha256"] = item["sha256"]
    return entity


def crate(record: dict[str, Any], ctx: RenderContext, *, packaged: bool = False) -> dict[str, Any]:
    """The RO-Crate metadata document of a record; `packaged`: as the archive holds it, beside the files."""
    md = record.get("metadata", {})
    files = record.get("files", [])
    authors, people = _people(md)
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    root: dict[str, Any] = {
        "@id": "./",
        "@type": "Dataset",
        "name": md.get("title", ""),
        "description": strip_html(md.get("description")) or md.get("title", ""),
        "datePublished": md.get("publication_date", ""),
        "url": record.get("links", {}).get("html") or ctx.record_html(record["id"]),
        "publisher": {"@id": ctx.base_url + "/"},
    }
    if record.get("doi"):
        root["identifier"] = doi_url(record["doi"])
    if md.get("version"):
        root["version"] = md["version"]
    if md.get("keywords"):
        root["keywords"] = _one_or_many(md["keywords"])
    if authors:
        root["author"] = _one_or_many(authors)
    contextual: list[dict[str, Any]] = [*people]
    if lic.get("url"):
        root["license"] = {"@id": lic["url"]}
        contextual.append({"@id": lic["url"], "@type": "CreativeWork", "name": lic.get("title") or lic["id"],
                           "identifier": lic["id"]})
    elif lic.get("id"):
        root["license"] = lic["id"]  # a license with no URL: its name as text, which 1.1 allows
    else:
        # Closed and restricted records carry no license, and a crate's root must have one: say what applies.
        root["license"] = {"@id": "#license"}
        terms = strip_html(md.get("access_conditions")) or f"Access: {md.get('access_right', 'closed')}."
        contextual.append({"@id": "#license", "@type": "CreativeWork", "name": "No license (all rights reserved)",
                           "description": terms})
    if files:
        root["hasPart"] = _one_or_many([{"@id": file_id(item, packaged)} for item in files])
    contextual.append({"@id": ctx.base_url + "/", "@type": "Organization", "name": ctx.publisher,
                       "url": ctx.base_url + "/"})
    descriptor = {"@id": METADATA_NAME, "@type": "CreativeWork", "conformsTo": {"@id": PROFILE},
                  "about": {"@id": "./"}}
    return {"@context": [CONTEXT, dict(CHECKSUM_TERMS)],
            "@graph": [descriptor, root, *[_file(item, packaged) for item in files], *contextual]}


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as a detached RO-Crate's `ro-crate-metadata.json`."""
    return orjson.dumps(crate(record, ctx))


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as a JSON array of detached crates, one a record."""
    return orjson.dumps([crate(record, ctx) for record in records])


def render_packaged(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """The `ro-crate-metadata.json` of the record's RO-Crate archive (indented: people read it in the zip)."""
    return orjson.dumps(crate(record, ctx, packaged=True), option=orjson.OPT_INDENT_2)
