"""Resource types and what each format calls them (reference §3.4 and §13)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class TypeInfo(NamedTuple):
    """One resource type as every format names it."""

    title: str
    datacite: str  # DataCite 4.5 resourceTypeGeneral
    datacite3: str  # DataCite 3.1 resourceTypeGeneral (shorter list)
    csl: str
    schema_org: str
    eurepo: str  # info:eu-repo/semantics/<eurepo>
    marc_leader: str  # MARC leader/06 type of record


_T = TypeInfo
TYPES: dict[str, TypeInfo] = {
    "publication": _T("Publication", "Text", "Text", "article", "CreativeWork", "other", "a"),
    "publication-annotationcollection": _T(
        "Annotation collection", "Collection", "Collection", "article", "Collection", "other", "a"
    ),
    "publication-book": _T("Book", "Book", "Text", "book", "Book", "book", "a"),
    "publication-section": _T("Book section", "BookChapter", "Text", "chapter", "ScholarlyArticle", "bookPart", "a"),
    "publication-conferencepaper": _T(
        "Conference paper", "ConferencePaper", "Text", "paper-conference", "ScholarlyArticle", "conferenceObject", "a"
    ),
    "publication-datamanagementplan": _T(
        "Data management plan", "OutputManagementPlan", "Text", "report", "CreativeWork", "other", "a"
    ),
    "publication-article": _T(
        "Journal article", "JournalArticle", "Text", "article-journal", "ScholarlyArticle", "article", "a"
    ),
    "publication-patent": _T("Patent", "Text", "Text", "patent", "CreativeWork", "patent", "a"),
    "publication-preprint": _T("Preprint", "Preprint", "Text", "article", "ScholarlyArticle", "preprint", "a"),
    "publication-deliverable": _T("Project deliverable", "Text", "Text", "report", "CreativeWork", "report", "a"),
    "publication-milestone": _T("Project milestone", "Text", "Text", "report", "CreativeWork", "report", "a"),
    "publication-proposal": _T("Proposal", "Text", "Text", "report", "CreativeWork", "researchProposal", "a"),
    "publication-report": _T("Report", "Report", "Text", "report", "CreativeWork", "report", "a"),
    "publication-softwaredocumentation": _T(
        "Software documentation", "Text", "Text", "report", "CreativeWork", "technicalDocumentation", "a"
    ),
    "publication-taxonomictreatment": _T(
        "Taxonomic treatment", "Text", "Text", "article", "ScholarlyArticle", "other", "a"
    ),
    "publication-technicalnote": _T(
        "Technical note", "Text", "Text", "report", "CreativeWork", "technicalDocumentation", "a"
    ),
    "publication-thesis": _T("Thesis", "Dissertation", "Text", "thesis", "Thesis", "doctoralThesis", "a"),
    "publication-workingpaper": _T(
        "Working paper", "Text", "Text", "article", "ScholarlyArticle", "workingPaper", "a"
    ),
    "publication-peerreview": _T("Peer review", "PeerReview", "Text", "review", "Review", "review", "a"),
    "publication-other": _T("Other", "Text", "Text", "article", "CreativeWork", "other", "a"),
    "poster": _T("Poster", "Text", "Text", "speech", "Poster", "conferencePoster", "a"),
    "presentation": _T(
        "Presentation", "Text", "Text", "speech", "PresentationDigitalDocument", "lecture", "a"
    ),
    "dataset": _T("Dataset", "Dataset", "Dataset", "dataset", "Dataset", "other", "m"),
    "image": _T("Image", "Image", "Image", "graphic", "ImageObject", "other", "k"),
    "image-figure": _T("Figure", "Image", "Image", "figure", "ImageObject", "other", "k"),
    "image-plot": _T("Plot", "Image", "Image", "graphic", "ImageObject", "other", "k"),
    "image-drawing": _T("Drawing", "Image", "Image", "graphic", "ImageObject", "other", "k"),
    "image-diagram": _T("Diagram", "Image", "Image", "graphic", "ImageObject", "other", "k"),
    "image-photo": _T("Photo", "Image", "Image", "graphic", "Photograph", "other", "k"),
    "image-other": _T("Other", "Image", "Image", "graphic", "ImageObject", "other", "k"),
    "video": _T("Video/Audio", "Audiovisual", "Audiovisual", "motion_picture", "MediaObject", "other", "g"),
    "software": _T("Software", "Software", "Software", "software", "SoftwareSourceCode", "other", "m"),
    "lesson": _T("Lesson", "Text", "Text", "article", "CreativeWork", "lecture", "a"),
    "physicalobject": _T(
        "Physical object", "PhysicalObject", "PhysicalObject", "article", "CreativeWork", "other", "r"
    ),
    "workflow": _T("Workflow", "Workflow", "Workflow", "article", "CreativeWork", "other", "m"),
    "other": _T("Other", "Other", "Other", "article", "CreativeWork", "other", "a"),
}


def type_key(metadata: Mapping[str, Any]) -> str:
    """`type` or `type-subtype` of a record's resource type."""
    rtype = metadata.get("resource_type") or {}
    kind = rtype.get("type", "other")
    return f"{kind}-{rtype['subtype']}" if rtype.get("subtype") else kind


def type_info(metadata: Mapping[str, Any]) -> TypeInfo:
    """The vocabulary entry of a record's resource type (unknown types fall back to their type, then other)."""
    key = type_key(metadata)
    return TYPES.get(key) or TYPES.get(key.split("-")[0]) or TYPES["other"]
