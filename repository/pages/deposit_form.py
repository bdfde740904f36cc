"""The deposit form and deposit metadata, both ways: what the form shows for a deposition's metadata, the metadata a
posted form stands for (sent through the same validation as the API's PUT), and where each error of the API's
error objects goes (its dotted path, e.g. `metadata.creators.1.orcid`, names an input of the form).

Repeatable groups are rows of inputs named `<group>-<index>-<subfield>` (`keywords-<index>` for a list of strings).
Indexes need not be contiguous (static/deposit-form.js adds and removes rows in place): rows are read in index order
and numbered again when the form is shown. Rows left blank are not sent, so the validator's indexes are mapped back
to the rows they came from."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pycountry

from repository import urls
from repository.communities import store
from repository.deposits.people import known_people
from repository.metadata import METADATA_KEYS
from repository.pages.record_words import relation_words
from repository.paging import MAX_SIZE, Page
from repository.vocabularies import grants, languages, licenses, ror, subjects
from repository.vocabularies.identifiers import orcid_problem
from repository.vocabularies.resource_types import (
    IMAGE_TYPES,
    PUBLICATION_TYPES,
    RESOURCE_TYPES,
    UPLOAD_TYPES,
)
from repository.vocabularies.terms import (
    ACCESS_RIGHTS,
    CONTRIBUTOR_TYPES,
    DATE_TYPES,
    GRANT_ID_SEPARATOR,
    RELATION_TYPES,
)

MAX_ROWS = 200  # rows per group a form may carry: more than any deposit needs, few enough to render
Choices = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Input:
    """One input: a top-level metadata field, or a subfield of a repeatable group's rows (`name` "" for a list of
    strings). `kind`: text, textarea, select, radio, date, number, url, checkbox."""

    name: str
    label: str
    kind: str = "text"
    choices: Choices = ()
    hint: str = ""
    datalist: str = ""  # id of the <datalist> of suggestions (filled server-side, refined by deposit-form.js)
    lookup: str = ""  # the API search deposit-form.js asks for more suggestions
    check: str = ""  # a check deposit-form.js makes as one types ("orcid": format and check digit)
    defaults: str = ""  # JSON {upload type: value, "": otherwise} deposit-form.js fills in when the type changes
    required: bool = False  # required to publish (shown, not enforced: a draft may be incomplete)


@dataclass(frozen=True)
class Group:
    """A repeatable group: `key` in the metadata, `item` names one row ("creator")."""

    key: str
    label: str
    item: str
    inputs: tuple[Input, ...]
    hint: str = ""
    required: bool = False

    @property
    def single(self) -> bool:
        """A list of strings (keywords, references) rather than of objects."""
        return len(self.inputs) == 1 and self.inputs[0].name == ""


@dataclass(frozen=True)
class Section:
    heading: str
    slug: str
    items: tuple[Input | Group, ...]
    optional: bool = False  # folded (<details>) unless it holds something or an error


def _choices(values: tuple[str, ...], labels: Mapping[str, str] | None = None) -> Choices:
    return tuple((v, (labels or {}).get(v, v)) for v in values)


def _titles(kind: str, subtypes: tuple[str, ...]) -> Choices:
    return tuple((s, RESOURCE_TYPES[f"{kind}-{s}"].title) for s in subtypes)


ACCESS_LABELS = {"open": "Open access", "embargoed": "Embargoed access: files public from the embargo date",
                 "restricted": "Restricted access: files shared on request, under your conditions",
                 "closed": "Closed access: files not shared"}
# The license a resource type gets when none is given (repository/metadata/rules.py applies the same at publish):
# the form shows it chosen, so that people see it and may change it (deposit-form.js when the type changes).
DEFAULT_LICENSES = {"dataset": "cc-zero"}
DEFAULT_LICENSE = "cc-by"
ORCID_HINT = "e.g. 0000-0002-1825-0097; checked as you type."
AFFILIATION_HINT = "Type part of its name and pick it from the list."
ROR_HINT = "Filled in from the organisation you pick, e.g. https://ror.org/02bfwt286."
PEOPLE_ROWS = ("creators", "contributors", "thesis_supervisors")


def _people(item: str, with_type: bool = False) -> tuple[Input, ...]:
    kinds = (Input("type", "Role", "select", _choices(CONTRIBUTOR_TYPES)),) if with_type else ()
    return (Input("name", "Name", hint="Family name, Given names; people you named before are suggested.",
                  datalist="people-list", lookup=urls.vocabulary_api("", "creators"), required=True), *kinds,
            Input("affiliation", "Affiliation", hint=AFFILIATION_HINT, datalist="affiliations-list",
                  lookup=urls.vocabulary_api("", "affiliations")),
            Input("affiliation_id", "Affiliation's ROR id", hint=ROR_HINT),
            Input("orcid", "ORCID", hint=ORCID_HINT, check="orcid"), Input("gnd", "GND"))


RESOURCE_TYPE_CHOICES: Choices = tuple((k, v.title if "-" not in k else f"{RESOURCE_TYPES[k.split('-')[0]].title}: "
                                        f"{v.title}") for k, v in RESOURCE_TYPES.items())

SECTIONS: tuple[Section, ...] = (
    Section("Basic information", "basic", (
        Input("upload_type", "Upload type", "select", tuple((t, RESOURCE_TYPES[t].title) for t in UPLOAD_TYPES),
              required=True),
        Input("publication_type", "Publication type", "select", _titles("publication", PUBLICATION_TYPES),
              hint="For publications only."),
        Input("image_type", "Image type", "select", _titles("image", IMAGE_TYPES), hint="For images only."),
        Input("publication_date", "Publication date", "date", hint="YYYY-MM-DD; today if left empty.",
              required=True),
        Input("title", "Title", required=True),
        Group("creators", "Creators", "creator", _people("creator"), required=True),
        Input("description", "Description", "textarea", hint="Basic HTML is allowed (paragraphs, lists, links).",
              required=True),
        Input("version", "Version", hint="e.g. v1.0.1 (semantic versioning is suggested)."),
        Input("language", "Language", hint="Its name in English, e.g. English or German, or its ISO 639 code "
                                           "(eng); type to search.",
              datalist="languages-list", lookup=urls.vocabulary_api("", "languages")),
        Group("keywords", "Keywords", "keyword", (Input("", "Keyword"),)),
        Input("notes", "Additional notes", "textarea"),
    )),
    Section("Digital Object Identifier (DOI)", "doi", (
        Input("doi", "DOI", hint="Only if your publisher already gave this work a DOI, e.g. 10.1234/foo.bar; "
                                 "otherwise one is registered when you publish."),
        Input("prereserve_doi", "Reserve a DOI now (to cite this work before it is published)", "checkbox"),
    )),
    Section("Access and license", "access", (
        Input("access_right", "Access right", "radio", _choices(ACCESS_RIGHTS, ACCESS_LABELS), required=True),
        Input("license", "License", hint="For open and embargoed access: its name or id, e.g. Creative Commons "
                                         "Attribution 4.0 International or MIT; type to search, the common ones "
                                         "are listed first.",
              datalist="licenses-list", lookup=urls.vocabulary_api("", "licenses"),
              defaults=json.dumps({**DEFAULT_LICENSES, "": DEFAULT_LICENSE})),
        Input("embargo_date", "Embargo date", "date", hint="For embargoed access: the day the files become public."),
        Input("access_conditions", "Conditions of access", "textarea",
              hint="For restricted access: who may have the files and why."),
    )),
    Section("Communities", "communities", (
        Group("communities", "Communities", "community",
              (Input("identifier", "Community", datalist="communities-list", lookup=urls.COMMUNITIES,
                     hint="Its title (or its short id); type to search. The curators accept or decline the "
                          "request."),)),
    ), optional=True),
    Section("Funding", "funding", (
        Group("grants", "Grants", "grant",
              (Input("id", "Grant", datalist="grants-list", lookup=urls.GRANTS,
                     hint="<funder DOI>::<grant code>, e.g. 10.13039/501100000780::283595; type to search."),)),
    ), optional=True),
    Section("Related and alternate identifiers", "related", (
        Group("related_identifiers", "Related identifiers", "related identifier", (
            Input("identifier", "Identifier", hint="DOI, Handle, ARK, PURL, ISSN, ISBN, PubMed ID, arXiv, URL, …",
                  required=True),
            Input("relation", "Relation (this upload …)", "select",
                  tuple((r, f"{relation_words(r).lower()} … ({r})") for r in RELATION_TYPES), required=True),
            Input("resource_type", "Resource type", "select", RESOURCE_TYPE_CHOICES),
            Input("scheme", "Scheme", hint="Detected when left empty."),
        )),
    ), optional=True),
    Section("Contributors", "contributors", (
        Group("contributors", "Contributors", "contributor", _people("contributor", with_type=True)),
    ), optional=True),
    Section("References", "references", (
        Group("references", "References", "reference", (Input("", "Reference"),),
              hint="One citation per row, e.g. Doe, J. (2020). Title. Journal, 1(2), 3-4."),
    ), optional=True),
    Section("Journal", "journal", (
        Input("journal_title", "Journal title"), Input("journal_volume", "Volume"),
        Input("journal_issue", "Issue"), Input("journal_pages", "Pages"),
    ), optional=True),
    Section("Conference", "conference", (
        Input("conference_title", "Conference title"), Input("conference_acronym", "Acronym"),
        Input("conference_dates", "Dates", hint="e.g. 14-18 May 2024; needs a title or an acronym."),
        Input("conference_place", "Place", hint="City, Country; needs a title or an acronym."),
        Input("conference_url", "Website", "url"), Input("conference_session", "Session"),
        Input("conference_session_part", "Part of the session"),
    ), optional=True),
    Section("Book, report or chapter", "imprint", (
        Input("imprint_publisher", "Publisher"), Input("imprint_isbn", "ISBN"),
        Input("imprint_place", "Place", hint="City, Country"),
        Input("partof_title", "Book title", hint="For a chapter: the book it is part of."),
        Input("partof_pages", "Pages of the chapter"),
    ), optional=True),
    Section("Thesis", "thesis", (
        Input("thesis_university", "Awarding university"),
        Group("thesis_supervisors", "Supervisors", "supervisor", _people("supervisor")),
    ), optional=True),
    Section("Subjects", "subjects", (
        Group("subjects", "Subjects", "subject", (
            Input("term", "Term", hint="Terms of the loaded vocabularies are suggested with their identifiers.",
                  datalist="subjects-list", lookup=urls.vocabulary_api("", "subjects"), required=True),
            Input("identifier", "Identifier", hint="The term's identifier, e.g. a URL; filled in for a suggested "
                                                   "term.", required=True),
            Input("scheme", "Scheme", hint="Detected when left empty."),
        )),
    ), optional=True),
    Section("Locations", "locations", (
        Group("locations", "Locations", "location", (
            Input("place", "Place", required=True), Input("lat", "Latitude", "number", hint="-90 to 90"),
            Input("lon", "Longitude", "number", hint="-180 to 180"), Input("description", "Description"),
        )),
    ), optional=True),
    Section("Dates", "dates", (
        Group("dates", "Dates", "date", (
            Input("start", "Start", "date"), Input("end", "End", "date"),
            Input("type", "Type", "select", _choices(DATE_TYPES), required=True),
            Input("description", "Description"),
        ), hint="A start, an end or both; the same in both for an exact date."),
    ), optional=True),
    Section("Method", "method", (Input("method", "Methodology", "textarea"),), optional=True),
)

GROUPS: dict[str, Group] = {i.key: i for s in SECTIONS for i in s.items if isinstance(i, Group)}
INPUTS: dict[str, Input] = {i.name: i for s in SECTIONS for i in s.items if isinstance(i, Input)}
# The metadata keys the form shows; any other (`custom`, set through the API) is kept as it is on a save.
FORM_KEYS = frozenset(GROUPS) | frozenset(INPUTS)
assert FORM_KEYS <= set(METADATA_KEYS), FORM_KEYS - set(METADATA_KEYS)
STARTING_ROWS = {"creators": 1, "keywords": 1}  # shown ready to fill when empty (blank rows are never sent)
_ROW_NAME = re.compile(r"([a-z_]+)-([0-9]{1,6})(?:-([a-z_]+))?")


@dataclass
class FormState:
    """What the form shows: a string per field and the rows of each group (a row maps subfield -> string)."""

    values: dict[str, str] = field(default_factory=dict)
    rows: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    def add_row(self, group: str) -> None:
        if group in GROUPS and len(self.rows[group]) < MAX_ROWS:
            self.rows[group].append({i.name: "" for i in GROUPS[group].inputs})

    def remove_row(self, group: str, index: int) -> None:
        if group in GROUPS and 0 <= index < len(self.rows[group]):
            del self.rows[group][index]


def _text(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 8.0 is shown as typed: 8
    return value.get("id", "") if isinstance(value, dict) else str(value)




def from_metadata(metadata: Mapping[str, Any]) -> FormState:
    """The form for stored metadata; the empty groups of STARTING_ROWS get empty rows to fill. A language shows its
    name; an upload type with no license chosen shows its default license."""
    state = FormState({name: _text(metadata.get(name)) for name in INPUTS if name != "prereserve_doi"})
    state.values["language"] = languages.name_of(state.values["language"]) or state.values["language"]
    kind = state.values.get("upload_type", "")
    if kind and not state.values["license"] and metadata.get("access_right", "open") in ("open", "embargoed"):
        state.values["license"] = DEFAULT_LICENSES.get(kind, DEFAULT_LICENSE)
    for key, group in GROUPS.items():
        given = metadata.get(key)
        items: list[Any] = given if isinstance(given, list) else []
        state.rows[key] = [
            {"": _text(item)} if group.single
            else {i.name: _text(item.get(i.name)) if isinstance(item, dict) else "" for i in group.inputs}
            for item in items[:MAX_ROWS]
        ]
        if not state.rows[key]:
            for _ in range(STARTING_ROWS.get(key, 0)):
                state.add_row(key)
    return state


def from_post(form: Mapping[str, str]) -> FormState:
    """The form as posted (every value kept as typed, so a refused save loses nothing)."""
    state = FormState({name: form.get(name, "") for name in INPUTS})
    found: dict[str, dict[int, dict[str, str]]] = {key: {} for key in GROUPS}
    for name, value in form.items():
        match = _ROW_NAME.fullmatch(name)
        if match is None or match[1] not in GROUPS:
            continue
        group, sub = GROUPS[match[1]], match[3] or ""
        if sub in {i.name for i in group.inputs}:
            found[group.key].setdefault(int(match[2]), {})[sub] = value
    for key, group in GROUPS.items():
        rows = [found[key][index] for index in sorted(found[key])][:MAX_ROWS]
        state.rows[key] = [{i.name: row.get(i.name, "") for i in group.inputs} for row in rows]
    return state


def state_to_json(state: FormState, rows_sent: Mapping[str, list[int]]) -> dict[str, Any]:
    """The form as typed, to store beside the draft (repository.deposits.formstate), with the form row of each item
    sent, which its errors' indexes count."""
    return {"values": dict(state.values), "rows": {k: list(v) for k, v in state.rows.items()},
            "rows_sent": {k: list(v) for k, v in rows_sent.items()}}


def state_from_json(stored: Mapping[str, Any]) -> FormState:
    """The form as stored by state_to_json, read as a posted form is (whatever the stored JSON holds, only the
    form's inputs come back, as strings)."""
    flat: dict[str, str] = {k: str(v) for k, v in dict(stored.get("values") or {}).items() if k in INPUTS}
    for key, rows in dict(stored.get("rows") or {}).items():
        if key in GROUPS and isinstance(rows, list):
            for index, row in enumerate(rows[:MAX_ROWS]):
                if isinstance(row, dict):
                    flat.update({input_id(key, index, sub): str(v) for sub, v in row.items()})
    return from_post(flat)


def with_codes(conn: Any, state: FormState) -> FormState:
    """The form with a language typed by its name, a license typed by its title and a community by its title given
    by their codes, as the API takes them, and an affiliation ROR knows by that name given its ROR id (anything else
    is left as typed, for the validator to refuse in its own words)."""
    rows = {key: [dict(row) for row in group] for key, group in state.rows.items()}
    for key in PEOPLE_ROWS:
        for row in rows.get(key, []):
            if row.get("affiliation", "").strip() and not row.get("affiliation_id", "").strip():
                found = ror.by_name(conn, row["affiliation"])
                row["affiliation_id"] = found.id if found is not None else ""
    for row in rows.get("subjects", []):
        if row.get("term", "").strip() and not row.get("identifier", "").strip():
            term = subjects.by_term(conn, row["term"])
            row["identifier"] = term.identifier if term is not None else ""
    for row in rows.get("communities", []):
        typed = row.get("identifier", "").strip()
        if typed and not store.exists(conn, typed):
            row["identifier"] = store.identifier_of_title(conn, typed) or row["identifier"]
    state = FormState(state.values, rows)
    values = dict(state.values)
    language = values.get("language", "").strip()
    if language:
        values["language"] = languages.code_of_name(language) or language
    licence = values.get("license", "").strip()
    if licence:
        found = licenses.by_id_or_title(conn, licence)
        values["license"] = found.id if found is not None else licence
    return FormState(values, state.rows)


def with_titles(conn: Any, state: FormState) -> FormState:
    """The form with each community shown by its title, where that title names it alone (with_codes reads it
    back)."""
    for row in state.rows.get("communities", []):
        title = store.titles(conn, [row.get("identifier", "")]).get(row.get("identifier", ""))
        if title and store.identifier_of_title(conn, title) == row["identifier"]:
            row["identifier"] = title
    return state


def _number(text: str) -> Any:
    """A coordinate as a number when it reads as one (a decimal comma too); else the text, for the validator to
    refuse in its own words ("nan" and "inf" included: no range check can refuse NaN)."""
    try:
        number = float(text.replace(",", "."))
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def to_metadata(state: FormState, kept: Mapping[str, Any], submitted: bool) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """The metadata the form stands for, over the stored keys the form does not show (`kept`), and for each group
    the form row of each item sent (blank rows are left out). A published deposition's DOI is not the form's."""
    metadata: dict[str, Any] = {k: v for k, v in kept.items() if k not in FORM_KEYS}
    for name, spec in INPUTS.items():
        value = state.values.get(name, "").strip()
        if name == "doi" and submitted:
            continue
        if spec.kind == "checkbox":
            if value:
                metadata[name] = True
        elif value:
            metadata[name] = state.values[name]
    rows_sent: dict[str, list[int]] = {}
    for key, group in GROUPS.items():
        items: list[Any] = []
        rows_sent[key] = []
        for index, row in enumerate(state.rows.get(key, [])):
            if not any(v.strip() for v in row.values()):
                continue
            rows_sent[key].append(index)
            if group.single:
                items.append(row[""])
                continue
            item: dict[str, Any] = {k: v for k, v in row.items() if v.strip()}
            for coordinate in ("lat", "lon"):
                if key == "locations" and coordinate in item:
                    item[coordinate] = _number(item[coordinate])
            items.append(item)
        if items:
            metadata[key] = items
    return metadata, rows_sent


@dataclass
class PlacedErrors:
    """Errors beside their inputs (`by_id`: input id -> messages) and the summary's entries (`href` may be empty)."""

    by_id: dict[str, list[str]] = field(default_factory=dict)
    summary: list[dict[str, str]] = field(default_factory=list)

    def add(self, target: str, label: str, message: str) -> None:
        if target:
            self.by_id.setdefault(target, []).append(message)
        self.summary.append({"href": f"#{target}" if target else "", "label": label, "message": message})


# The API's messages that send people elsewhere, said for the form (by field and the message's words before ":").
FORM_MESSAGES = {
    ("metadata.license", "Not a valid license id"):
        "Not a license this repository knows: type part of its name or id and pick it from the list, e.g. "
        "Creative Commons Attribution 4.0 International (cc-by) or MIT.",
}


def input_id(group: str, row: int, sub: str = "") -> str:
    return f"{group}-{row}" + (f"-{sub}" if sub else "")


def place_errors(errors: list[dict[str, Any]], rows_sent: Mapping[str, list[int]],
                 state: FormState | None = None) -> PlacedErrors:
    """Each `{field, message}` of an error object beside the input its path names (the summary lists them all); an
    ORCID iD refused says whether its form or its check digit is wrong (`state`: the form as typed)."""
    placed = PlacedErrors()
    for error in errors:
        message, path = str(error.get("message", "")), str(error.get("field") or "")
        if path == "files":
            placed.summary.append({"href": "#files", "label": "Files", "message": message})
            continue
        parts = path.removeprefix("metadata.").split(".") if path.startswith("metadata.") else []
        target, label = _target(parts, rows_sent)
        message = FORM_MESSAGES.get((path, message.split(":")[0]), message)
        if state is not None and parts[-1:] == ["orcid"] and target.count("-") == 2:
            group, row, _ = target.split("-")
            rows = state.rows.get(group, [])
            typed = rows[int(row)].get("orcid", "") if int(row) < len(rows) else ""
            message = orcid_problem(typed) or message
        placed.add(target, label, message)
    return placed


def _target(parts: list[str], rows_sent: Mapping[str, list[int]]) -> tuple[str, str]:
    """The input id and label a metadata path names; ("", "") when the form has no such input."""
    if not parts:
        return "", ""
    if parts[0] in INPUTS:
        return parts[0], INPUTS[parts[0]].label
    group = GROUPS.get(parts[0])
    if group is None:
        return "", parts[0]
    sent = rows_sent.get(group.key, [])
    if len(parts) < 2 or not parts[1].isdigit() or int(parts[1]) >= len(sent):
        return group.key, group.label
    row = sent[int(parts[1])]
    where = f"{group.item.capitalize()} {row + 1}"
    if group.single:
        return input_id(group.key, row), where
    sub = next((i for i in group.inputs if len(parts) > 2 and i.name == parts[2]), None)
    if sub is None:
        return input_id(group.key, row), where
    return input_id(group.key, row, sub.name), f"{where}: {sub.label}"


def section_has_content(section: Section, state: FormState, errors: PlacedErrors) -> bool:
    """Whether a folded section should be open: something is filled in or refused in it."""
    for item in section.items:
        if isinstance(item, Group):
            if any(any(v.strip() for v in row.values()) for row in state.rows.get(item.key, [])):
                return True
            if any(i == item.key or i.startswith(item.key + "-") for i in errors.by_id):
                return True
        elif state.values.get(item.name, "").strip() or item.name in errors.by_id:
            return True
    return False


# Suggestions per <datalist> filled server-side (every license: they are what a form without JavaScript picks
# from); deposit-form.js asks the API's searches for grants and communities beyond these.
SUGGESTED = 500


def suggestions(conn: Any, owner_id: int) -> dict[str, list[tuple[str, str]]]:
    """The pickers' suggestions, (value, label) each, from the vocabularies the API validates against, and the
    people (and their affiliations) the owner named before."""
    page = Page(1, SUGGESTED)
    licence_rows, _ = licenses.search(conn, None, Page(1, MAX_SIZE))
    common = [row for row in (licenses.resolve(conn, c) for c in licenses.COMMON) if row is not None]
    licence_rows = common + [r for r in licence_rows if r.id not in {c.id for c in common}]
    grant_rows, _ = grants.search(conn, None, None, page)
    community_rows, _ = store.search(conn, None, ("title", False), page)
    people = known_people(conn, owner_id, None, SUGGESTED)
    subject_rows, _ = subjects.search(conn, None, page)
    return {
        "licenses-list": [(r.id, r.title) for r in licence_rows],
        "grants-list": [(f"{r.funder_doi}{GRANT_ID_SEPARATOR}{r.code}",
                         " — ".join(x for x in (r.acronym, r.title, r.name) if x)) for r in grant_rows],
        "communities-list": [(r.title, r.identifier) for r in community_rows],
        "languages-list": LANGUAGES,
        "subjects-list": [(r.term, f"{r.identifier} · {r.vocabulary}") for r in subject_rows],
        "people-list": [(p["name"], " · ".join(p[k] for k in ("orcid", "affiliation") if p.get(k))) for p in people],
        "affiliations-list": [(a, i) for a, i in dict.fromkeys(
            (p["affiliation"], p.get("affiliation_id", "")) for p in people if p.get("affiliation"))],
    }


# Languages with a two-letter code (the ones people mostly pick) by their name, with their ISO 639-3 code; any
# other language name, ISO 639-2 or 639-3 code is accepted when typed.
LANGUAGES: list[tuple[str, str]] = sorted((lang.name, lang.alpha_3) for lang in pycountry.languages
                                           if hasattr(lang, "alpha_2") and languages.name_of(lang.alpha_3))
