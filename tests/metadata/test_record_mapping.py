"""Deposit metadata -> record metadata (the v1 shape)."""

from __future__ import annotations

from repository.metadata import METADATA_KEYS, to_record_metadata, validate_for_publish


def test_full_mapping(lookups, make_metadata) -> None:
    deposit = validate_for_publish(make_metadata(
        license="CC-BY-4.0", keywords=["sensors"], version="v1.0", language="ger",
        grants=[{"id": "283595"}, {"id": "10.13039/100000001::1234567"}],
        communities=[{"identifier": "zenodo"}, {"identifier": "ecfunded"}],
        journal_title="Journal of Tests", journal_volume="4", journal_issue="2", journal_pages="1-10",
        conference_title="Conf", conference_acronym="C24", conference_dates="1-2 May 2024",
        conference_place="Geneva, Switzerland", conference_url="https://conf.org", conference_session="VI",
        conference_session_part="1", imprint_publisher="Pub", imprint_place="Bern, Switzerland",
        imprint_isbn="978-0-306-40615-7", partof_title="Proceedings", partof_pages="3-4",
        thesis_university="Uni", thesis_supervisors=[{"name": "Roe, Richard"}],
        references=["Ref A"], notes="<p>n</p>", method="<p>m</p>", publication_date="2024-05-01",
        related_identifiers=[{"identifier": "10.1234/x", "relation": "cites"},
                             {"identifier": "PMC1234567", "relation": "isAlternateIdentifier"}],
    ), lookups)  # fmt: skip
    record = to_record_metadata(deposit, lookups, accepted_communities=["zenodo"])
    assert record == {
        "title": "Sensor readings of 2021",
        "creators": [{"name": "Doe, John", "affiliation": "CERN"}],
        "description": "<p>Readings of the sensors.</p>",
        "publication_date": "2024-05-01",
        "access_right": "open",
        "access_right_category": "success",
        "license": {"id": "cc-by-4.0"},
        "resource_type": {"type": "publication", "subtype": "article", "title": "Journal article"},
        "keywords": ["sensors"],
        "version": "v1.0",
        "language": "ger",
        "notes": "<p>n</p>",
        "method": "<p>m</p>",
        "references": ["Ref A"],
        "communities": [{"id": "zenodo"}],
        "grants": [
            {"code": "283595", "title": "OpenAIREplus", "acronym": "OPENAIREPLUS", "program": "FP7",
             "funder": {"doi": "10.13039/501100000780", "name": "European Commission", "acronyms": ["EC"]}},
            {"code": "1234567", "title": "A study",
             "funder": {"doi": "10.13039/100000001", "name": "National Science Foundation", "acronyms": ["NSF"]}},
        ],
        "journal": {"title": "Journal of Tests", "volume": "4", "issue": "2", "pages": "1-10"},
        "meeting": {"title": "Conf", "acronym": "C24", "dates": "1-2 May 2024", "place": "Geneva, Switzerland",
                    "url": "https://conf.org", "session": "VI", "session_part": "1"},
        "imprint": {"publisher": "Pub", "place": "Bern, Switzerland", "isbn": "978-0-306-40615-7"},
        "part_of": {"title": "Proceedings", "pages": "3-4"},
        "thesis": {"university": "Uni", "supervisors": [{"name": "Roe, Richard"}]},
        "related_identifiers": [{"identifier": "10.1234/x", "relation": "cites", "scheme": "doi"}],
        "alternate_identifiers": [{"identifier": "PMC1234567", "scheme": "pmcid"}],
    }  # fmt: skip
    # The deposit itself holds only the specification's keys.
    assert set(deposit) <= set(METADATA_KEYS)


def test_keys_follow_the_access_right(lookups, make_metadata) -> None:
    embargoed = to_record_metadata(
        validate_for_publish(make_metadata(access_right="embargoed", embargo_date="2030-01-01"), lookups),
        lookups,
    )
    assert (embargoed["access_right_category"], embargoed["embargo_date"]) == ("warning", "2030-01-01")
    assert embargoed["license"] == {"id": "cc-by-4.0"}
    restricted = to_record_metadata(
        {"access_right": "restricted", "access_conditions": "<p>Ask</p>", "license": "cc-by-4.0",
         "embargo_date": "2030-01-01", "upload_type": "dataset"}, lookups)  # fmt: skip
    assert restricted == {"access_right": "restricted", "access_right_category": "danger",
                          "access_conditions": "<p>Ask</p>",
                          "resource_type": {"type": "dataset", "title": "Dataset"}}  # fmt: skip


def test_no_accepted_communities_and_unknown_grants(lookups) -> None:
    record = to_record_metadata(
        {"upload_type": "image", "image_type": "photo", "communities": [{"identifier": "zenodo"}],
         "grants": [{"id": "10.13039/100000001::77"}], "prereserve_doi": {"doi": "10.5281/zenodo.1", "recid": 1}},
        lookups,
    )  # fmt: skip
    assert "communities" not in record and "prereserve_doi" not in record
    assert record["resource_type"] == {"type": "image", "subtype": "photo", "title": "Photo"}
    # A grant no longer in the vocabulary still shows what the deposit said.
    assert record["grants"] == [{"code": "77", "funder": {"doi": "10.13039/100000001"}}]


def test_mapping_does_not_share_objects_with_the_deposit(lookups, make_metadata) -> None:
    deposit = validate_for_publish(make_metadata(), lookups)
    record = to_record_metadata(deposit, lookups)
    record["creators"][0]["name"] = "changed"
    assert deposit["creators"][0]["name"] == "Doe, John"
