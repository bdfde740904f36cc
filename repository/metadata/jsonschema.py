"""A JSON Schema of deposit metadata, derived from the marshmallow schemas that validate the API.

apispec converts every field (types, vocabularies, lengths, ranges, unknown keys refused); the rules
between fields that `schemas.py` and `validation.py` apply are added here as JSON Schema keywords.
What only the service can check (license ids, grants, communities, DOI prefixes, identifier kinds, calendar dates,
ORCID checksums, language codes) is left to it: a document this schema accepts can still get a 400.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow.openapi import OpenAPIConverter
from marshmallow import fields

from repository.metadata.fields import MAX_CUSTOM_VALUES, Custom, IsoDate, License, PrereserveDoi, Text
from repository.metadata.rules import CONFERENCE_DETAILS
from repository.metadata.schemas import DepositMetadataSchema
from repository.search.custom_terms import KEYWORD_TERMS, RELATIONSHIP_TERMS
from repository.vocabularies.resource_types import SUBTYPE_FIELD

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# The validator treats null, blank strings and empty lists as not given; a schema says so with null.
_NULL = {"type": "null"}


def _special_fields(self: OpenAPIConverter, field: Any, ret: dict, **kwargs: Any) -> dict:
    """Properties for the fields that accept more than one JSON type."""
    if isinstance(field, License):
        return {"oneOf": [{"type": "string"}, _object({"id": {"type": "string"}}, required=["id"])]}
    if isinstance(field, PrereserveDoi):
        return {
            "oneOf": [{"type": "boolean"}, _object({"doi": {"type": "string"}, "recid": {"type": "integer"}})]
        }
    if isinstance(field, Custom):
        return _custom_schema()
    if isinstance(field, Text):
        return {"maxLength": field.max_length}
    if isinstance(field, fields.Url):  # marshmallow wants a scheme and a host with a top-level domain
        return {"format": "uri", "pattern": r"^(https?|ftp)://[^\s/?#]+\.[^\s/?#]+"}
    if isinstance(field, IsoDate):
        return {"pattern": r"^\s*[0-9]{4}-[0-9]{2}-[0-9]{2}(\s*$|[T ])"}
    return {}


def _custom_schema() -> dict:
    """Custom metadata: known terms only; keyword terms list strings, relationship terms subject/object pairs."""
    strings = {"type": "array", "items": {"type": "string"}}
    pair = _object({"subject": strings, "object": strings}, required=["subject", "object"])
    properties = {term: {"type": "array", "minItems": 1, "maxItems": MAX_CUSTOM_VALUES, "items": {"type": "string"}}
                  for term in sorted(KEYWORD_TERMS)}  # fmt: skip
    properties |= {term: {"type": "array", "minItems": 1, "maxItems": MAX_CUSTOM_VALUES, "items": pair}
                   for term in sorted(RELATIONSHIP_TERMS)}  # fmt: skip
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _object(properties: dict, required: list[str] | None = None) -> dict:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _converter() -> OpenAPIConverter:
    spec = APISpec("deposit metadata", "1", "3.1.0")
    # A resolver answering None makes apispec inline nested schemas instead of `$ref`-ing components.
    converter = OpenAPIConverter("3.1.0", lambda schema: None, spec)
    converter.map_to_openapi_type(IsoDate, "string", None)  # timestamps are accepted too
    converter.map_to_openapi_type(PrereserveDoi, None, None)
    converter.map_to_openapi_type(License, None, None)
    converter.map_to_openapi_type(Custom, "object", None)
    converter.add_attribute_function(_special_fields)
    return converter


def _nullable(schema: dict) -> None:
    """Optional properties of every object also accept null (the validator ignores null values)."""
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        for sub in (prop, prop.get("items", {})):
            if sub.get("type") == "object":
                _nullable(sub)
        if name not in required:
            schema["properties"][name] = {"anyOf": [prop, _NULL]}


def _item(root: dict, key: str) -> dict:
    """The schema of the items of the list property `key`."""
    return root["properties"][key]["items"]


def _add_cross_field_rules(root: dict) -> None:
    # A name whose family part before the comma is empty is refused (PersonSchema).
    for key in ("creators", "contributors", "thesis_supervisors"):
        _item(root, key)["properties"]["name"]["pattern"] = r"^\s*[^\s,]"
        _item(root, key)["dependentRequired"] = {"affiliation_id": ["affiliation"]}  # the id needs the name
    _item(root, "locations")["dependentRequired"] = {"lat": ["lon"], "lon": ["lat"]}
    _item(root, "dates")["anyOf"] = [{"required": ["start"]}, {"required": ["end"]}]
    # Rules between given fields hold for drafts too: conference dates or place need a title or acronym.
    root["dependentSchemas"] = {
        key: {"anyOf": [{"properties": {key: _NULL}}, _present("conference_title"), _present("conference_acronym")]}
        for key in CONFERENCE_DETAILS
    }


def _present(key: str) -> dict:
    """`key` is given: there and not null (the validator counts null as missing)."""
    return {"required": [key], "properties": {key: {"not": _NULL}}}


def _publish_rules() -> list[dict]:
    """What publishing requires beyond a draft (defaults fill publication_date, access_right, license)."""
    rules = [_present(key) for key in ("upload_type", "title", "creators", "description")]
    rules.append({"properties": {"creators": {"type": "array", "minItems": 1}}})
    for type_, field in SUBTYPE_FIELD.items():
        rules.append({"if": {"properties": {"upload_type": {"const": type_}}}, "then": _present(field)})
    rules.append({"if": {"properties": {"access_right": {"const": "restricted"}}, "required": ["access_right"]},
                  "then": _present("access_conditions")})  # fmt: skip
    return rules


@lru_cache(maxsize=2)
def _build(publish: bool) -> dict[str, Any]:
    converter = _converter()
    # A JSON round trip so that no two properties share one dict when the rules below change them.
    root = json.loads(json.dumps(converter.schema2jsonschema(DepositMetadataSchema)))
    _add_cross_field_rules(root)
    _nullable(root)
    document: dict[str, Any] = {
        "$schema": DRAFT_2020_12,
        "title": "Deposit metadata" + ("" if publish else " (draft)"),
        "description": "The `metadata` of a deposition; also the content of a `.service.json` file.",
        **root,
    }
    if publish:
        document["allOf"] = _publish_rules()
    return document


def deposit_metadata_json_schema(*, publish: bool = True, schema_id: str | None = None) -> dict[str, Any]:
    """JSON Schema (2020-12) of deposit metadata for publishing (or, `publish=False`, a draft); `$id` if given."""
    document = copy.deepcopy(_build(publish))
    if schema_id:
        document = {"$schema": document.pop("$schema"), "$id": schema_id, **document}
    return document
