"""The records mapping, read once from `index_templates/records.json`: both engines derive their fields from it."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TEMPLATE_PATH = Path(__file__).resolve().parents[2] / "index_templates" / "records.json"

# The stored copy of the whole record; never searched, only returned.
SOURCE_FIELD = "record"
# The hidden companion of a text field with `index_phrases` (Field.pairs), named as OpenSearch names its own.
PAIRS_SUFFIX = "._index_phrase"


@dataclass(frozen=True)
class Field:
    """One searchable leaf of the mapping, addressed by its dotted path."""

    name: str
    type: str  # text, keyword, long, integer, boolean, date, geo_point
    lowercase: bool = False
    kind: str = ""  # coarse kind used by the compilers: text, keyword, number, boolean, date or geo
    analyzer: str = ""  # of a text field: "words" (stemmed and folded) or "exact" (folded only), docs/search.md
    exact: str = ""  # of a stemmed text field: its unstemmed companion (`title.exact`), which quoted phrases search
    parent: str = ""  # of a companion field: the field whose values it indexes again
    # Of a text field with `index_phrases`: the hidden field holding its adjacent word pairs as single terms, which
    # a phrase on the field looks up before checking positions (OpenSearch's own name for it; docs/search.md).
    pairs: str = ""

    def __post_init__(self) -> None:
        kinds = {"long": "number", "integer": "number", "short": "number", "byte": "number", "geo_point": "geo"}
        object.__setattr__(self, "kind", kinds.get(self.type, self.type))


def load_template(path: Path | None = None) -> dict[str, Any]:
    """The index template as a dict."""
    return json.loads((path or TEMPLATE_PATH).read_text(encoding="utf-8"))


def _flatten(properties: dict[str, Any], prefix: str = "") -> dict[str, Field]:
    found: dict[str, Field] = {}
    for name, spec in properties.items():
        path = f"{prefix}{name}"
        if "properties" in spec:
            found.update(_flatten(spec["properties"], path + "."))
        elif spec.get("type") == "object" or spec.get("enabled") is False:
            continue  # stored only (the record copy)
        else:
            companions = spec.get("fields") or {}
            exact = f"{path}.exact" if "exact" in companions else ""
            found[path] = Field(path, spec["type"], spec.get("normalizer") == "lowercase",
                                analyzer=spec.get("analyzer", ""), exact=exact, pairs=_pairs(path, spec))
            for sub, sub_spec in companions.items():
                found[f"{path}.{sub}"] = Field(f"{path}.{sub}", sub_spec["type"], analyzer=sub_spec.get("analyzer", ""),
                                               parent=path, pairs=_pairs(f"{path}.{sub}", sub_spec))
    return found


def _pairs(path: str, spec: dict[str, Any]) -> str:
    return f"{path}{PAIRS_SUFFIX}" if spec.get("type") == "text" and spec.get("index_phrases") else ""


def fields_of(template: dict[str, Any]) -> dict[str, Field]:
    """Every indexed leaf field of a template, by dotted name."""
    return _flatten(template["template"]["mappings"]["properties"])


@functools.cache
def fields() -> dict[str, Field]:
    """The indexed fields of the records template shipped with the project."""
    return fields_of(load_template())


# The digest of the template before the text fields gained stemming and their `.exact` companions: documents
# stored in that form are upgraded on the way into a reindex (each engine's `upgrades`), not built again.
BEFORE_STEMMING = "ee8db6d5"
# The digest before the unstemmed companions gained `index_phrases`: the embedded engine adds the word pairs as it
# indexes a document (tantivy_query.add_json), so documents stored in that form are the current form.
BEFORE_PAIRS = "acb03003"


@functools.cache
def template_digest() -> str:
    """A short digest of the shipped template: part of the engine-ready form's name, so a mapping change makes every
    stored document stale."""
    return hashlib.sha256(TEMPLATE_PATH.read_bytes()).hexdigest()[:8]
