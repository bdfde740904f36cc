"""Validation reports, and reading JSON documents with the line and column of a syntax error."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from repository.jsonlimits import ShapeError, loads_bounded

Kind = Literal["software_corpus", "datapackage"]
KINDS: tuple[Kind, ...] = ("software_corpus", "datapackage")


def kind_named(name: str | None) -> Kind | None:
    """The kind spelled `name` (`?kind=`, `--kind`), or None for no name or a word that is no kind."""
    return next((kind for kind in KINDS if kind == name), None)

# A report never grows without bound: after this many errors validation stops and says so.
MAX_ERRORS = 1000
# A JSON document is parsed whole, so its size is bounded; tables stream and have no such limit.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


@dataclass
class DocumentReport:
    """The outcome of validating one document: its errors (each with a location) and a summary."""

    kind: Kind
    errors: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> Literal["valid", "invalid"]:
        """`valid` when there is no error at all."""
        return "invalid" if self.errors else "valid"

    @property
    def valid(self) -> bool:
        """True when there is no error."""
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data: `{kind, status, errors, summary}`."""
        summary = {**self.summary, "errors": len(self.errors)}
        return {"kind": self.kind, "status": self.status, "errors": list(self.errors), "summary": summary}


def pending(kind: Kind) -> dict[str, Any]:
    """The report body to show while a background validation has not finished."""
    return {"kind": kind, "status": "pending", "errors": [], "summary": {}}


class DocumentError(ValueError):
    """A document that cannot be read as JSON; `entry` is its report error with line and column."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry
        super().__init__(entry["message"])


def _reject_constant(name: str) -> None:
    # NaN and Infinity are Python extensions, not JSON.
    raise ValueError(f"{name} is not valid JSON")


def parse_json(data: bytes | str) -> Any:
    """Parse strict JSON from UTF-8 bytes or text; DocumentError gives the line and column of a problem."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DocumentError(
                {
                    "message": f"Not UTF-8 text (byte {exc.start}).",
                    "code": "encoding",
                    "position": {"byte": exc.start},
                }
            ) from exc
    else:
        text = data
    try:
        return loads_bounded(text, parse_constant=_reject_constant)
    except ShapeError as exc:
        raise DocumentError({"field": "", "message": f"The document is {exc}.", "code": "depth"}) from None
    except json.JSONDecodeError as exc:
        raise DocumentError(
            {
                "message": f"Invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).",
                "code": "json",
                "position": {"line": exc.lineno, "column": exc.colno},
            }
        ) from exc
    except ValueError as exc:
        raise DocumentError({"message": f"Invalid JSON: {exc}.", "code": "json"}) from exc


def read_document(kind: Kind, doc: dict[str, Any] | bytes | str) -> tuple[Any, DocumentReport | None]:
    """The parsed document, or None and an invalid report when it is not JSON or not an object."""
    if isinstance(doc, bytes | str):
        if len(doc) > MAX_DOCUMENT_BYTES:
            message = f"The document is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB."
            return None, DocumentReport(kind, [{"field": "", "message": message, "code": "too-large"}])
        try:
            doc = parse_json(doc)
        except DocumentError as exc:
            return None, DocumentReport(kind, [exc.entry])
    if not isinstance(doc, dict):
        return None, DocumentReport(
            kind, [{"field": "", "message": "The document must be a JSON object.", "code": "type"}]
        )
    return doc, None
