"""What a pure rendering function cannot know by itself: the service's addresses and choices."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from repository import urls


@dataclass(frozen=True)
class RenderContext:
    """Settings and request options a serializer needs besides the record."""

    base_url: str = "https://localhost"  # service root, no trailing slash
    doi_prefix: str = "10.5281"  # 10.5072 on the sandbox
    datacentre_symbol: str = "SERVICE.REPOSITORY"
    publisher: str = "Research Repository"  # DataCite publisher and BibTeX fallback publisher
    style: str = "apa"  # text/x-bibliography ?style=
    locale: str = "en-US"  # text/x-bibliography ?locale=
    # license id (and its lower-case form) -> {"title", "url"}; ids not found fall back to SPDX
    licenses: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    host: str = ""  # host of OAI identifiers when it differs from base_url's (the OAI_HOST setting)

    @property
    def oai_host(self) -> str:
        """Host part of OAI identifiers `oai:<host>:<recid>`."""
        return self.host or urlsplit(self.base_url).hostname or "localhost"

    def record_html(self, recid: int | str) -> str:
        """Landing page of a record."""
        return urls.record_html(self.base_url, recid)

    def community_url(self, community_id: str) -> str:
        """Page of a community."""
        return urls.community_id_url(self.base_url, community_id)

    def oai_identifier(self, recid: int | str) -> str:
        """OAI-PMH identifier of a record."""
        return f"oai:{self.oai_host}:{recid}"

    def is_own_doi(self, doi: str, record: Mapping | None = None) -> bool:
        """True for DOIs the service registers, false for external ones. A record with a concept DOI has the
        service's DOI whatever its prefix (given before DOI_PREFIX changed); others are judged by today's prefix."""
        if record is not None and record.get("conceptdoi") and record.get("doi") == doi:
            return True
        return doi.startswith(self.doi_prefix + "/")
