"""Grant ids of deposit metadata: `<funder DOI>::<code>`, or a bare code for a European Commission grant."""

from __future__ import annotations

from repository.vocabularies.identifiers import normalize_doi
from repository.vocabularies.terms import EC_FUNDER_DOI, FUNDER_DOIS, GRANT_ID_SEPARATOR


def parse_grant_id(value: str) -> tuple[str, str] | str:
    """`(funder DOI, code)` of a grant id, or the message saying why it is not one."""
    value = value.strip() if isinstance(value, str) else ""
    if not value:
        return "Not a valid grant id: it is empty."
    if GRANT_ID_SEPARATOR not in value:
        if normalize_doi(value):
            return f"Not a valid grant id: use '<funder DOI>{GRANT_ID_SEPARATOR}<grant code>'."
        return EC_FUNDER_DOI, value  # a bare id is a European Commission grant (specification)
    funder, code = (part.strip() for part in value.split(GRANT_ID_SEPARATOR, 1))
    funder = (normalize_doi(funder) or funder).lower()
    if funder not in FUNDER_DOIS:
        return f"Not an accepted funder: {funder!r}. Accepted funder DOIs: {', '.join(FUNDER_DOIS)}."
    if not code:
        return "Not a valid grant id: the grant code is missing."
    return funder, code
