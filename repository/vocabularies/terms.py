"""Small controlled lists of deposit metadata: relations, contributor types, access rights, date types."""

from __future__ import annotations

# The specification's list, verbatim and case-sensitive (CONTRACT: every listed value is accepted).
# `isOriginalFormof` is the specification's spelling; DataCite's `isOriginalFormOf` is accepted too, as is
# the reference system's `isPublishedIn`, so metadata written for it keeps validating.
SPEC_RELATION_TYPES: tuple[str, ...] = (
    "isCitedBy", "cites", "isSupplementTo", "isSupplementedBy", "isContinuedBy", "continues",
    "isDescribedBy", "describes", "hasMetadata", "isMetadataFor", "isNewVersionOf", "isPreviousVersionOf",
    "isPartOf", "hasPart", "isReferencedBy", "references", "isDocumentedBy", "documents", "isCompiledBy",
    "compiles", "isVariantFormOf", "isOriginalFormof", "isIdenticalTo", "isAlternateIdentifier",
    "isReviewedBy", "reviews", "isDerivedFrom", "isSourceOf", "requires", "isRequiredBy", "isObsoletedBy",
    "obsoletes",
)  # fmt: skip
RELATION_TYPES: tuple[str, ...] = SPEC_RELATION_TYPES + ("isOriginalFormOf", "isPublishedIn")

# Relations that name another identifier of the same work rather than a related work.
ALTERNATE_IDENTIFIER_RELATION = "isAlternateIdentifier"

CONTRIBUTOR_TYPES: tuple[str, ...] = (
    "ContactPerson", "DataCollector", "DataCurator", "DataManager", "Distributor", "Editor", "Funder",
    "HostingInstitution", "Producer", "ProjectLeader", "ProjectManager", "ProjectMember",
    "RegistrationAgency", "RegistrationAuthority", "RelatedPerson", "Researcher", "ResearchGroup",
    "RightsHolder", "Supervisor", "Sponsor", "WorkPackageLeader", "Other",
)  # fmt: skip

ACCESS_RIGHTS: tuple[str, ...] = ("open", "embargoed", "restricted", "closed")
DEFAULT_ACCESS_RIGHT = "open"

# v1 records carry a display category per access right (docs/reference-behaviour.md#record-json).
ACCESS_RIGHT_CATEGORY: dict[str, str] = {
    "open": "success",
    "embargoed": "warning",
    "restricted": "danger",
    "closed": "danger",
}

DATE_TYPES: tuple[str, ...] = ("Collected", "Valid", "Withdrawn")

# Grants: a bare id is a European Commission grant; otherwise `<funder DOI>::<code>` with one of these.
EC_FUNDER_DOI = "10.13039/501100000780"
FUNDER_DOIS: tuple[str, ...] = (
    "10.13039/501100000923", "10.13039/501100002428", "10.13039/501100000780", "10.13039/501100000806",
    "10.13039/501100002341", "10.13039/501100004488", "10.13039/501100001871", "10.13039/501100004564",
    "10.13039/501100006588", "10.13039/501100000925", "10.13039/100000002", "10.13039/100000001",
    "10.13039/501100003246", "10.13039/501100000690", "10.13039/501100001711", "10.13039/501100001602",
    "10.13039/100004440",
)  # fmt: skip
GRANT_ID_SEPARATOR = "::"
