"""Deposit metadata validation: each rule, drafts versus publishing, and the shape of the 400."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from repository.errors import ValidationError
from repository.metadata import validate_draft, validate_for_publish


def today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


def problems(call: Any, *args: Any, **kwargs: Any) -> dict[str, str]:
    """The `field -> message` of the 400 the call raises."""
    with pytest.raises(ValidationError) as info:
        call(*args, **kwargs)
    assert info.value.status == 400
    body = info.value.body()
    assert all(set(entry) == {"field", "message"} for entry in body["errors"])
    return {entry["field"]: entry["message"] for entry in body["errors"]}


# Drafts and publishing


def test_an_empty_draft_is_valid(lookups) -> None:
    assert validate_draft({}, lookups) == {}


def test_a_partial_draft_is_stored_as_given(lookups) -> None:
    assert validate_draft({"upload_type": "publication", "title": "  Half done  "}, lookups) == {
        "upload_type": "publication",
        "title": "Half done",
    }


def test_publish_lists_every_missing_field_at_once(lookups) -> None:
    assert problems(validate_for_publish, {}, lookups) == {
        "metadata.upload_type": "Missing data for required field.",
        "metadata.title": "Missing data for required field.",
        "metadata.creators": "Missing data for required field.",
        "metadata.description": "Missing data for required field.",
    }


def test_publish_applies_defaults(lookups, make_metadata) -> None:
    before = today()
    result = validate_for_publish(make_metadata(), lookups)
    assert result["publication_date"] in {before, today()}  # a run may cross midnight
    assert result["access_right"] == "open"
    assert result["license"] == "cc-by-4.0"  # `cc-by`, resolved to the canonical id
    assert "embargo_date" not in result


def test_default_license_of_a_dataset_is_cc_zero(lookups, make_metadata) -> None:
    result = validate_for_publish(make_metadata(upload_type="dataset", publication_type=None), lookups)
    assert result["license"] == "cc0-1.0"


def test_a_draft_gets_no_defaults(lookups, make_metadata) -> None:
    result = validate_draft(make_metadata(), lookups)
    assert not {"publication_date", "access_right", "license"} & set(result)


def test_embargo_date_defaults_to_today_and_survives_only_when_embargoed(lookups, make_metadata) -> None:
    before = today()
    embargoed = validate_for_publish(make_metadata(access_right="embargoed"), lookups)
    assert embargoed["embargo_date"] in {before, today()} and embargoed["license"] == "cc-by-4.0"
    given = validate_for_publish(make_metadata(access_right="embargoed", embargo_date="2031-01-02"), lookups)
    assert given["embargo_date"] == "2031-01-02"
    opened = validate_for_publish(make_metadata(embargo_date="2031-01-02"), lookups)
    assert "embargo_date" not in opened


def test_keys_that_do_not_apply_to_the_access_right_are_dropped(lookups, make_metadata) -> None:
    closed = validate_for_publish(
        make_metadata(access_right="closed", license="mit", access_conditions="x"), lookups
    )
    assert closed["access_right"] == "closed"
    assert not {"license", "embargo_date", "access_conditions"} & set(closed)
    draft = validate_draft(
        {"access_right": "restricted", "license": "mit", "access_conditions": "<p>Ask</p>"}, lookups
    )
    assert draft == {"access_right": "restricted", "access_conditions": "<p>Ask</p>"}


def test_access_conditions_are_required_when_restricted(lookups, make_metadata) -> None:
    assert problems(validate_for_publish, make_metadata(access_right="restricted"), lookups) == {
        "metadata.access_conditions": "Required when access right is restricted."
    }
    assert validate_draft(make_metadata(access_right="restricted"), lookups)["access_right"] == "restricted"


@pytest.mark.parametrize(
    ("upload_type", "field"), [("publication", "publication_type"), ("image", "image_type")]
)
def test_subtype_is_required_at_publish(lookups, make_metadata, upload_type: str, field: str) -> None:
    metadata = make_metadata(upload_type=upload_type, publication_type=None)
    assert problems(validate_for_publish, metadata, lookups) == {
        f"metadata.{field}": "Missing data for required field."
    }
    assert validate_draft(metadata, lookups)["upload_type"] == upload_type


def test_subtypes_are_checked_and_dropped_for_other_types(lookups) -> None:
    assert problems(validate_draft, {"publication_type": "novel", "image_type": "sketch", "upload_type": "book"},
                    lookups) == {"metadata.publication_type": "Not a valid choice.",
                                 "metadata.image_type": "Not a valid choice.",
                                 "metadata.upload_type": "Not a valid choice."}  # fmt: skip
    kept = validate_draft(
        {"upload_type": "image", "image_type": "photo", "publication_type": "article"}, lookups
    )
    assert kept == {"upload_type": "image", "image_type": "photo"}


@pytest.mark.parametrize("field", ["conference_dates", "conference_place"])
def test_conference_details_need_a_title_or_acronym(lookups, make_metadata, field: str) -> None:
    assert problems(validate_for_publish, make_metadata(**{field: "x"}), lookups) == {
        f"metadata.{field}": "Requires conference_title or conference_acronym."
    }
    assert (
        validate_for_publish(make_metadata(**{field: "x", "conference_acronym": "C"}), lookups)[field] == "x"
    )
    assert (
        validate_for_publish(make_metadata(**{field: "x", "conference_title": "Conf"}), lookups)[field] == "x"
    )


def test_a_stored_draft_publishes_to_the_same_result(lookups, make_metadata) -> None:
    metadata = make_metadata(
        grants=[{"id": "283595"}], communities=[{"identifier": "zenodo"}], license="CC-BY",
        related_identifiers=[{"identifier": "https://doi.org/10.1234/x", "relation": "cites"}],
        creators=[{"name": "Doe, John", "orcid": "https://orcid.org/0000-0002-1825-0097", "gnd": "gnd:4079154-3"}],
        language="GER", doi="doi:10.1234/own",
    )  # fmt: skip
    stored = validate_draft(metadata, lookups)
    assert validate_for_publish(stored, lookups) == validate_for_publish(metadata, lookups)
    assert validate_draft(stored, lookups) == stored


# Error shape


def test_every_problem_at_once_with_dotted_paths(lookups, make_metadata) -> None:
    metadata = make_metadata(
        creators=[{"name": "Doe, John"}, {"affiliation": "CERN"}, {"name": "X", "familyname": "Y"}],
        access_right="public", bogus=1,
        related_identifiers=[{"identifier": "nonsense", "relation": "IsCitedBy"}],
        locations=[{"lat": 100, "lon": 0}], dates=[{"start": "2020-02-01", "end": "2020-01-01", "type": "Valid"}],
    )  # fmt: skip
    assert problems(validate_for_publish, metadata, lookups) == {
        "metadata.creators.1.name": "Name is required.",
        "metadata.creators.2.familyname": "Unknown field name.",
        "metadata.access_right": "Not a valid choice.",
        "metadata.bogus": "Unknown field name.",
        "metadata.related_identifiers.0.relation": "Not a valid choice.",
        "metadata.related_identifiers.0.identifier": "Not a valid persistent identifier.",
        "metadata.locations.0.place": "Place is required.",
        "metadata.locations.0.lat": "Latitude must be between -90 and 90.",
        "metadata.dates.0.end": '"start" date must be before "end" date.',
    }


def test_prefix_of_paths_can_be_changed_or_dropped(lookups) -> None:
    assert problems(validate_draft, {"bogus": 1}, lookups, prefix="") == {"bogus": "Unknown field name."}


@pytest.mark.parametrize("metadata", [[], "x", None, 3])
def test_metadata_must_be_an_object(lookups, metadata: Any) -> None:
    assert problems(validate_draft, metadata, lookups) == {"metadata": "Not a valid object."}


def test_nested_objects_must_be_objects(lookups) -> None:
    assert problems(
        validate_draft, {"creators": ["Doe, John"], "keywords": "a", "grants": {"id": "1"}}, lookups
    ) == {
        "metadata.creators.0": "Not a valid object.",
        "metadata.keywords": "Not a valid list.",
        "metadata.grants": "Not a valid list.",
    }


def test_null_and_blank_values_count_as_not_given(lookups) -> None:
    assert (
        validate_draft({"title": None, "notes": "  ", "keywords": [], "doi": "", "version": None}, lookups)
        == {}
    )


# Plain fields


def test_title_is_trimmed_cleaned_and_at_least_three_characters(lookups) -> None:
    assert validate_draft({"title": " A\u200bB\x00C "}, lookups) == {"title": "ABC"}
    assert problems(validate_draft, {"title": "ab"}, lookups) == {
        "metadata.title": "Shorter than minimum length 3."
    }
    assert problems(validate_draft, {"title": 12}, lookups) == {"metadata.title": "Not a valid string."}
    assert problems(validate_draft, {"title": "x" * 10_001}, lookups) == {
        "metadata.title": "Longer than maximum length 10000."
    }


@pytest.mark.parametrize(
    ("given", "stored"), [("2021-04-01", "2021-04-01"), (" 2021-04-01 ", "2021-04-01"),
                          ("2021-04-01T10:00:00+00:00", "2021-04-01")]
)  # fmt: skip
def test_publication_date(lookups, given: str, stored: str) -> None:
    assert validate_draft({"publication_date": given}, lookups) == {"publication_date": stored}


@pytest.mark.parametrize("given", ["2021", "2021-13-01", "01/04/2021", "yesterday", 20210401])
def test_bad_publication_dates(lookups, given: Any) -> None:
    assert problems(validate_draft, {"publication_date": given}, lookups) == {
        "metadata.publication_date": "Not a valid date. Use the format YYYY-MM-DD."
    }


def test_keywords_and_references_lose_blank_entries(lookups) -> None:
    result = validate_draft(
        {"keywords": ["a", " ", "", " b "], "references": ["Doe J (2020)", "  "]}, lookups
    )
    assert result == {"keywords": ["a", "b"], "references": ["Doe J (2020)"]}
    assert problems(validate_draft, {"keywords": ["a", 3]}, lookups) == {
        "metadata.keywords.1": "Not a valid string."
    }


@pytest.mark.parametrize(("given", "stored"), [("eng", "eng"), ("ger", "ger"), ("deu", "deu"), ("fra", "fra"),
                                               ("fre", "fre"), ("FRE", "fre")])  # fmt: skip
def test_language_codes_are_stored_as_given_in_lower_case(lookups, given: str, stored: str) -> None:
    assert validate_draft({"language": given}, lookups) == {"language": stored}


@pytest.mark.parametrize("given", ["en", "english", "xyz", "e-n"])
def test_bad_language_codes(lookups, given: str) -> None:
    assert "metadata.language" in problems(validate_draft, {"language": given}, lookups)


def test_conference_url_must_be_a_url(lookups) -> None:
    assert problems(validate_draft, {"conference_url": "not a url"}, lookups) == {
        "metadata.conference_url": "Not a valid URL."
    }
    assert validate_draft({"conference_url": "https://conf.org/2024"}, lookups) == {
        "conference_url": "https://conf.org/2024"
    }


# HTML


def test_html_fields_are_sanitised(lookups) -> None:
    dirty = ('<p onclick="steal()">Hi <b>there</b><script>alert(1)</script><style>p{}</style>'
             '<a href="javascript:alert(1)">x</a> <a href="https://example.org" title="t">y</a>'
             '<img src="x" onerror="alert(1)"><iframe src="https://evil.example"></iframe></p>')  # fmt: skip
    result = validate_draft({"description": dirty, "notes": dirty, "method": dirty}, lookups)
    for key in ("description", "notes", "method"):
        html = result[key]
        assert (
            "<script" not in html and "alert" not in html and "onclick" not in html and "<style" not in html
        )
        assert "<img" not in html and "<iframe" not in html and "javascript:" not in html
        assert "<p>Hi <b>there</b>" in html and 'href="https://example.org"' in html
    restricted = validate_draft(
        {"access_right": "restricted", "access_conditions": "<script>x</script>Ask"}, lookups
    )
    assert restricted["access_conditions"] == "Ask"


def test_a_description_that_is_only_unsafe_html_is_too_short(lookups) -> None:
    assert problems(validate_draft, {"description": "<script>alert('hello')</script>"}, lookups) == {
        "metadata.description": "Shorter than minimum length 3."
    }


def test_allowed_markup_survives(lookups) -> None:
    html = (
        '<ul><li><em>a</em></li></ul><table><tr><td colspan="2">c</td></tr></table><pre><code>x</code></pre>'
    )
    assert validate_draft({"description": html}, lookups)["description"] == html.replace(
        "<table><tr>", "<table><tbody><tr>"
    ).replace("</tr></table>", "</tr></tbody></table>")


def test_a_wrong_license_is_reported_not_replaced_by_the_default(lookups, make_metadata) -> None:
    assert problems(validate_for_publish, make_metadata(license="my-own"), lookups) == {
        "metadata.license": "Not a valid license id: 'my-own'. See /api/licenses/ for the ids."
    }
