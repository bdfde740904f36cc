"""Initials of compound given names, as CSL 1.0.2 describes them (`initialize-with-hyphen`), for citeproc-py.

citeproc-py 0.11 takes every lower-case word of a given name for a particle it must not initialise, the part after
a hyphen included: "Seo-yeon" became "S.-. yeon ." in every style that initialises. A part after a hyphen is never
a particle; it is initialised keeping its case, as citeproc-js does ("S.-y.", "J.-L."), and joined with the hyphen,
or with a space when the style sets `initialize-with-hyphen="false"` ("J. L."). Words of their own in lower case
stay particles, as before ("Ludwig van" keeps "van"). And it initialises names in styles that say
`initialize="false"` (MLA's): those keep given names whole, only the initials written in them normalised."""

from __future__ import annotations

from typing import Any

from citeproc.model import Name

# Name particles written in lower case (CSL 1.0.2, "Name-part order"; the test suite's `name_ParsedNonDroppingParticle*`
# fixtures split them the same way). Only these words are split off, so a family name that is all lower case by the
# person's choice ("hooks") stays a family name.
PARTICLES = frozenset({
    "al", "bin", "ben", "da", "dal", "dalla", "das", "de", "degli", "dei", "del", "della", "den", "der", "des", "di",
    "do", "dos", "du", "el", "het", "la", "le", "lo", "op", "t", "te", "ten", "ter", "van", "vande", "vanden",
    "vander", "von", "vom", "y", "zu", "zum", "zur",
})  # fmt: skip


def particle_parts(family: str, given: str) -> dict[str, str]:
    """A `Family, Given` name as CSL name parts: lower-case particles leading the family name are its
    `non-dropping-particle` ("van der Berg" -> "van der" + "Berg"), those ending the given name its
    `dropping-particle` ("Ludwig van" -> "Ludwig" + "van"), so each style places and demotes them as it says."""
    family_words, given_words = family.split(), given.split()
    leading = 0
    while leading < len(family_words) - 1 and family_words[leading] in PARTICLES:
        leading += 1
    trailing = len(given_words)
    while trailing > 1 and given_words[trailing - 1] in PARTICLES:
        trailing -= 1
    parts = {"family": " ".join(family_words[leading:]), "given": " ".join(given_words[:trailing])}
    if leading:
        parts["non-dropping-particle"] = " ".join(family_words[:leading])
    if trailing < len(given_words):
        parts["dropping-particle"] = " ".join(given_words[trailing:])
    return parts


def initials(given: str, mark: str, with_hyphen: bool) -> str:
    """`given` initialised with `mark` (the style's `initialize-with`, such as ". ")."""
    results = []
    for position, hyphen_part in enumerate(given.split("-")):
        words = hyphen_part.replace(".", " ").split()
        text, group = "", []
        for index, word in enumerate(words):
            if word[0].isupper() or (position > 0 and index == 0):
                group.append(word[0])
            else:  # a particle: kept whole
                text += mark.join(group) + mark + " " + word + " " if group else word + " "
                group = []
        if group:
            text += mark.join(group) + mark
        if text.strip():
            results.append(" ".join(text.split()))
    # Without the hyphen the parts' initials stand as the given name's words would ("J. L.", "J.L.", AMA's "JL").
    return ("-" if with_hyphen else (" " if mark.endswith(" ") else "")).join(results)


def normalized(given: str, mark: str) -> str:
    """`given` whole, only the initials it already has written with `mark` ("J.L." -> "J. L.", "Seo-yeon" kept)."""
    parts = []
    for hyphen_part in given.split("-"):
        text = ""
        for word in hyphen_part.replace(".", ". ").split():
            if len(word.rstrip(".")) == 1:
                text += word[0] + mark
            else:
                text += ("" if not text or text.endswith(" ") else " ") + word + " "
        parts.append(" ".join(text.split()))
    return "-".join(parts)


def _initializes(name: Any, context: Any) -> bool:
    """CSL's `initialize` option (inheritable; default true), which citeproc-py does not read: "false" keeps given
    names whole (MLA)."""
    value = name.get("initialize")
    if value is None:
        found = (context if context is not None else name).xpath_search(
            "./ancestor::*[self::cs:citation or self::cs:bibliography][1]")
        for element in (*found, name.getroottree().getroot()):
            value = element.get("initialize")
            if value is not None:
                break
    return value != "false"


def _initialize(self: Any, given: str, mark: str, context: Any) -> str:
    if not _initializes(self, context):
        return normalized(given, mark)
    return initials(given, mark, bool(self.get_option("initialize-with-hyphen", context)))


def install() -> None:
    """Use `initials` for every style's names (citeproc-py has no hook for it: its method is replaced)."""
    Name.initialize = _initialize
