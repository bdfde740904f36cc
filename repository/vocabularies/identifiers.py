"""Persistent identifiers: kind detection and normalisation (idutils), plus ORCID, GND, DOI and ROR checks."""

from __future__ import annotations

import re

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


_ORCID_SHAPE = re.compile(r"(?:https?://(?:www\.)?orcid\.org/)?([0-9]{4})-?([0-9]{4})-?([0-9]{4})-?([0-9]{3}[0-9Xx])")


def orcid_problem(value: str) -> str | None:
    """What is wrong with an ORCID iD as typed, in words that say how to fix it; None when it is valid. The last
    character is a check digit (ISO 7064 MOD 11-2 over the other 15 digits), so most typos are caught."""
    match = _ORCID_SHAPE.fullmatch(value.strip())
    if match is None:
        return ("An ORCID iD is 16 digits in four groups of four, the last one possibly X, e.g. "
                "0000-0002-1825-0097 (or its https://orcid.org/ address).")
    digits = "".join(match.groups()).upper()
    total = 0
    for digit in digits[:15]:
        total = (total + int(digit)) * 2
    check = (12 - total % 11) % 11
    if digits[15] != ("X" if check == 10 else str(check)):
        return ("This ORCID iD does not exist: its last character does not match the others (a digit is "
                "probably mistyped). Copy it from your ORCID record, e.g. 0000-0002-1825-0097.")
    return None


# A ROR id: `0`, six characters of Crockford's base 32 and two check digits (ISO 7064 MOD 97-10 of the number the
# seven characters stand for), bare or as its https://ror.org/ address.
ROR_PREFIX = "https://ror.org/"
_ROR_DIGITS = "0123456789abcdefghjkmnpqrstvwxyz"
_ROR = re.compile(r"(?:https?://(?:www\.)?ror\.org/|ror\.org/)?(0[0-9a-hjkmnp-tv-z]{6}[0-9]{2})", re.IGNORECASE)


def normalize_ror(value: str) -> str | None:
    """A ROR id as its URL (`https://ror.org/02bfwt286`), from the bare id or any of its addresses; None if the
    value is not one or its check digits do not match."""
    match = _ROR.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    bare = match[1].lower()
    number = 0
    for char in bare[:7]:
        number = number * 32 + _ROR_DIGITS.index(char)
    if f"{98 - (number * 100) % 97:02d}" != bare[7:]:
        return None
    return ROR_PREFIX + bare
