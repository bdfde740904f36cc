"""Data-description documents: software corpus documents and tabular data packages (issue 10).

Decisions where the specification is silent, so that readers of a report know the rules:
- Every descriptor field the specification lists is required. The codebook is a file, not a field:
  a descriptor may name it with a top-level `codebook` key (a plain file name), and then that file
  must be among the deposit's files; a descriptor without the key is not faulted for it.
- The missing-value markers are applied before any other rule, so a cell reading exactly "NA" is
  missing, never Namibia (write "Namibia" or "NAM"). `country` accepts names, official and common
  names and alpha-2/alpha-3 codes, case-insensitively; numeric codes are refused.
- `year` is required in every row (it is the one field the specification does not call optional).
- The CSV header must list the descriptor's fields in the descriptor's order.
- MentionedVersion allows extra properties: it is the one object the specification does not close.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from .corpus import validate_software_corpus
from .datapackage import (
    DESCRIPTOR_NAME,
    Files,
    FileSource,
    directory_files,
    field_types_for,
    table_names,
    validate_datapackage,
)
from .jsonschemas import SCHEMA_FILES, load_schema, schema_bytes
from .preview import MAX_LIMIT, build_preview_db, query_preview
from .report import KINDS, DocumentError, DocumentReport, Kind, kind_named, parse_json, pending

__all__ = [
    "DESCRIPTOR_NAME",
    "MAX_LIMIT",
    "SCHEMA_FILES",
    "DocumentReport",
    "FileSource",
    "Files",
    "KINDS",
    "Kind",
    "build_preview_db",
    "detect_kind",
    "directory_files",
    "field_types_for",
    "kind_named",
    "load_schema",
    "parse_json",
    "pending",
    "query_preview",
    "schema_bytes",
    "table_names",
    "validate_datapackage",
    "validate_document",
    "validate_software_corpus",
]

_CORPUS_KEY = b'"research_software"'


def detect_kind(filename: str, data: bytes) -> Kind | None:
    """`datapackage` for a file named datapackage.json, `software_corpus` for a JSON object with research_software."""
    name = PurePosixPath(filename.replace("\\", "/")).name.lower()
    if name == DESCRIPTOR_NAME:
        return "datapackage"
    # Cheap test first: most uploads are not JSON at all and must not be parsed.
    if not name.endswith(".json") or _CORPUS_KEY not in data:
        return None
    try:
        doc = parse_json(data)
    except DocumentError as exc:
        # Nested past the bound: a document after all (it names the key), whose report will say why it is invalid.
        return "software_corpus" if exc.entry.get("code") == "depth" else None
    except ValueError:
        return None
    return "software_corpus" if isinstance(doc, dict) and "research_software" in doc else None


def validate_document(
    kind: Kind, data: bytes | dict[str, Any], files: Files | None = None, deadline: float | None = None
) -> DocumentReport:
    """Validate a document of the given kind; `files` supplies the tables and codebook of a data package, whose
    rows are checked until `deadline` (a `time.thread_time()` value) when one is given."""
    if kind == "software_corpus":
        return validate_software_corpus(data)
    return validate_datapackage(data, files if files is not None else {}, deadline)
