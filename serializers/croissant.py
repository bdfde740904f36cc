"""Croissant 1.0 (http://mlcommons.org/croissant/1.0): a dataset record as machine-learning tools load it.

The files are `cr:FileObject`s (download URL, media type, size, MD5 and the SHA-256 where the record has it).
A CSV file whose columns a tabular descriptor of the record describes (`fields` on its file entry: the repository
reads the record's `datapackage.json`, see repository/records/tables.py) also gets a `cr:RecordSet` whose fields
take their `dataType` from the descriptor's Table Schema types. Only datasets: Croissant describes nothing else,
and a record of another type is refused (NotDescribable, the API's 406).

The `@context` is the one the Croissant 1.0 specification gives every document (its section "Croissant
context"), written out in full: a consumer need not fetch anything to read the terms.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import quote

import orjson

from . import bibtex
from .context import RenderContext
from .errors import NotDescribable
from .linkset import file_media_type
from .text import doi_url, license_info, strip_html
from .vocabulary import type_info

PROFILE = "http://mlcommons.org/croissant/1.0"
MEDIA_TYPE = f'application/ld+json; profile="{PROFILE}"'
CONTEXT: dict[str, Any] = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/", "equivalentProperty": "cr:equivalentProperty", "examples": {"@id": "cr:examples", "@type": "@json"}, "extract": "cr:extract",
    "field": "cr:field", "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject", "fileSet": "cr:fileSet",
    "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset", "jsonPath": "cr:jsonPath",
    "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path", "recordSet": "cr:recordSet",
    "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated", "replace": "cr:replace",
    "samplingRate": "cr:samplingRate", "sc": "https://schema.org/", "separator": "cr:separator", "source": "cr:source", "subField": "cr:subField",
    "transform": "cr:transform",
}  # fmt: skip
# Table Schema field types (https://specs.frictionlessdata.io/table-schema/#types-and-formats) -> Croissant data
# types; the others (object, array, duration, geopoint...) are read as text, which every value can be.
DATA_TYPES = {"string": "sc:Text", "integer": "sc:Integer", "number": "sc:Float", "boolean": "sc:Boolean",
              "date": "sc:Date", "datetime": "sc:DateTime", "time": "sc:Time", "year": "sc:Integer"}


def is_dataset(record: dict[str, Any]) -> bool:
    """Whether Croissant can describe the record: a dataset."""
    return type_info(record.get("metadata", {})).type == "dataset"


def _person(person: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"@type": "sc:Person", "name": person["name"]}
    if person.get("orcid"):
        out["url"] = f"https://orcid.org/{person['orcid']}"
    if person.get("affiliation"):
        out["affiliation"] = {"@type": "sc:Organization", "name": person["affiliation"]}
    return out


def _file_object(item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"@type": "cr:FileObject", "@id": quote(item["key"], safe="/"), "name": item["key"],
                           "contentUrl": item["links"]["self"], "encodingFormat": file_media_type(item["key"]),
                           "contentSize": f"{item['size']} B"}
    if item.get("checksum", "").startswith("md5:"):
        out["md5"] = item["checksum"][4:]
    if item.get("sha256"):
        out["sha256"] = item["sha256"]
    return out


def _record_set(item: dict[str, Any]) -> dict[str, Any]:
    """The record set of a described CSV file: one field per column of its descriptor."""
    file_ref = quote(item["key"], safe="/")
    set_id = f"{file_ref}/records"
    fields = []
    for column in item["fields"]:
        field: dict[str, Any] = {
            "@type": "cr:Field", "@id": f"{set_id}/{quote(column['name'], safe='')}", "name": column["name"],
            "dataType": DATA_TYPES.get(column.get("type", "string"), "sc:Text"),
            "source": {"fileObject": {"@id": file_ref}, "extract": {"column": column["name"]}},
        }
        if column.get("description"):
            field["description"] = column["description"]
        fields.append(field)
    return {"@type": "cr:RecordSet", "@id": set_id, "name": f"{item['key']} records", "field": fields}


def croissant(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """A dataset record as a Croissant 1.0 document; NotDescribable for any other type."""
    if not is_dataset(record):
        raise NotDescribable("Croissant describes datasets only; this record is not one.", "format",
                             "Croissant (format=croissant) is available for datasets only.")
    md = record.get("metadata", {})
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    files = record.get("files", [])
    out: dict[str, Any] = {
        "@context": copy.deepcopy(CONTEXT),  # a document of its own: a consumer may change it (mlcroissant does)
        "@type": "sc:Dataset",
        "conformsTo": PROFILE,
        "name": md.get("title", ""),
        "description": strip_html(md.get("description")) or md.get("title", ""),
        "url": record.get("links", {}).get("html") or ctx.record_html(record["id"]),
        "citeAs": bibtex.render(record, ctx).decode(),
        "creator": [_person(c) for c in md.get("creators", [])],
        "datePublished": md.get("publication_date", ""),
        "publisher": {"@type": "sc:Organization", "name": ctx.publisher, "url": ctx.base_url + "/"},
    }
    if lic.get("url") or lic.get("id"):
        out["license"] = lic.get("url") or lic["id"]
    if record.get("doi"):
        out["identifier"] = doi_url(record["doi"])
    if md.get("version"):
        out["version"] = md["version"]
    if md.get("keywords"):
        out["keywords"] = list(md["keywords"])
    if files:
        out["distribution"] = [_file_object(item) for item in files]
    record_sets = [_record_set(item) for item in files if item.get("fields")]
    if record_sets:
        out["recordSet"] = record_sets
    return out


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One dataset record as Croissant JSON-LD."""
    return orjson.dumps(croissant(record, ctx))


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as a JSON array of the Croissant documents of its datasets (the other records left out)."""
    return orjson.dumps([croissant(record, ctx) for record in records if is_dataset(record)])
