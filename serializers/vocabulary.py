"""The one resource-type table: every upload type and subtype, and what each format calls it.

The rows are the specification's deposit vocabulary (`upload_type`, `publication_type`, `image_type`), in its
order; deposit validation and the OAI sets derive from them (repository.vocabularies.resource_types). A cell
follows the reference system's vocabulary (docs/reference-behaviour.md#resource-types, and #bibtex for BibTeX) unless
the target vocabulary's own definition puts the type under another term (CSL 1.0.2 item types, DataCite 4.5
resourceTypeGeneral, schema.org types, BibTeX's standard entry types); tests/serializers/golden/resource_types.json
pins the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ResourceType:
    """One resource type as every format names it."""

    id: str  # `type` or `type-subtype`, as records, related identifiers, Dublin Core and OAI sets name it
    title: str
    datacite: str  # DataCite 4.5 resourceTypeGeneral (kernel 3.1 output maps the terms it lacks to Text)
    csl: str  # CSL 1.0.2 item type
    schema_org: str  # schema.org @type
    eurepo: str  # info:eu-repo/semantics/<eurepo>
    marc_leader: str  # MARC leader/06 type of record
    bibtex: tuple[str, ...] = ()  # BibTeX entry types tried in order (first whose fields are present); then @misc

    @property
    def type(self) -> str:
        """The upload type."""
        return self.id.partition("-")[0]

    @property
    def subtype(self) -> str | None:
        """The publication or image subtype; None for a top-level type."""
        return self.id.partition("-")[2] or None


_T = ResourceType
_TABLE: tuple[ResourceType, ...] = (
    _T("publication", "Publication", "Text", "article", "ScholarlyArticle", "other", "a"),
    _T("publication-annotationcollection", "Annotation collection", "Collection", "article", "Collection", "other",
       "a"),
    _T("publication-book", "Book", "Book", "book", "Book", "book", "a", ("book", "booklet")),
    _T("publication-section", "Book section", "BookChapter", "chapter", "ScholarlyArticle", "bookPart", "a",
       ("incollection",)),
    _T("publication-conferencepaper", "Conference paper", "ConferencePaper", "paper-conference", "ScholarlyArticle",
       "conferenceObject", "a", ("inproceedings", "proceedings")),
    _T("publication-datamanagementplan", "Data management plan", "OutputManagementPlan", "report", "CreativeWork",
       "other", "a"),
    _T("publication-article", "Journal article", "JournalArticle", "article-journal", "ScholarlyArticle", "article",
       "a", ("article",)),
    _T("publication-patent", "Patent", "Text", "patent", "CreativeWork", "patent", "a"),
    _T("publication-preprint", "Preprint", "Preprint", "article", "ScholarlyArticle", "preprint", "a",
       ("unpublished",)),
    _T("publication-deliverable", "Project deliverable", "Text", "report", "CreativeWork", "report", "a"),
    _T("publication-milestone", "Project milestone", "Text", "report", "CreativeWork", "report", "a"),
    _T("publication-proposal", "Proposal", "Text", "report", "CreativeWork", "researchProposal", "a"),
    _T("publication-report", "Report", "Report", "report", "ScholarlyArticle", "report", "a", ("techreport",)),
    _T("publication-softwaredocumentation", "Software documentation", "Text", "report", "CreativeWork",
       "technicalDocumentation", "a", ("manual",)),
    _T("publication-taxonomictreatment", "Taxonomic treatment", "Text", "article", "ScholarlyArticle", "other", "a"),
    _T("publication-technicalnote", "Technical note", "Text", "report", "ScholarlyArticle", "technicalDocumentation",
       "a", ("manual",)),
    _T("publication-thesis", "Thesis", "Dissertation", "thesis", "Thesis", "doctoralThesis", "a", ("phdthesis",)),
    _T("publication-workingpaper", "Working paper", "Text", "article", "ScholarlyArticle", "workingPaper", "a",
       ("unpublished",)),
    _T("publication-other", "Other", "Text", "article", "CreativeWork", "other", "a"),
    _T("poster", "Poster", "Text", "speech", "Poster", "conferencePoster", "a"),
    _T("presentation", "Presentation", "Text", "speech", "PresentationDigitalDocument", "lecture", "a"),
    _T("dataset", "Dataset", "Dataset", "dataset", "Dataset", "other", "m", ("dataset",)),
    _T("image", "Image", "Image", "graphic", "ImageObject", "other", "k"),
    _T("image-figure", "Figure", "Image", "figure", "ImageObject", "other", "k"),
    _T("image-plot", "Plot", "Image", "graphic", "ImageObject", "other", "k"),
    _T("image-drawing", "Drawing", "Image", "graphic", "ImageObject", "other", "k"),
    _T("image-diagram", "Diagram", "Image", "graphic", "ImageObject", "other", "k"),
    _T("image-photo", "Photo", "Image", "graphic", "Photograph", "other", "k"),
    _T("image-other", "Other", "Image", "graphic", "ImageObject", "other", "k"),
    _T("video", "Video/Audio", "Audiovisual", "motion_picture", "MediaObject", "other", "g"),
    _T("software", "Software", "Software", "software", "SoftwareSourceCode", "other", "m", ("software",)),
    _T("lesson", "Lesson", "InteractiveResource", "article", "CreativeWork", "lecture", "a"),
    _T("physicalobject", "Physical object", "PhysicalObject", "article", "CreativeWork", "other", "r"),
    _T("other", "Other", "Other", "article", "CreativeWork", "other", "a"),
)  # fmt: skip

# `type` or `type-subtype` -> its row, in the specification's order.
TYPES: dict[str, ResourceType] = {rt.id: rt for rt in _TABLE}


def type_key(metadata: Mapping[str, Any]) -> str:
    """`type` or `type-subtype` of a record's resource type."""
    rtype = metadata.get("resource_type") or {}
    kind = rtype.get("type", "other")
    return f"{kind}-{rtype['subtype']}" if rtype.get("subtype") else kind


def type_info(metadata: Mapping[str, Any]) -> ResourceType:
    """The vocabulary entry of a record's resource type (unknown types fall back to their type, then other)."""
    key = type_key(metadata)
    return TYPES.get(key) or TYPES.get(key.split("-")[0]) or TYPES["other"]
