"""Check the rows of one CSV table against the seven fields, streaming, with the frictionless library."""

from __future__ import annotations

import io
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO

import attrs
from frictionless import Check, Checklist, Dialect, Error, Resource, Schema, errors
from frictionless.formats import CsvControl

from .countries import country_code

# "NA" is also Namibia's alpha-2 code. The descriptor's missing-value markers are applied first, so a
# cell reading exactly "NA" is a missing value, never Namibia; write "Namibia" or "NAM" for the country.
MISSING_VALUES = ["", "NA", "N/A", "null", "NULL", "NaN"]

# The spec's seven fields; `year` is the one field the spec does not call optional, so it is required.
FIELDS: dict[str, dict[str, Any]] = {
    "country": {"type": "string"},
    "year": {"type": "integer", "constraints": {"required": True, "minimum": 1990, "maximum": 2030}},
    "value": {"type": "number"},
    "indicator": {"type": "string"},
    "source": {"type": "string"},
    "unit": {"type": "string"},
    "notes": {"type": "string"},
}


@attrs.define(kw_only=True, repr=False)
class country_value(Check):  # noqa: N801 - frictionless names checks like their types
    """A `country` cell must name a country that has an ISO 3166-1 alpha-2 code."""

    type = "country-value"
    Errors = [errors.ConstraintError]

    def validate_row(self, row: Any) -> Iterable[Error]:
        """Yield a constraint error for a country cell that maps to no alpha-2 code."""
        if "country" not in row.field_names:
            return
        cell = row["country"]
        if isinstance(cell, str) and country_code(cell) is None:
            yield errors.ConstraintError.from_row(
                row,
                note=f"{cell!r} is not an ISO 3166-1 country name or alpha-2/alpha-3 code",
                field_name="country",
            )


def table_schema(names: Sequence[str]) -> dict[str, Any]:
    """The frictionless schema for the given column order; names outside the seven are plain strings."""
    fields = [{"name": name, **FIELDS.get(name, {"type": "string"})} for name in names]
    return {"fields": fields, "missingValues": MISSING_VALUES}


class _Budgeted(io.RawIOBase):
    """A local file read until a CPU-time deadline (of this thread) has passed, then up to the end of the line
    being read and no further: validation stops there, on a row boundary, as if the file ended."""

    def __init__(self, raw: BinaryIO, deadline: float) -> None:
        self.raw = raw
        self.name = raw.name  # frictionless reads local streams only, and tells them by their name
        self.deadline = deadline
        self.cut = False  # whether the last pass over the file stopped early
        self._lines = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.cut = self._lines = False  # frictionless reads a sample first, then the whole file again
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def readinto(self, buffer: Any) -> int:
        if self.cut:
            return 0
        data = self.raw.read(len(buffer))
        if self._lines and time.thread_time() > self.deadline:  # the header always passes whole
            end = data.find(b"\n")
            if end >= 0:
                data, self.cut = data[: end + 1], True
        self._lines = self._lines or b"\n" in data
        buffer[: len(data)] = data
        return len(data)


def check_table(
    source: Path | bytes,
    names: Sequence[str],
    *,
    resource: str,
    path: str,
    limit_errors: int,
    deadline: float | None = None,
) -> tuple[list[dict[str, Any]], int, bool]:
    """Validate one CSV (a local file path, or bytes) row by row: (errors, rows checked, stopped early).

    With a `deadline` (a `time.thread_time()` value), a file is read until then only: an error entry coded
    `time-limit` says where its check stopped."""
    if isinstance(source, bytes):
        return _check(source, names, resource, path, limit_errors)
    # An opened local file streams through frictionless; a path string could make it fetch a URL.
    with open(source, "rb") as stream:
        if deadline is None:
            return _check(stream, names, resource, path, limit_errors)
        budgeted = _Budgeted(stream, deadline)
        entries, rows, stopped = _check(io.BufferedReader(budgeted), names, resource, path, limit_errors)
        if budgeted.cut:
            entries.append(time_limit_entry(resource, path, rows))
        return entries, rows, stopped or budgeted.cut


def time_limit_entry(resource: str, path: str, rows: int) -> dict[str, Any]:
    """The report entry of a table whose check ran out of time after `rows` rows."""
    message = (f"Validation ran out of time after {rows} row(s) of {path}: the rest was not checked. Deposit the "
               "files to have them validated whole, in the background.")  # fmt: skip
    return {"resource": resource, "path": path, "row": None, "column": None, "column_number": None,
            "message": message, "code": "time-limit"}  # fmt: skip


def _check(
    data: IO[bytes] | bytes, names: Sequence[str], resource: str, path: str, limit_errors: int
) -> tuple[list[dict[str, Any]], int, bool]:
    table = Resource(
        data=data,
        format="csv",
        encoding="utf-8",
        dialect=Dialect(controls=[CsvControl(delimiter=",")]),
        schema=Schema.from_descriptor(table_schema(names)),
    )
    report = table.validate(Checklist(checks=[country_value()]), limit_errors=max(limit_errors, 1))
    task = report.tasks[0] if report.tasks else None
    found = list(task.errors if task else report.errors)
    entries = [_entry(error, resource, path) for error in found[:limit_errors]]
    rows = int(task.stats.get("rows") or 0) if task else 0
    stopped = bool(task and any("error limit" in warning for warning in task.warnings))
    return entries, rows, stopped or len(found) > limit_errors


def _entry(error: Any, resource: str, path: str) -> dict[str, Any]:
    """A frictionless error as a report entry: resource, file, row (the header is row 1) and column."""
    row = getattr(error, "row_number", None)
    if row is None:
        numbers = getattr(error, "row_numbers", None)
        row = numbers[0] if numbers else None
    column = getattr(error, "field_name", None) or getattr(error, "label", None)
    return {
        "resource": resource,
        "path": path,
        "row": row,
        "column": column,
        "column_number": getattr(error, "field_number", None),
        "message": error.message,
        "code": error.type,
    }
