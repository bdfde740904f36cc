"""Language codes: ISO 639-3 and ISO 639-2 (B and T, collective codes included) via pycountry."""

from __future__ import annotations

from functools import lru_cache

import pycountry
import pycountry.db


@lru_cache(maxsize=1024)
def _lookup(code: str) -> pycountry.db.Data | None:
    # 639-3 and 639-2/T share the alpha_3 column; 639-2/B codes (`ger`, `fre`) sit in `bibliographic`;
    # 639-2 collective codes (`afa`) live in ISO 639-5.
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        return None
    return (
        pycountry.languages.get(alpha_3=code)
        or pycountry.languages.get(bibliographic=code)
        or pycountry.language_families.get(alpha_3=code)
    )


def normalize_language(code: str) -> str | None:
    """The code as given in lower case if it is an ISO 639-2 (B or T) or 639-3 code, else None."""
    code = code.strip().lower()
    return code if _lookup(code) is not None else None


def language_alpha3(code: str) -> str | None:
    """The ISO 639-3 (= 639-2/T) code of a valid code (`ger` -> `deu`), or None."""
    found = _lookup(code.strip().lower())
    return found.alpha_3 if found is not None else None


def language_alpha2(code: str) -> str | None:
    """The ISO 639-1 two-letter code (`deu` -> `de`), or None when the language has none."""
    found = _lookup(code.strip().lower())
    return getattr(found, "alpha_2", None) if found is not None else None


def language_name(code: str) -> str | None:
    """The English name of the language (`fre` -> `French`), or None."""
    found = _lookup(code.strip().lower())
    return found.name if found is not None else None
