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


@lru_cache(maxsize=1)
def _by_name() -> dict[str, str]:
    names: dict[str, str] = {}
    for lang in pycountry.languages:
        for attr in ("name", "common_name", "inverted_name"):
            value = getattr(lang, attr, None)
            if value:
                names.setdefault(value.lower(), lang.alpha_3)
    return names


def code_of_name(name: str) -> str | None:
    """The ISO 639-3 code of a language's English name (`English` -> `eng`, any case), or None."""
    return _by_name().get(name.strip().lower())


def name_of(code: str) -> str | None:
    """The English name of an ISO 639-3 code (`eng` -> `English`); None for any other code (a 639-2/B or
    collective code keeps its own spelling, so that showing a name and reading it back changes nothing)."""
    code = code.strip().lower()
    found = pycountry.languages.get(alpha_3=code) if len(code) == 3 else None
    if found is None or found.alpha_3 != code or _by_name().get(found.name.lower()) != code:
        return None  # another code, or a name two languages share
    return str(found.name)


@lru_cache(maxsize=1)
def _named() -> list[tuple[str, str, bool]]:
    """(name, ISO 639-3 code, has a two-letter code) of every language whose name reads back to its code."""
    return sorted((str(lang.name), str(lang.alpha_3), hasattr(lang, "alpha_2")) for lang in pycountry.languages
                  if name_of(lang.alpha_3))


def suggest(q: str | None, size: int) -> list[tuple[str, str]]:
    """(code, English name) of the languages whose name starts with `q` (or whose code is `q`), those with a
    two-letter code (the widely used ones) first; with no `q`, those."""
    wanted = (q or "").strip().lower()
    found = [(code, name, common) for name, code, common in _named()
             if not wanted or name.lower().startswith(wanted) or code == wanted
             or any(word.startswith(wanted) for word in name.lower().split())]
    if not wanted:
        found = [f for f in found if f[2]]
    found.sort(key=lambda f: (not f[0] == wanted, not f[1].lower().startswith(wanted), not f[2], f[1]))
    return [(code, name) for code, name, _ in found[:size]]
