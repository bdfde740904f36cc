"""Marshmallow schemas of deposit metadata: the per-field rules of the specification's metadata table.

Top-level fields are all optional here: which ones a publish requires, and the rules that need the
database (licenses, grants, communities), live in `validation.py`, so that drafts can be incomplete.
"""

from __future__ import annotations

from typing import Any

from marshmallow import (
    RAISE,
    Schema,
    ValidationError,
    fields,
    post_load,
    pre_load,
    validate,
    validates_schema,
)

from repository.metadata.fields import (
    Choice,
    Custom,
    Gnd,
    Html,
    IsoDate,
    Language,
    License,
    Number,
    Orcid,
    PrereserveDoi,
    RequiredText,
    RorId,
    StringList,
    Text,
)
from repository.vocabularies.identifiers import (
    PID_SCHEMES,
    SUBJECT_SCHEMES,
    detect_schemes,
    normalize_identifier,
)
from repository.vocabularies.resource_types import (
    IMAGE_TYPES,
    PUBLICATION_TYPES,
    UPLOAD_TYPES,
    parse_resource_type_id,
)
from repository.vocabularies.terms import ACCESS_RIGHTS, CONTRIBUTOR_TYPES, DATE_TYPES, RELATION_TYPES

NAME_FORMAT_MESSAGE = "Name must be in the format 'Family name, Given names'."


def _is_empty(value: Any) -> bool:
    return value is None or value == [] or (isinstance(value, str) and not value.strip())


def _is_empty_output(value: Any) -> bool:
    return _is_empty(value) or value == {}  # a custom object whose terms were all dropped


class StrictSchema(Schema):
    """Refuses unknown keys with the reference's message; treats null and blank values as not given."""

    error_messages = {"unknown": "Unknown field name.", "type": "Not a valid object."}

    class Meta:
        unknown = RAISE

    @pre_load
    def _drop_empty_input(self, data: Any, **kwargs: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {key: value for key, value in data.items() if not _is_empty(value)}

    @post_load
    def _drop_empty_output(self, data: dict, **kwargs: Any) -> dict:
        return {key: value for key, value in data.items() if not _is_empty_output(value)}


class PersonSchema(StrictSchema):
    """A creator or thesis supervisor.

    The name format check is deliberately light: `Family name, Given names` is what the specification
    asks for, but organisations and mononymous people have no comma, so only a name whose family part
    before the comma is empty (`, John`) is refused.
    """

    name = RequiredText(message="Name is required.")
    affiliation = Text()
    affiliation_id = RorId()  # the affiliation's ROR id (docs/researchers/depositing.md#affiliations)
    orcid = Orcid()
    gnd = Gnd()

    @validates_schema(skip_on_field_errors=False)  # reported together with a bad ORCID or GND
    def _check_name(self, data: dict, **kwargs: Any) -> None:
        name = data.get("name", "")
        if "," in name and not name.split(",", 1)[0].strip():
            raise ValidationError(NAME_FORMAT_MESSAGE, "name")
        if data.get("affiliation_id") and not data.get("affiliation"):
            raise ValidationError("An affiliation's ROR id needs the affiliation's name too.", "affiliation")


class ContributorSchema(PersonSchema):
    """A contributor: a person with a contributor type."""

    type = Choice(CONTRIBUTOR_TYPES, required=True)


def _scheme(data: dict, allowed: tuple[str, ...]) -> str:
    """The kind of `data["identifier"]`: the given `scheme` if it fits, else the first detected one."""
    detected = detect_schemes(data["identifier"], allowed)
    if not detected:
        raise ValidationError("Not a valid persistent identifier.", "identifier")
    given = data.get("scheme", "").lower()
    if given and given not in detected:
        raise ValidationError(f"Not a valid {given} identifier.", "identifier")
    return given or detected[0]


class _IdentifiedSchema(StrictSchema):
    """An object whose `identifier` kind is detected (`scheme`) and whose value is normalised."""

    schemes: tuple[str, ...] = PID_SCHEMES

    # Runs despite errors in other fields so that one response reports a bad relation and a bad identifier.
    @validates_schema(skip_on_field_errors=False)
    def _check_identifier(self, data: dict, **kwargs: Any) -> None:
        if "identifier" in data:
            _scheme(data, self.schemes)

    @post_load
    def _normalize(self, data: dict, **kwargs: Any) -> dict:
        scheme = _scheme(data, self.schemes)
        return {**data, "identifier": normalize_identifier(data["identifier"], scheme), "scheme": scheme}


class RelatedIdentifierSchema(_IdentifiedSchema):
    """A related identifier: its kind is detected and its value normalised."""

    identifier = RequiredText(message="Identifier is required.")
    relation = Choice(RELATION_TYPES, required=True)
    scheme = Text()
    resource_type = Text()

    @validates_schema(skip_on_field_errors=False)
    def _check_resource_type(self, data: dict, **kwargs: Any) -> None:
        value = data.get("resource_type")
        if value and parse_resource_type_id(value) is None:
            raise ValidationError("Not a valid type.", "resource_type")


class SubjectSchema(_IdentifiedSchema):
    """A subject term with the identifier of the term (often a URL), its kind detected."""

    term = RequiredText(message="Term is required.")
    identifier = RequiredText(message="Identifier is required.")
    scheme = Text()
    schemes = SUBJECT_SCHEMES


class LocationSchema(StrictSchema):
    """A place, optionally with a point (both coordinates or neither)."""

    place = RequiredText(message="Place is required.")
    lat = Number(validate=validate.Range(-90, 90, error="Latitude must be between -90 and 90."))
    lon = Number(validate=validate.Range(-180, 180, error="Longitude must be between -180 and 180."))
    description = Text()

    @validates_schema
    def _check_point(self, data: dict, **kwargs: Any) -> None:
        # 0 is a real coordinate (the reference treated it as missing).
        has_lat, has_lon = data.get("lat") is not None, data.get("lon") is not None
        if has_lat != has_lon:
            raise ValidationError("There should be both latitude and longitude.", "lon" if has_lat else "lat")


class DateSchema(StrictSchema):
    """A date or interval of a given type; at least one end, start not after end."""

    start = IsoDate()
    end = IsoDate()
    type = Choice(DATE_TYPES, required=True)
    description = Text()

    @validates_schema
    def _check_interval(self, data: dict, **kwargs: Any) -> None:
        start, end = data.get("start"), data.get("end")
        if not start and not end:
            raise ValidationError("There must be at least one date: give start, end or both.", "start")
        if start and end and start > end:  # ISO dates compare correctly as strings
            raise ValidationError('"start" date must be before "end" date.', "end")


class CommunitySchema(StrictSchema):
    """A community the deposit asks to be included in."""

    identifier = RequiredText(message="Identifier is required.")


class GrantSchema(StrictSchema):
    """A grant, by a bare EC grant id or `<funder DOI>::<code>`."""

    id = RequiredText(message="Grant id is required.")


def _items(schema: type[Schema], **kwargs: Any) -> fields.List:
    return fields.List(fields.Nested(schema), **kwargs)


class FilesSchema(StrictSchema):
    """Whether the record has files: `{"enabled": false}` makes a metadata-only record, which links to where the
    work is held instead (docs/researchers/depositing.md#metadata-only-records)."""

    enabled = fields.Boolean(required=True, error_messages={"required": "Missing data for required field.",
                                                            "invalid": "Not a valid boolean."})


class DepositMetadataSchema(StrictSchema):
    """Every key of the specification's deposition metadata, each checked on its own."""

    upload_type = Choice(UPLOAD_TYPES)
    publication_type = Choice(PUBLICATION_TYPES)
    image_type = Choice(IMAGE_TYPES)
    publication_date = IsoDate()
    title = Text(validate=validate.Length(min=3, error="Shorter than minimum length {min}."))
    creators = _items(PersonSchema)
    description = Html(validate=validate.Length(min=3, error="Shorter than minimum length {min}."))
    access_right = Choice(ACCESS_RIGHTS)
    license = License()
    embargo_date = IsoDate()
    access_conditions = Html()
    doi = Text()
    prereserve_doi = PrereserveDoi()
    keywords = StringList()
    notes = Html()
    related_identifiers = _items(RelatedIdentifierSchema)
    contributors = _items(ContributorSchema)
    references = StringList()
    communities = _items(CommunitySchema)
    grants = _items(GrantSchema)
    journal_title = Text()
    journal_volume = Text()
    journal_issue = Text()
    journal_pages = Text()
    conference_title = Text()
    conference_acronym = Text()
    conference_dates = Text()
    conference_place = Text()
    conference_url = fields.Url(error_messages={"invalid": "Not a valid URL."})
    conference_session = Text()
    conference_session_part = Text()
    imprint_publisher = Text()
    imprint_isbn = Text()
    imprint_place = Text()
    partof_title = Text()
    partof_pages = Text()
    thesis_supervisors = _items(PersonSchema)
    thesis_university = Text()
    subjects = _items(SubjectSchema)
    version = Text()
    language = Language()
    locations = _items(LocationSchema)
    dates = _items(DateSchema)
    method = Html()
    # Not in the specification's table: the reference system's custom metadata (Darwin Core, OBO relations),
    # which the records search's `custom` filter finds.
    custom = Custom()
    files = fields.Nested(FilesSchema)


# The keys of deposit metadata, in the specification's order.
METADATA_KEYS: tuple[str, ...] = tuple(DepositMetadataSchema().fields)

