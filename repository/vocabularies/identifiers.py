"""Persistent identifiers: kind detection and normalisation (idutils), plus ORCID, GND and DOI checks."""

from __future__ import annotations

import idutils

# The kinds the specification lists for related identifiers, by their idutils names, in idutils' order
# of detection (first match wins: a `https://doi.org/...` URL is a DOI, a 13-digit ISBN is an ISBN).
PID_SCHEMES: tuple[str, ...] = (
    "doi", "ark", "handle", "purl", "lsid", "urn", "ads", "arxiv", "pmcid", "isbn", "issn", "ean13", "istc",
    "pmid", "url",
)  # fmt: skip

# Subject identifiers are usually URLs of a term in a thesaurus, or GND ids.
SUBJECT_SCHEMES: tuple[str, ...] = PID_SCHEMES + ("gnd",)


def detect_schemes(value: str, allowed: tuple[str, ...] = PID_SCHEMES) -> list[str]:
    """The kinds `value` is a valid identifier of, best first, limited to `allowed`."""
    value = value.strip()
    if not value:
        return []
    return [s for s in idutils.detect_identifier_schemes(value) if s in allowed]


def detect_scheme(value: str, allowed: tuple[str, ...] = PID_SCHEMES) -> str | None:
    """The kind of identifier `value` is (the first detected), or None if it is none of `allowed`."""
    schemes = detect_schemes(value, allowed)
    return schemes[0] if schemes else None


def normalize_identifier(value: str, scheme: str) -> str:
    """`value` in the canonical form of its kind (prefixes stripped, ISBN-13 hyphenated, `arXiv:` added)."""
    return idutils.normalize_pid(value.strip(), scheme)


def identifier_url(value: str, scheme: str) -> str | None:
    """A resolvable https URL for an identifier, or None when its kind has no resolver."""
    url = idutils.to_url(value, scheme, url_scheme="https")
    return url or None


def normalize_orcid(value: str) -> str | None:
    """The dashed 16-digit ORCID (URL prefix stripped, checksum checked), or None if invalid."""
    value = value.strip()
    if not value or not idutils.is_orcid(value):
        return None
    return idutils.normalize_orcid(value)


def normalize_gnd(value: str, *, prefixed: bool = False) -> str | None:
    """A GND id without (or with `prefixed`) its `gnd:` prefix, or None if invalid."""
    value = value.strip()
    if not value or not idutils.is_gnd(value):
        return None
    normalized = idutils.normalize_gnd(value)  # always `gnd:<id>`, whatever form was given
    return normalized if prefixed else normalized.removeprefix("gnd:")


def normalize_doi(value: str) -> str | None:
    """A bare DOI (`doi:` and resolver URL prefixes stripped), or None if `value` is not a DOI."""
    value = value.strip()
    if not value or not idutils.is_doi(value):
        return None
    return idutils.normalize_doi(value)


def doi_prefix(doi: str) -> str:
    """The registrant prefix of a bare DOI (`10.5281` of `10.5281/zenodo.1`)."""
    return doi.split("/", 1)[0]
