"""What one output format of the registry is (`serializers.REGISTRY` lists them): its names, media types and
renderers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .context import RenderContext

Render = Callable[[dict[str, Any], RenderContext], bytes]
RenderPage = Callable[[list[dict[str, Any]], RenderContext], bytes]
Applies = Callable[[dict[str, Any]], bool]


def any_record(record: dict[str, Any]) -> bool:
    """Every record can be rendered in most formats."""
    return True


# Formats that share an extension with another for the same record: the format's name tells the files apart.
_NAMED = frozenset({"v1", "jsonld", "datacite", "datacite3", "dc", "marcxml", "csl", "rocrate", "croissant", "codemeta",
                    "linkset", "linkset-text"})  # fmt: skip


@dataclass(frozen=True)
class Serializer:
    """One output format: its names, media types and renderers."""

    name: str  # short name accepted by ?format=
    mimetype: str  # canonical media type, sent as Content-Type
    render: Render
    render_page: RenderPage | None = None  # None: no page form (v1 pages are the search envelope)
    aliases: tuple[str, ...] = ()
    describes: bool = True  # a description of the record (signposted as `describedby`); False for the linksets
    profile: str = ""  # the schema it follows (its namespace), Signposting's `profile` of its `describedby` link
    # Which records it can describe (Croissant: datasets; CodeMeta: software): the others' export menus and
    # Signposting leave it out, and rendering one of them raises NotDescribable (406).
    applies: Applies = any_record
    # Whether it shows file details the record JSON lacks (SHA-256s, the columns of described CSV files): the view
    # adds them to the record's file entries before rendering (repository/records/file_details.py).
    file_details: bool = False
    media_types: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "media_types", tuple(m.lower() for m in (self.mimetype, *self.aliases)))

    @property
    def extension(self) -> str:
        """The file name extension of a download in this format (docs/researchers/record-page.md#exports)."""
        base = self.base_type
        if base == "application/x-bibtex":
            return ".bib"
        if base.endswith("+yaml"):
            return ".cff"
        if base.endswith("xml"):
            return ".xml"
        if base.endswith("json"):
            return ".json"
        return ".txt"

    def filename(self, record: dict[str, Any]) -> str:
        """The name a download of `record` in this format is saved as: its DOI's suffix ("zenodo.3668.bib"), or
        the record's id where it has no DOI, with the format's extension; characters a file name cannot hold
        become "_"."""
        doi = record.get("doi") or ""
        stem = doi.partition("/")[2] if "/" in doi else str(record.get("id", "record"))
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in stem).strip("._") or "record"
        return safe + ("-" + self.name if self.name in _NAMED else "") + self.extension

    @property
    def base_type(self) -> str:
        """The media type without its parameters (`application/ld+json` of a profiled JSON-LD format): the `type`
        of a link, whose `profile` attribute names the profile apart."""
        return self.mimetype.partition(";")[0].strip()
