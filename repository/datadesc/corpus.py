"""Validate a software corpus document against its JSON Schema."""

from __future__ import annotations

from typing import Any

from .jsonschemas import iter_field_errors
from .report import MAX_ERRORS, DocumentReport, read_document


def validate_software_corpus(doc: dict[str, Any] | bytes | str) -> DocumentReport:
    """Validate a software corpus document (parsed, or raw JSON bytes/text); every violation has a field path."""
    parsed, failed = read_document("software_corpus", doc)
    if failed is not None:
        return failed
    errors: list[dict[str, Any]] = []
    truncated = False
    for entry in iter_field_errors("software-corpus", parsed):
        if len(errors) == MAX_ERRORS:
            truncated = True
            break
        errors.append(entry)
    return DocumentReport("software_corpus", errors, {**_counts(parsed), "truncated": truncated})


def _counts(doc: dict[str, Any]) -> dict[str, int]:
    """How much the document holds, counted only where its shape allows."""
    software = doc.get("research_software")
    software = [s for s in software if isinstance(s, dict)] if isinstance(software, list) else []
    mentions = sum(len(s["mentions"]) for s in software if isinstance(s.get("mentions"), list))
    return {"research_software": len(software), "mentions": mentions}
