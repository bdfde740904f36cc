"""Upload types, their publication and image subtypes, and what each maps to in other formats.

No maintained package carries this vocabulary; the titles and schema.org types follow the reference
system's `objecttypes.json`, the DataCite, CSL, BibTeX and eu-repo columns its serializers (reference §13).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceType:
    """One entry of the vocabulary; `subtype` is None for a top-level type."""

    type: str
    subtype: str | None
    title: str
    datacite_general: str  # DataCite resourceTypeGeneral valid in kernels 3.1 to 4.4
    datacite45_general: str  # the finer resourceTypeGeneral of kernel 4.5 (JournalArticle, Preprint, ...)
    datacite_type: str  # DataCite free-text resourceType
    csl: str  # CSL-JSON item type
    schema_org: str  # schema.org @type
    bibtex: str  # preferred BibTeX entry type (serializers fall back to @misc when fields are missing)
    eurepo: str  # info:eu-repo/semantics/<term>
    openaire: str  # OpenAIRE result type: publication, dataset, software or other

    @property
    def id(self) -> str:
        """`type` or `type-subtype`, the form related identifiers and Dublin Core use."""
        return f"{self.type}-{self.subtype}" if self.subtype else self.type


# resourceTypeGeneral values of kernel 4.1; the kernel-4.5 ones outside it are all kinds of text.
_DATACITE41_GENERAL = frozenset({
    "Audiovisual", "Collection", "DataPaper", "Dataset", "Event", "Image", "InteractiveResource", "Model",
    "PhysicalObject", "Service", "Software", "Sound", "Text", "Workflow", "Other",
})  # fmt: skip


def _rt(type_, subtype, title, dc45, csl, schema_org, bibtex, eurepo, openaire):
    dc_general = dc45 if dc45 in _DATACITE41_GENERAL else "Text"
    return ResourceType(type_, subtype, title, dc_general, dc45, title, csl, schema_org, bibtex,
                        f"info:eu-repo/semantics/{eurepo}", openaire)  # fmt: skip


_P = "publication"
_TABLE: tuple[ResourceType, ...] = (
    _rt(_P, None, "Publication", "Text", "article", "ScholarlyArticle", "misc", "other", _P),
    _rt(_P, "annotationcollection", "Annotation collection", "Collection", "article", "Collection", "misc", "other", _P),
    _rt(_P, "book", "Book", "Book", "book", "Book", "book", "book", _P),
    _rt(_P, "section", "Book section", "BookChapter", "chapter", "ScholarlyArticle", "misc", "bookPart", _P),
    _rt(_P, "conferencepaper", "Conference paper", "ConferencePaper", "paper-conference", "ScholarlyArticle",
        "inproceedings", "conferenceObject", _P),
    _rt(_P, "datamanagementplan", "Data management plan", "OutputManagementPlan", "report", "CreativeWork", "misc",
        "other", _P),
    _rt(_P, "article", "Journal article", "JournalArticle", "article-journal", "ScholarlyArticle", "article",
        "article", _P),
    _rt(_P, "patent", "Patent", "Text", "patent", "CreativeWork", "misc", "patent", _P),
    _rt(_P, "preprint", "Preprint", "Preprint", "article", "ScholarlyArticle", "unpublished", "preprint", _P),
    _rt(_P, "deliverable", "Project deliverable", "Text", "report", "CreativeWork", "misc", "other", _P),
    _rt(_P, "milestone", "Project milestone", "Text", "report", "CreativeWork", "misc", "other", _P),
    _rt(_P, "proposal", "Proposal", "Text", "report", "CreativeWork", "misc", "researchProposal", _P),
    _rt(_P, "report", "Report", "Report", "report", "ScholarlyArticle", "misc", "report", _P),
    _rt(_P, "softwaredocumentation", "Software documentation", "Text", "article", "CreativeWork", "manual",
        "technicalDocumentation", _P),
    _rt(_P, "taxonomictreatment", "Taxonomic treatment", "Text", "article", "ScholarlyArticle", "misc", "other", _P),
    _rt(_P, "technicalnote", "Technical note", "Text", "report", "ScholarlyArticle", "manual",
        "technicalDocumentation", _P),
    _rt(_P, "thesis", "Thesis", "Dissertation", "thesis", "ScholarlyArticle", "phdthesis", "doctoralThesis", _P),
    _rt(_P, "workingpaper", "Working paper", "Text", "article", "ScholarlyArticle", "unpublished", "workingPaper", _P),
    _rt(_P, "other", "Other", "Text", "article", "CreativeWork", "misc", "other", _P),
    _rt("poster", None, "Poster", "Text", "graphic", "Poster", "misc", "conferencePoster", _P),
    _rt("presentation", None, "Presentation", "Text", "speech", "PresentationDigitalDocument", "misc", "lecture", _P),
    _rt("dataset", None, "Dataset", "Dataset", "dataset", "Dataset", "dataset", "other", "dataset"),
    _rt("image", None, "Image", "Image", "graphic", "ImageObject", "misc", "other", "other"),
    _rt("image", "figure", "Figure", "Image", "figure", "ImageObject", "misc", "other", "other"),
    _rt("image", "plot", "Plot", "Image", "graphic", "ImageObject", "misc", "other", "other"),
    _rt("image", "drawing", "Drawing", "Image", "graphic", "ImageObject", "misc", "other", "other"),
    _rt("image", "diagram", "Diagram", "Image", "graphic", "ImageObject", "misc", "other", "other"),
    _rt("image", "photo", "Photo", "Image", "graphic", "Photograph", "misc", "other", "other"),
    _rt("image", "other", "Other", "Image", "graphic", "ImageObject", "misc", "other", "other"),
    _rt("video", None, "Video/Audio", "Audiovisual", "motion_picture", "MediaObject", "misc", "other", "other"),
    _rt("software", None, "Software", "Software", "software", "SoftwareSourceCode", "software", "other", "software"),
    _rt("lesson", None, "Lesson", "InteractiveResource", "article", "CreativeWork", "misc", "lecture", "other"),
    _rt("physicalobject", None, "Physical object", "PhysicalObject", "article", "CreativeWork", "misc", "other",
        "other"),
    _rt("other", None, "Other", "Other", "article", "CreativeWork", "misc", "other", "other"),
)  # fmt: skip

RESOURCE_TYPES: dict[str, ResourceType] = {rt.id: rt for rt in _TABLE}

# The deposit vocabulary of the specification, in its order.
UPLOAD_TYPES: tuple[str, ...] = tuple(dict.fromkeys(rt.type for rt in _TABLE))
PUBLICATION_TYPES: tuple[str, ...] = tuple(
    rt.subtype for rt in _TABLE if rt.type == "publication" and rt.subtype
)
IMAGE_TYPES: tuple[str, ...] = tuple(rt.subtype for rt in _TABLE if rt.type == "image" and rt.subtype)

# Which deposit field carries the subtype of each type that has subtypes.
SUBTYPE_FIELD: dict[str, str] = {"publication": "publication_type", "image": "image_type"}


def get_resource_type(type_: str, subtype: str | None = None) -> ResourceType | None:
    """The vocabulary entry for a type and optional subtype, or None if there is none."""
    return RESOURCE_TYPES.get(f"{type_}-{subtype}" if subtype else type_)


def parse_resource_type_id(value: str) -> ResourceType | None:
    """The entry for `type` or `type-subtype` (e.g. `publication-article`), or None."""
    return RESOURCE_TYPES.get(value)


def deposit_resource_type(metadata: dict) -> ResourceType | None:
    """The entry named by a deposit's upload_type and publication_type/image_type, or None."""
    type_ = metadata.get("upload_type")
    if not type_:
        return None
    field = SUBTYPE_FIELD.get(type_)
    return get_resource_type(type_, metadata.get(field) if field else None)
