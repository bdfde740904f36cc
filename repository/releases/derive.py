"""The default metadata of a release, derived from the platform's facts before the metadata file is applied."""

from __future__ import annotations

from typing import Any

import markdown

from repository.metadata import MetadataLookups
from repository.metadata.fields import sanitize_html
from repository.releases.github import FetchedRelease

NO_DESCRIPTION = "No description provided."
# A repository without a license file gets `notspecified` (true); one whose license the platform could not
# identify, or that we do not list, gets `other-open`, as the reference does.
NO_LICENSE = "notspecified"
UNKNOWN_LICENSE = "other-open"


def render_notes(notes: str) -> str:
    """Release notes (Markdown) as sanitised HTML."""
    return sanitize_html(markdown.markdown(notes, extensions=["fenced_code", "tables", "sane_lists"]))


def defaults(release: FetchedRelease, lookups: MetadataLookups) -> dict[str, Any]:
    """`upload_type` software, title, description, version, date, creators, the tree link and the license."""
    description = render_notes(release.notes) if release.notes.strip() else ""
    if not description:
        description = release.repository_description.strip() or NO_DESCRIPTION
    metadata: dict[str, Any] = {
        "upload_type": "software",
        "access_right": "open",
        "title": f"{release.full_name}: {release.name.strip() or release.tag}",
        "description": description,
        "version": release.tag,
        "publication_date": release.published,
        "creators": release.creators or [{"name": "Unknown"}],
        "license": _license(release.license, lookups),
    }
    if release.tree_url:
        metadata["related_identifiers"] = [{"identifier": release.tree_url, "relation": "isSupplementTo"}]
    return metadata


def _license(spdx: str | None, lookups: MetadataLookups) -> str:
    if spdx is None:
        return lookups.license_id(NO_LICENSE) or NO_LICENSE
    if spdx != "NOASSERTION":
        found = lookups.license_id(spdx)
        if found:
            return found
    return lookups.license_id(UNKNOWN_LICENSE) or UNKNOWN_LICENSE
