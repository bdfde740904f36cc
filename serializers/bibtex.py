"""BibTeX (docs/reference-behaviour.md#bibtex): entry type from the resource-type table, stable keys, LaTeX-escaped values."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .context import RenderContext
from .text import cleaned, date_parts, doi_url, strip_html, year_of
from .vocabulary import type_info

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_SPECIAL_RE = re.compile("|".join(re.escape(ch) for ch in _SPECIAL))
_SPACES = re.compile(r"\s+")

# The fields each entry type requires (BibTeX's standard types, as the reference checks them, §13.1); the
# resource-type table says which types to try for a record, @misc fitting when none does.
_REQUIRED: dict[str, tuple[str, ...]] = {
    "article": ("author", "title", "journal", "year"),
    "book": ("author", "title", "publisher", "year"),
    "booklet": ("title",),
    "incollection": ("author", "title", "booktitle", "publisher", "year"),
    "inproceedings": ("author", "title", "booktitle", "year"),
    "proceedings": ("title", "year"),
    "unpublished": ("author", "title", "note"),
    "phdthesis": ("author", "title", "school", "year"),
    "manual": ("title",),
    "techreport": ("author", "title", "institution", "year"),
    "dataset": (),
    "software": (),
}
_ORDER = ("author", "editor", "title", "booktitle", "journal", "volume", "number", "pages", "school",
          "institution", "publisher", "address", "isbn", "month", "year", "note", "version", "keywords")


def escape(value: str) -> str:
    """LaTeX-escape the characters BibTeX or LaTeX would misread; Unicode stays as UTF-8."""
    return _SPACES.sub(" ", _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group()], value)).strip()


def _name(name: str) -> str:
    # A name without a comma (often an organisation) or containing " and " is braced so BibTeX keeps it whole.
    text = escape(name)
    if "," not in name or " and " in name:
        return "{" + text + "}"
    return text


def entry_key(record: dict[str, Any]) -> str:
    """`<ascii slug of the first creator>_<year>_<recid>`, the reference's stable key."""
    md = record.get("metadata", {})
    creators = md.get("creators") or []
    first = creators[0]["name"].split(",")[0] if creators else ""
    ascii_name = unicodedata.normalize("NFKD", first).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_name.lower()).strip("_")[:40].strip("_") or "record"
    year = year_of(md.get("publication_date"))
    return f"{slug}_{year}_{record['id']}" if year else f"{slug}_{record['id']}"


def _fields(record: dict[str, Any], ctx: RenderContext) -> dict[str, str]:
    md = record.get("metadata", {})
    journal, imprint = md.get("journal") or {}, md.get("imprint") or {}
    part_of, meeting, thesis = md.get("part_of") or {}, md.get("meeting") or {}, md.get("thesis") or {}
    parts = date_parts(md.get("publication_date"))
    editors = [c for c in md.get("contributors", []) if c.get("type") == "Editor"]
    fields = {
        "author": " and ".join(_name(c["name"]) for c in md.get("creators", [])),
        "editor": " and ".join(_name(c["name"]) for c in editors),
        "title": escape(md.get("title", "")),
        "booktitle": escape(part_of.get("title") or meeting.get("title") or ""),
        "journal": escape(journal.get("title", "")),
        "volume": escape(journal.get("volume", "")),
        "number": escape(journal.get("issue", "")),
        "pages": escape(journal.get("pages") or part_of.get("pages") or "").replace("-", "--").replace("----", "--"),
        "school": escape(thesis.get("university", "")),
        "institution": escape(imprint.get("publisher", "")),
        "publisher": escape(imprint.get("publisher") or ctx.publisher),
        "address": escape(imprint.get("place", "")),
        "isbn": escape(imprint.get("isbn", "")),
        "month": _MONTHS[parts[1] - 1] if len(parts) > 1 and 1 <= parts[1] <= 12 else "",
        "year": str(parts[0]) if parts else "",
        "note": escape(strip_html(md.get("notes"))),
        "version": escape(md.get("version", "")),
        "keywords": escape(", ".join(md.get("keywords", []))),
    }
    return {name: value for name, value in fields.items() if value}


def _entry_type(candidates: tuple[str, ...], fields: dict[str, str]) -> str:
    for entry_type in candidates:
        if all(name in fields for name in _REQUIRED[entry_type]):
            return entry_type
    return "misc"


def _value(name: str, value: str) -> str:
    # Month macros and years are written bare, as BibTeX styles expect; everything else braced.
    return value if name in ("month", "year") else "{" + value + "}"


def render_entry(record: dict[str, Any], ctx: RenderContext) -> str:
    """One record as a BibTeX entry (text)."""
    record = cleaned(record)
    fields = _fields(record, ctx)
    entry_type = _entry_type(type_info(record.get("metadata", {})).bibtex, fields)
    if entry_type not in ("book", "incollection", "misc", "dataset", "software"):
        fields.pop("publisher", None)  # only where a publisher belongs
    if entry_type != "techreport":
        fields.pop("institution", None)
    lines = [f"  {name:<12} = {_value(name, fields[name])}" for name in _ORDER if name in fields]
    if record.get("doi"):
        lines.append(f"  {'doi':<12} = {{{escape(record['doi'])}}}")
        lines.append(f"  {'url':<12} = {{{escape(doi_url(record['doi']))}}}")
    body = ",\n".join(lines)
    return f"@{entry_type}{{{entry_key(record)},\n{body}\n}}\n"


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `application/x-bibtex`."""
    return render_entry(record, ctx).encode()


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page: the entries one after another, separated by a blank line."""
    return "\n".join(render_entry(r, ctx) for r in records).encode()
