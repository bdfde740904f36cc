"""Country names and codes that map to an ISO 3166-1 alpha-2 code, via pycountry."""

from __future__ import annotations

import functools

import pycountry


@functools.cache
def _index() -> dict[str, str]:
    """Case-folded alpha-2, alpha-3, name, official name and common name -> alpha-2."""
    index: dict[str, str] = {}
    for country in pycountry.countries:
        for attr in ("alpha_2", "alpha_3", "name", "official_name", "common_name"):
            value = getattr(country, attr, None)
            if value:
                index[value.casefold()] = country.alpha_2
    return index


def country_code(value: str) -> str | None:
    """The ISO 3166-1 alpha-2 code for a country name or alpha-2/alpha-3 code, or None if there is none."""
    # Numeric codes ("276") are not accepted: the spec asks for names compatible with alpha-2.
    return _index().get(value.strip().casefold())
