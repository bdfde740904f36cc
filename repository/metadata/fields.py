"""Marshmallow fields for deposit metadata: cleaned text, sanitised HTML, dates and identifiers."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import nh3
from marshmallow import ValidationError, fields, validate

from repository.search.custom_terms import CUSTOM_TERMS, RELATIONSHIP_TERMS
from repository.vocabularies.identifiers import normalize_gnd, normalize_orcid, normalize_ror
from repository.vocabularies.languages import normalize_language

# Size limits keep one deposit from filling the database or the search index.
MAX_TEXT = 10_000
MAX_HTML = 200_000

# Characters XML 1.0 cannot carry (every export format is XML or ends up in one) and zero-width spaces
# that make look-alike titles and keywords differ.
_UNSAFE_CHARS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff\u200b\u200c\u200d\u2060\ufeff]"
)

# What an abstract needs (paragraphs, emphasis, lists, tables, links, code) and nothing that runs or
# loads something: no script, style, iframe, img, form or event attributes.
HTML_TAGS = frozenset({
    "a", "abbr", "acronym", "b", "blockquote", "br", "caption", "code", "dd", "del", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "ins", "li", "ol", "p", "pre", "s", "span", "strike",
    "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
})  # fmt: skip
HTML_ATTRIBUTES = {
    "*": {"class"},
    "a": {"href", "title", "name"},
    "abbr": {"title"},
    "acronym": {"title"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start"},
}
HTML_URL_SCHEMES = frozenset({"http", "https", "mailto", "ftp"})


def clean_text(value: str) -> str:
    """`value` trimmed, without XML-invalid characters and zero-width spaces."""
    return _UNSAFE_CHARS.sub("", value).strip()


def sanitize_html(value: str) -> str:
    """Safe HTML: allowed tags and attributes only; script and style elements removed with their content."""
    return nh3.clean(
        clean_text(value), tags=set(HTML_TAGS), attributes=HTML_ATTRIBUTES, url_schemes=set(HTML_URL_SCHEMES)
    ).strip()


class Text(fields.String):
    """A trimmed, cleaned string of bounded length."""

    def __init__(self, *, max_length: int = MAX_TEXT, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_length = max_length

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if len(text) > self.max_length:
            raise ValidationError(f"Longer than maximum length {self.max_length}.")
        return clean_text(text)


class RequiredText(Text):
    """A Text that must not be blank; `message` names what is missing."""

    def __init__(self, *, message: str = "Missing data for required field.", **kwargs: Any) -> None:
        super().__init__(required=True, error_messages={"required": message}, **kwargs)
        self.blank_message = message

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if not text:
            raise ValidationError(self.blank_message)
        return text


class Html(Text):
    """A string of HTML, sanitised."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=MAX_HTML, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        return sanitize_html(super()._deserialize(value, attr, data, **kwargs))


class Choice(Text):
    """One value of a vocabulary, matched exactly (case-sensitive)."""

    def __init__(self, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(validate=validate.OneOf(choices, error="Not a valid choice."), **kwargs)
        self.choices = choices


class Number(fields.Float):
    """A JSON number; numeric strings and booleans are refused (JSON Schema agrees)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("Not a valid number.")
        return super()._deserialize(value, attr, data, **kwargs)


class IsoDate(fields.Field):
    """An ISO 8601 date `YYYY-MM-DD` (a full ISO timestamp is cut to its date); loads as the string."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        if not isinstance(value, str):
            raise ValidationError("Not a valid date. Use the format YYYY-MM-DD.")
        text = value.strip()
        try:
            if len(text) == 10:
                return dt.date.fromisoformat(text).isoformat()
            if len(text) > 10 and text[10] in "T ":
                return dt.datetime.fromisoformat(text).date().isoformat()
        except ValueError:
            pass
        raise ValidationError("Not a valid date. Use the format YYYY-MM-DD.")


class Orcid(Text):
    """An ORCID iD, as the dashed 16 digits (`https://orcid.org/` prefix stripped, checksum checked)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if not text:
            return text
        normalized = normalize_orcid(text)
        if normalized is None:
            raise ValidationError("Not a valid ORCID identifier.")
        return normalized


class RorId(Text):
    """The ROR id of an affiliation, stored as its URL `https://ror.org/<id>` (the bare id accepted; check digits
    checked)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if not text:
            return text
        normalized = normalize_ror(text)
        if normalized is None:
            raise ValidationError("Not a valid ROR identifier: expected an id like https://ror.org/02bfwt286 "
                                  "(or 02bfwt286).")
        return normalized


class Gnd(Text):
    """A GND identifier, stored without its `gnd:` prefix."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if not text:
            return text
        normalized = normalize_gnd(text)
        if normalized is None:
            raise ValidationError("Not a valid GND identifier.")
        return normalized


class Language(Text):
    """An ISO 639-2 (B or T) or 639-3 code, stored as given in lower case."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        code = normalize_language(text)
        if code is None:
            raise ValidationError("Not a valid language: use an ISO 639-2 or ISO 639-3 code such as 'eng'.")
        return code


class License(Text):
    """A license id given as a string or as `{"id": ...}`; resolved against the licenses later."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        if isinstance(value, dict):
            if set(value) != {"id"}:
                raise ValidationError('Not a valid license: give an id string or {"id": ...}.')
            value = value["id"]
        return super()._deserialize(value, attr, data, **kwargs)


class PrereserveDoi(fields.Field):
    """`true`/`false`, or the `{doi, recid}` object a response showed (echoed back unchanged)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, dict) and set(value) <= {"doi", "recid"}:
            return value
        raise ValidationError("Must be true, false or the reserved {doi, recid} object.")


class StringList(fields.List):
    """A list of cleaned strings; blank entries are removed."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Text(), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> list[Any]:
        return [item for item in super()._deserialize(value, attr, data, **kwargs) if item]


MAX_CUSTOM_VALUES = 100  # values (or relationships) per custom term


class Custom(fields.Field):
    """Custom metadata `{"<vocab>:<term>": [values]}`: keyword terms take strings, relationship terms objects
    `{"subject": [strings], "object": [strings]}`; errors name their place (`dwc:genus.0`). Blank values are
    dropped; a term left without values is refused."""

    default_error_messages = {"invalid": 'Not a valid object: give {{"<vocabulary>:<term>": [values]}}.'}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict[str, list]:
        if not isinstance(value, dict):
            raise self.make_error("invalid")
        errors: dict[str, Any] = {}
        out: dict[str, list] = {}
        for term, values in value.items():
            if term not in CUSTOM_TERMS:
                errors[term] = [f'Not a supported custom metadata term: "{term}". Supported terms: '
                                + ", ".join(sorted(CUSTOM_TERMS)) + "."]
                continue
            if values is None:  # null is "not given", as everywhere in deposit metadata
                continue
            relationship = term in RELATIONSHIP_TERMS
            item_errors: dict[int, Any] = {}
            loaded = _custom_values(values, relationship, item_errors, errors, term)
            if loaded is None:
                continue
            if item_errors:
                errors[term] = item_errors
            elif not loaded:
                errors[term] = [f'No values were provided for term "{term}".']
            elif len(loaded) > MAX_CUSTOM_VALUES:
                errors[term] = [f"At most {MAX_CUSTOM_VALUES} values per term."]
            else:
                out[term] = loaded
        if errors:
            raise ValidationError(errors)
        return out


def _custom_values(
    values: Any, relationship: bool, item_errors: dict[int, Any], errors: dict[str, Any], term: str
) -> list | None:
    """The loaded values of one custom term (None, with `errors[term]` set, when not a list)."""
    kind = 'objects {"subject": [strings], "object": [strings]}' if relationship else "strings"
    if not isinstance(values, list):
        errors[term] = [f'Term "{term}" should be of type array: a list of {kind}.']
        return None
    loaded: list = []
    for index, item in enumerate(values):
        if relationship:
            pair, messages = _relationship(item)
            if messages:
                item_errors[index] = messages
            elif pair:
                loaded.append(pair)
        elif not isinstance(item, str):
            item_errors[index] = ["Not a valid string."]
        elif len(item) > MAX_TEXT:
            item_errors[index] = [f"Longer than maximum length {MAX_TEXT}."]
        elif clean_text(item):
            loaded.append(clean_text(item))
    return loaded


def _relationship(item: Any) -> tuple[dict[str, list[str]], Any]:
    """`{"subject": [...], "object": [...]}` cleaned (empty when both are blank), and the error messages if any."""
    if not isinstance(item, dict):
        return {}, ['Not a valid object: give {"subject": [strings], "object": [strings]}.']
    messages: dict[str, Any] = {key: ["Unknown field name."] for key in item if key not in ("subject", "object")}
    pair: dict[str, list[str]] = {}
    for key in ("subject", "object"):
        given = item.get(key)
        if given is None:
            continue
        if not isinstance(given, list) or not all(isinstance(v, str) and len(v) <= MAX_TEXT for v in given):
            messages[key] = ["Must be a list of strings."]
            continue
        cleaned = [clean_text(v) for v in given if clean_text(v)]
        if cleaned:
            pair[key] = cleaned
    if not messages and pair and set(pair) != {"subject", "object"}:
        missing = "object" if "subject" in pair else "subject"
        messages[missing] = ["A relationship needs both a subject and an object."]
    return pair, messages
