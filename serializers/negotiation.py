"""Content negotiation: pick a serializer from `Accept` (with q-values and wildcards) or `?format=`."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import NoRepresentation
from .format import Serializer


def parse_accept(header: str) -> list[tuple[str, float]]:
    """(media range, q) pairs of an Accept header, best first; q=0 ranges dropped, bad q read as 1. A `profile`
    parameter stays on its range (`application/ld+json; profile="https://w3id.org/ro/crate/1.1"`): JSON-LD
    formats differ by their profile only."""
    ranges = []
    for position, part in enumerate(header.split(",")):
        pieces = [p.strip() for p in part.split(";")]
        media = pieces[0].lower()
        if not media:
            continue
        if "/" not in media:
            media = "*/*" if media == "*" else media  # a bare "*" some clients send
        quality = 1.0
        for param in pieces[1:]:
            name, _, value = param.partition("=")
            profile = value.strip().strip('"').lower()
            if name.strip().lower() == "profile" and profile and "*" not in media:
                media = f'{media}; profile="{profile}"'
            elif name.strip().lower() == "q":
                try:
                    quality = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    quality = 1.0
        if quality > 0:
            ranges.append((media, quality, _specificity(media), position))
    ranges.sort(key=lambda r: (-r[1], -r[2], r[3]))
    return [(media, quality) for media, quality, _, _ in ranges]


def _specificity(media: str) -> int:
    if media == "*/*":
        return 0
    return 1 if media.endswith("/*") else 2


def _matches(media_range: str, mimetype: str) -> bool:
    if media_range == "*/*":
        return True
    if media_range.endswith("/*"):
        return mimetype.startswith(media_range[:-1])
    return media_range == mimetype


def _not_acceptable(available: Sequence[Serializer], asked: str) -> NoRepresentation:
    types = ", ".join(s.mimetype for s in available)
    return NoRepresentation(f"No representation for {asked}. Available: {types}.", None,
                            f"Available media types: {types}.")


def negotiate(
    accept_header: str | None,
    format_param: str | None,
    available: Sequence[Serializer],
    default: Serializer,
) -> Serializer:
    """The serializer to answer with; `?format=` (media type or short name) wins over `Accept`.

    Raises NoRepresentation (the API's 406) listing the available media types when nothing fits.
    """
    if format_param:
        wanted = format_param.strip().lower()
        for serializer in available:
            if wanted == serializer.name or wanted in serializer.media_types:
                return serializer
        raise _not_acceptable(available, f'format "{format_param}"')
    if not accept_header or not accept_header.strip():
        return default
    for media_range, _ in parse_accept(accept_header):
        # */* and a wildcard covering the default pick the default, as browsers and curl expect.
        if _matches(media_range, default.mimetype) and media_range.endswith("*"):
            return default
        # A profile no format follows falls back to the bare type (a JSON-LD client naming schema.org's).
        for wanted in dict.fromkeys((media_range, media_range.partition(";")[0])):
            for serializer in available:
                if any(_matches(wanted, media) for media in serializer.media_types):
                    return serializer
    raise _not_acceptable(available, f'Accept "{accept_header}"')


def named_media_type(accept_header: str | None, format_param: str | None, chosen: Serializer) -> str | None:
    """The media type of `chosen` (the serializer `negotiate` picked) that the client named: `?format=` with a media
    type, or the first Accept range that picked it; its canonical type for `?format=` by short name. None when the
    client named none (no Accept, or a wildcard picked it), so the caller labels the answer with its default."""
    if format_param:
        wanted = format_param.strip().lower()
        return wanted if wanted in chosen.media_types else chosen.mimetype
    for media_range, _ in parse_accept(accept_header or ""):
        if media_range in chosen.media_types:
            return media_range
        if media_range.endswith("*") and any(_matches(media_range, media) for media in chosen.media_types):
            return None
    return None
