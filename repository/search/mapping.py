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


@dataclass(frozen=True)
class Field:
    """One searchable leaf of the mapping, addressed by its dotted path."""

    name: str
    type: str  # text, keyword, long, integer, boolean, date, geo_point
    lowercase: bool = False
    kind: str = ""  # coarse kind used by the compilers: text, keyword, number, boolean, date or geo

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
            found[path] = Field(path, spec["type"], spec.get("normalizer") == "lowercase")
    return found


def fields_of(template: dict[str, Any]) -> dict[str, Field]:
    """Every indexed leaf field of a template, by dotted name."""
    return _flatten(template["template"]["mappings"]["properties"])


@functools.cache
def fields() -> dict[str, Field]:
    """The indexed fields of the records template shipped with the project."""
    return fields_of(load_template())


@functools.cache
def template_digest() -> str:
    """A short digest of the shipped template: part of the engine-ready form's name, so a mapping change makes every
    stored document stale."""
    return hashlib.sha256(TEMPLATE_PATH.read_bytes()).hexdigest()[:8]
