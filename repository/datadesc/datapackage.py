"""Validate a tabular dataset descriptor (datapackage.json), its codebook and the CSV tables it names."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from .jsonschemas import iter_field_errors
from .report import MAX_ERRORS, DocumentReport, read_document
from .tables import FIELDS, check_table, time_limit_entry

# Where the tables come from: a file name -> a local path or the bytes, or None when there is no such file.
FileSource = Callable[[str], Path | bytes | None]
Files = Mapping[str, Path | bytes] | FileSource

DESCRIPTOR_NAME = "datapackage.json"


def validate_datapackage(
    descriptor: dict[str, Any] | bytes | str, files: Files, deadline: float | None = None
) -> DocumentReport:
    """Validate a descriptor against the profile, check its codebook exists and every CSV it names, row by row;
    tables only until `deadline` (a `time.thread_time()` value) when one is given."""
    parsed, failed = read_document("datapackage", descriptor)
    if failed is not None:
        return failed
    lookup = _lookup(files)
    errors = list(iter_field_errors("tabular-datapackage", parsed))
    truncated = len(errors) > MAX_ERRORS
    del errors[MAX_ERRORS:]
    codebook = parsed.get("codebook")
    if _plain_name(codebook) and lookup(codebook) is None:
        errors.append(
            _field_error(
                "codebook", f"The codebook file {codebook!r} is not among the files.", "missing-file"
            )
        )
    resources = parsed.get("resources") if isinstance(parsed.get("resources"), list) else []
    rows = checked = 0
    for index, resource in enumerate(resources):
        path = resource.get("path") if isinstance(resource, dict) else None
        if not _plain_name(path):
            continue  # the profile has already reported it; never look outside the given files
        source = lookup(path)
        if source is None:
            message = f"The table file {path!r} is not among the files."
            errors.append(_field_error(f"resources.{index}.path", message, "missing-file"))
            continue
        room = MAX_ERRORS - len(errors)
        if room <= 0:
            truncated = True
            break
        name = resource.get("name") if isinstance(resource.get("name"), str) else path
        if deadline is not None and checked and time.thread_time() > deadline:  # the first table always starts
            errors.append(time_limit_entry(name, path, 0))
            truncated = True
            break
        found, counted, stopped = check_table(
            source, _column_names(resource), resource=name, path=path, limit_errors=room, deadline=deadline
        )
        errors.extend(found)
        rows += counted
        checked += 1
        truncated = truncated or stopped
    summary = {
        "resources": len(resources),
        "resources_checked": checked,
        "rows_checked": rows,
        "truncated": truncated,
    }
    return DocumentReport("datapackage", errors, summary)


def table_names(descriptor: dict[str, Any]) -> list[str]:
    """The CSV file names a descriptor names (its resources' paths), for the deposit hook to re-run on."""
    resources = descriptor.get("resources")
    if not isinstance(resources, list):
        return []
    paths = [r.get("path") for r in resources if isinstance(r, dict)]
    return [path for path in paths if _plain_name(path)]


def field_types_for(descriptor: dict[str, Any], csv_name: str) -> dict[str, str]:
    """Column name -> Table Schema type for the resource whose path is `csv_name` ({} if none describes it)."""
    resources = descriptor.get("resources")
    for resource in resources if isinstance(resources, list) else []:
        if isinstance(resource, dict) and resource.get("path") == csv_name:
            schema = resource.get("schema")
            fields = schema.get("fields") if isinstance(schema, dict) else None
            return {
                f["name"]: f["type"]
                for f in (fields if isinstance(fields, list) else [])
                if isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("type"), str)
            }
    return {}


def _column_names(resource: dict[str, Any]) -> list[str]:
    """The columns the descriptor declares, in its order; the seven of the spec when it declares none usable."""
    schema = resource.get("schema")
    fields = schema.get("fields") if isinstance(schema, dict) else None
    names: list[Any] = [f.get("name") for f in fields if isinstance(f, dict)] if isinstance(fields, list) else []
    names = [name for name in names if isinstance(name, str) and name]
    # Duplicate names would confuse the header check; the profile reports them.
    return list(dict.fromkeys(names)) or list(FIELDS)


def _plain_name(name: Any) -> TypeGuard[str]:
    """A bare file name: no folder part, no parent reference, no URL."""
    return (
        isinstance(name, str)
        and bool(name)
        and not name.startswith(".")
        and not any(sep in name for sep in ("/", "\\", ":"))
    )


def _lookup(files: Files) -> FileSource:
    if callable(files):
        return files
    return files.get


def _field_error(field: str, message: str, code: str) -> dict[str, Any]:
    return {"field": field, "message": message, "code": code}


def directory_files(directory: Path) -> FileSource:
    """A FileSource for the regular files directly inside `directory` (what the CLI uses)."""

    def lookup(name: str) -> Path | None:
        if not _plain_name(name):
            return None
        candidate = directory / name
        return candidate if candidate.is_file() else None

    return lookup
