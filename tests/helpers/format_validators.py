"""The communities' own validators, run offline.

- RO-Crate: roc-validator (`rocrate_validator.services.validate`), REQUIRED level of the `ro-crate-1.1` profile. It
  fetches the crate's `@context` to check its terms; its HTTP client is given the RO-Crate 1.1 context from
  tests/data instead (the published https://w3id.org/ro/crate/1.1/context, version 1.1.3), and any other URL
  answers 404, so nothing reaches the network.
- Croissant: mlcroissant's `Dataset(jsonld=...)`, which raises on any error of the document (it fetches nothing
  for a document whose `@context` is written out, as ours is).
- CFF: the CFF 1.2.0 JSON schema cffconvert validates with (tests/data/cff-1.2.0-schema.json, from cffconvert
  2.0.0), with the jsonschema the project has: cffconvert itself pins jsonschema<4, which the project's
  jsonschema>=4.22 excludes, so it cannot be installed beside it.
- CodeMeta: every term of the document (keys and `@type` values) is defined by the CodeMeta 3.0 context
  (tests/data/codemeta-3.0.jsonld, codemeta/codemeta at tag 3.0), and rdflib reads the document with that context
  into RDF whose predicates are all schema.org's or CodeMeta's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import requests
import yaml

DATA = Path(__file__).resolve().parent.parent / "data"  # tests/data
CONTEXTS = {"https://w3id.org/ro/crate/1.1/context": DATA / "ro-crate-1.1-context.jsonld"}


def _offline_get(self: object, url: str, *args: Any, **kwargs: Any) -> requests.Response:
    response = requests.Response()
    response.url = url
    if url in CONTEXTS:
        response.status_code = 200
        response.headers["Content-Type"] = "application/ld+json"
        response._content = CONTEXTS[url].read_bytes()  # noqa: SLF001 - a response made by hand
    else:
        response.status_code = 404
        response._content = b""  # noqa: SLF001
    return response


def rocrate_issues(monkeypatch: Any, *, metadata: dict[str, Any] | None = None, folder: Path | None = None) -> list[str]:
    """The REQUIRED issues roc-validator finds in a crate: its metadata alone (`metadata`), or a crate folder
    (`folder`, its files checked too). [] for a valid crate."""
    from rocrate_validator import services
    from rocrate_validator.utils.http import HttpRequester

    monkeypatch.setattr(HttpRequester, "get", _offline_get, raising=False)
    monkeypatch.setattr(HttpRequester, "head", _offline_get, raising=False)
    settings: dict[str, Any] = {"profile_identifier": "ro-crate-1.1", "requirement_severity": "REQUIRED",
                                "offline": True}
    if metadata is not None:
        settings |= {"metadata_dict": metadata, "metadata_only": True}
    else:
        settings["rocrate_uri"] = str(folder)
    result = services.validate(settings)
    return [issue.message for issue in result.get_issues()] + ([] if result.passed() else ["not passed"])


def croissant_warnings(document: dict[str, Any]) -> set[str]:
    """Load a Croissant document with mlcroissant (which raises on any error); its warnings."""
    import mlcroissant

    dataset = mlcroissant.Dataset(jsonld=document)
    return set(dataset.metadata.ctx.issues.warnings)


def cff_errors(text: str) -> list[str]:
    """The errors of a CITATION.cff against the CFF 1.2.0 schema (YAML read as cffconvert reads it, every value a
    string, number, list or mapping)."""
    schema = json.loads((DATA / "cff-1.2.0-schema.json").read_text())
    document = yaml.safe_load(text)
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def codemeta_context() -> dict[str, Any]:
    """The CodeMeta 3.0 context's term definitions."""
    context: dict[str, Any] = json.loads((DATA / "codemeta-3.0.jsonld").read_text())["@context"]
    return context


def _terms(node: Any) -> Iterator[str]:
    if isinstance(node, list):
        for item in node:
            yield from _terms(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "@type":
                yield from value if isinstance(value, list) else [value]
            elif not key.startswith("@"):
                yield key
                yield from _terms(value)


def codemeta_undefined_terms(document: dict[str, Any]) -> set[str]:
    """Keys and types of a CodeMeta document its context does not define."""
    context = codemeta_context()
    return {term for term in _terms(document) if term not in context}


def codemeta_predicates(document: dict[str, Any]) -> set[str]:
    """The predicates of the document read as JSON-LD with the CodeMeta 3.0 context given offline."""
    import rdflib

    offline = {**document, "@context": codemeta_context()}
    graph = rdflib.Graph().parse(data=json.dumps(offline), format="json-ld")
    return {str(predicate) for predicate in graph.predicates()}
