"""What a file's preview shows, read from the stored file within fixed bounds (docs/researchers/record-page.md#file-previews):
its kind by name, the head of a text file (or that it is not text), Markdown rendered and sanitised, JSON pretty and
folded, the names and sizes in a ZIP or tar archive (read from its index, nothing extracted)."""

from __future__ import annotations

import codecs
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nh3
import orjson
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})  # what every browser shows in <img>
TABLE_SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_MARKDOWN = (".md", ".markdown")
_JSON = (".json", ".geojson", ".jsonld")
_TAR = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_TEXT = (".txt", ".text", ".log", ".yaml", ".yml", ".xml", ".toml", ".ini", ".cfg", ".conf", ".py", ".r", ".m",
         ".jl", ".sh", ".c", ".h", ".cpp", ".java", ".js", ".ts", ".go", ".rs", ".sql", ".tex", ".bib", ".rst",
         ".cff", ".nc.txt", ".readme", ".dat")  # fmt: skip
_TEXT_NAMES = ("readme", "license", "licence", "copying", "authors", "changelog", "citation", "makefile")

TEXT_BYTES = 256 * 1024  # of a text or Markdown file, the head shown
JSON_BYTES = 2 * 1024 * 1024  # a larger JSON file is shown as text (its head), not parsed
JSON_NODES = 5_000  # values shown of a JSON document; the rest is summarised
ARCHIVE_ENTRIES = 1_000  # entries listed of an archive
# A compressed tar has no index: listing it reads the whole stream. Larger ones are not listed.
TAR_SCAN_BYTES = 256 * 1024 * 1024
SNIFF_BYTES = 8192


def kind_of(key: str, mimetype: str = "") -> str:
    """How a file is previewed, from its name (and media type for images): image, table, pdf, markdown, json, zip,
    tar, text; '' for none."""
    lower = key.lower()
    name = lower.rsplit("/", 1)[-1]
    if mimetype in IMAGE_TYPES:
        return "image"
    if lower.endswith(tuple(TABLE_SEPARATORS)):
        return "table"
    if lower.endswith(".pdf"):
        return "pdf"
    if lower.endswith(_MARKDOWN):
        return "markdown"
    if lower.endswith(_JSON):
        return "json"
    if lower.endswith(".zip"):
        return "zip"
    if lower.endswith(_TAR):
        return "tar"
    if lower.endswith(_TEXT) or name in _TEXT_NAMES or mimetype.startswith("text/"):
        return "text"
    return ""


def separator_of(key: str) -> str:
    """The column separator of a table file: tab for .tsv and .tab, else comma."""
    return next((sep for ext, sep in TABLE_SEPARATORS.items() if key.lower().endswith(ext)), ",")


def looks_like_text(head: bytes) -> bool:
    """Whether the first bytes of a file are UTF-8 text: no NUL, no invalid sequence (one cut at the end is
    allowed), hardly any control characters."""
    if b"\0" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    controls = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13))
    return controls <= len(head) // 100


def is_text_file(path: Path | str) -> bool:
    """`looks_like_text` of a file's first SNIFF_BYTES."""
    with open(path, "rb") as handle:
        return looks_like_text(handle.read(SNIFF_BYTES))


@dataclass(frozen=True)
class TextHead:
    """The first `limit` bytes of a file as text; `truncated` when the file is longer; `is_text` False for a
    binary file (then `text` is empty)."""

    text: str
    truncated: bool
    is_text: bool


def text_head(path: Path | str, limit: int = TEXT_BYTES) -> TextHead:
    """The head of a file as text (a multi-byte character cut at the limit left out)."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    truncated = len(data) > limit
    data = data[:limit]
    if not looks_like_text(data[:SNIFF_BYTES]):
        return TextHead("", truncated, False)
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data.removeprefix(codecs.BOM_UTF8), final=False)
    except UnicodeDecodeError:
        return TextHead("", truncated, False)
    return TextHead(text, truncated, True)


_MARKDOWN_PARSER = MarkdownIt("commonmark", {"html": False}).enable("table").enable("strikethrough")
_MARKDOWN_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
                  "hr", "i", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td", "th",
                  "thead", "tr", "ul", "img"}  # fmt: skip


def markdown_html(text: str) -> Markup:
    """Markdown rendered to HTML (CommonMark with tables; raw HTML in it shown as text), then sanitised: only
    formatting tags, links to http(s) and mail addresses that open no window of ours."""
    rendered = _MARKDOWN_PARSER.render(text)
    return Markup(nh3.clean(rendered, tags=_MARKDOWN_TAGS, url_schemes={"http", "https", "mailto"},
                            attributes={"a": {"href", "title"}, "img": {"src", "alt", "title"},
                                        "th": {"align"}, "td": {"align"}},
                            link_rel="nofollow noopener noreferrer"))  # fmt: skip


def json_html(data: bytes) -> Markup | None:
    """A JSON document pretty and folded (nested <details>, the first two levels open), at most JSON_NODES values;
    None when it does not parse."""
    try:
        value = orjson.loads(data.removeprefix(codecs.BOM_UTF8))
    except orjson.JSONDecodeError:
        return None
    budget = [JSON_NODES]
    return Markup("".join(_json_parts(value, 0, budget)))


def _json_parts(value: Any, depth: int, budget: list[int], label: str = "") -> list[str]:
    """`value` as HTML, `label` (its key, escaped) before it: a container's in its summary line."""
    budget[0] -= 1
    if isinstance(value, dict | list):
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        if not items:
            return [f'{label}<span class="json-punct">{opening}{closing}</span>']
        count = f"{len(items)} {'key' if isinstance(value, dict) else 'item'}{'s' if len(items) != 1 else ''}"
        parts = [f'<details{" open" if depth < 2 else ""}><summary>{label}<span class="json-punct">{opening}</span> '
                 f'<span class="json-count">{count}</span></summary><ul class="json-members">']
        for shown, (key, item) in enumerate(items):
            if budget[0] <= 0:
                parts.append(f'<li class="json-more">… {len(items) - shown:,} more not shown</li>')
                break
            name = escape(orjson.dumps(key).decode()) if isinstance(value, dict) else str(key)
            parts.append("<li>" + "".join(_json_parts(item, depth + 1, budget, f'<span class="json-key">{name}</span>: '))
                         + "</li>")
        parts.append(f'</ul><span class="json-punct">{closing}</span></details>')
        return parts
    kind = "null" if value is None else "bool" if isinstance(value, bool) else (
        "number" if isinstance(value, int | float) else "string")
    return [f'{label}<span class="json-{kind}">{escape(orjson.dumps(value).decode())}</span>']


@dataclass
class Listing:
    """An archive's entries (name, size in bytes, whether a folder), `more` when there were more than
    ARCHIVE_ENTRIES, `error` saying why none could be read."""

    entries: list[tuple[str, int, bool]] = field(default_factory=list)
    more: bool = False
    error: str = ""


def archive_listing(path: Path | str, kind: str, size: int) -> Listing:
    """The entries of a ZIP (from its central directory) or tar archive (its headers, data skipped), nothing
    extracted; a compressed tar larger than TAR_SCAN_BYTES is not read."""
    listing = Listing()
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as archive:
                infos = archive.infolist()
                listing.entries = [(i.filename, i.file_size, i.is_dir()) for i in infos[:ARCHIVE_ENTRIES]]
                listing.more = len(infos) > ARCHIVE_ENTRIES
            return listing
        with open(path, "rb") as handle:
            compressed = not _plain_tar(handle.read(512))
        if compressed and size > TAR_SCAN_BYTES:
            listing.error = "This compressed archive is too large to list here; download it to see its contents."
            return listing
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                if len(listing.entries) == ARCHIVE_ENTRIES:
                    listing.more = True
                    break
                listing.entries.append((member.name, member.size, member.isdir()))
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError):
        listing.error = "This file cannot be read as an archive."
    return listing


def _plain_tar(header: bytes) -> bool:
    """Whether a file starts with an uncompressed tar header (ustar magic at 257, or an old-style header)."""
    return len(header) == 512 and (header[257:262] == b"ustar" or header[156:157] in (b"0", b"\0", b"5"))
