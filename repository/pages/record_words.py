"""What the record page writes for codes and long identifiers: relation types in words, and DOIs with the places a
line may break (docs/researchers/record-page.md#what-the-page-shows)."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

# How each relation reads with "This record" before it and the related work after it.
RELATION_WORDS = {
    "isCitedBy": "Is cited by", "cites": "Cites", "isSupplementTo": "Is a supplement to",
    "isSupplementedBy": "Is supplemented by", "isContinuedBy": "Is continued by", "continues": "Continues",
    "isDescribedBy": "Is described by", "describes": "Describes", "hasMetadata": "Has metadata in",
    "isMetadataFor": "Is metadata for", "isNewVersionOf": "Is a new version of",
    "isPreviousVersionOf": "Is a previous version of", "isPartOf": "Is part of", "hasPart": "Has part",
    "isReferencedBy": "Is referenced by", "references": "References", "isDocumentedBy": "Is documented by",
    "documents": "Documents", "isCompiledBy": "Is compiled by", "compiles": "Compiles",
    "isVariantFormOf": "Is a variant form of", "isOriginalFormof": "Is the original form of",
    "isOriginalFormOf": "Is the original form of", "isIdenticalTo": "Is identical to",
    "isAlternateIdentifier": "Is also identified as", "isReviewedBy": "Is reviewed by", "reviews": "Reviews",
    "isDerivedFrom": "Is derived from", "isSourceOf": "Is the source of", "requires": "Requires",
    "isRequiredBy": "Is required by", "isObsoletedBy": "Is made obsolete by", "obsoletes": "Makes obsolete",
    "isPublishedIn": "Is published in", "isVersionOf": "Is a version of", "hasVersion": "Has version",
    "isCollectedBy": "Is collected by", "collects": "Collects", "isTranslationOf": "Is a translation of",
    "hasTranslation": "Has translation",
}  # fmt: skip
_WORD_STARTS = re.compile(r"(?<=[a-z])(?=[A-Z])")

# A DOI may break after a slash, and before a dot, hyphen or underscore (as style guides break URLs), never inside
# a run of letters or digits ("10.5281/<wbr>zenodo<wbr>.3668").
_BREAKS = re.compile(r"(?<=/)|(?=[._-])")


def relation_words(code: str) -> str:
    """The relation `code` in words; an unknown code's camel-case parts as words ("isFooOf" -> "Is foo of")."""
    if code in RELATION_WORDS:
        return RELATION_WORDS[code]
    words = _WORD_STARTS.sub(" ", str(code)).lower()
    return words[:1].upper() + words[1:]


def doi_breaks(doi: str) -> Markup:
    """`doi` escaped, with <wbr> where a narrow screen may break it."""
    parts = _BREAKS.split(str(doi))
    return Markup("<wbr>").join(escape(part) for part in parts if part)
