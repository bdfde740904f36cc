"""A bulk import checks each record's metadata by the publish rules in one pass where `create` then `publish` check
them in two (`deposits.actions.new_publication`, docs/operators/migration.md#bulk-writes): the metadata it publishes,
and the errors of a record that fails, are those the deposit state machine gives the same metadata, for every record
of the recorded repositories and for metadata the rules clean, normalise, complete or refuse."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.recorded_source import FIXTURES, OAI
from lxml import etree
from sqlalchemy import select

from repository.accounts.tokens import create_user
from repository.deposits import actions
from repository.errors import ValidationError
from repository.imports.harvest import Harvested
from repository.imports.oai import map_record
from repository.imports.publishing import publish_new
from repository.records.lookups import DatabaseLookups
from repository.storage.tables.records import records

PREFIXES = {"oai_dc": "oai_dc", "datacite": "datacite"}  # the recorded answers' formats, by a part of their names

PERSON = {"name": "Doe, Jane", "affiliation": " Uni\u200b ", "orcid": "https://orcid.org/0000-0002-1825-0097"}
BASE = {"upload_type": "publication", "publication_type": "article", "title": "  A title\u200b ",
        "creators": [PERSON], "description": "<p>Text</p>", "doi": "https://doi.org/10.1234/ABC.1",
        "files": {"enabled": False}}

# Metadata the rules change on the way (cleaned text and HTML, normalised identifiers, canonical licenses, defaults,
# dropped keys), and metadata they refuse, at the draft's check or only at the publish's.
CASES: list[dict[str, Any]] = [
    BASE,
    {**BASE, "description": '<p onclick="x()">Hi <script>alert(1)</script><b>bold</b> &amp; <a href="javascript:x">'
                            'l</a> <a href="https://example.org/a?b=1&c=2">ok</a> 1 < 2 <br/> <img src=x></p>',
     "notes": "  <i>n</i>  ", "keywords": [" a ", "", "b\u200b"], "language": "Fin"},
    {**BASE, "doi": "doi:10.1234/Some.DOI", "license": "CC-BY-4.0", "access_right": "open",
     "related_identifiers": [{"identifier": "https://doi.org/10.1234/OTHER", "relation": "isCitedBy"},
                             {"identifier": "arXiv:1234.56789", "relation": "cites", "scheme": "ARXIV"},
                             {"identifier": "https://example.org/x", "relation": "isIdenticalTo"}],
     "subjects": [{"term": "Physics", "identifier": "https://id.loc.gov/authorities/subjects/sh85101653"}]},
    {**BASE, "license": "CC-BY-NC-4.0", "access_right": "closed",
     "publication_date": "2020-01-02T10:00:00Z", "upload_type": "dataset", "image_type": "photo"},
    {**BASE, "access_right": "embargoed", "embargo_date": "2030-01-01", "upload_type": "image",
     "publication_type": None, "image_type": "figure", "contributors": [{**PERSON, "type": "Editor"}],
     "dates": [{"start": "2020-01-01", "type": "Collected"}], "locations": [{"place": " Oslo ", "lat": 0, "lon": 1}]},
    {**BASE, "access_right": "restricted", "access_conditions": "<p>Ask</p>", "version": " v1 ",
     "conference_title": "Conf", "conference_dates": "1-2 May", "imprint_publisher": " Pub "},
    {**BASE, "description": "ab"},  # refused as a draft
    {**BASE, "conference_dates": "1-2 May"},  # refused as a draft: a rule between given fields
    {**BASE, "upload_type": "image", "publication_type": None},  # refused only at publish: the image type is missing
    {**BASE, "creators": []},  # refused only at publish: no creators
    {**BASE, "creators": [{"name": ", John", "orcid": "0000-0000-0000-0000"}], "upload_type": "image"},  # both
    {**BASE, "license": "no-such-license"},
    {**BASE, "doi": "10.1234"},
    {**BASE, "doi": "10.80001/ours.1"},  # a DOI under this service's prefix: the state machine's
]


def recorded_metadata(lookups: DatabaseLookups) -> list[dict[str, Any]]:
    """The deposit metadata the mapping makes of every record of the recorded answers."""
    found = []
    for path in sorted(FIXTURES.glob("*.xml")):
        prefix = next((p for part, p in PREFIXES.items() if part in path.name), None)
        for record in etree.parse(str(path)).getroot().iter(f"{OAI}record"):
            metadata = record.find(f"{OAI}metadata")
            if prefix is None or metadata is None:
                continue
            harvested = Harvested(record.findtext(f"{OAI}header/{OAI}identifier", ""), None, False, metadata[0])
            try:
                found.append(map_record(harvested, prefix, lookups.license_id).metadata)
            except ValueError:
                continue
    return found


def outcome(conn: Any, ctx: actions.Context, owner: int, given: dict[str, Any]) -> tuple[Any, Any] | None:
    """(bulk, one by one) for `given`: each the metadata published or the errors; None when only the deposit state
    machine makes the record. The state machine's record is rolled back, leaving each case alone."""
    try:
        bulk: Any = actions.new_publication(ctx, given, lambda doi: False)
    except actions.OneByOne:
        return None
    except ValidationError as exc:
        bulk = exc.errors
    nested = conn.begin_nested()
    try:
        dep_id, _ids = publish_new(conn, ctx, owner, given)
        one: Any = conn.execute(select(records.c.metadata).where(records.c.id == dep_id)).scalar_one()
    except ValidationError as exc:
        one = exc.errors
    nested.rollback()
    return bulk, one


@pytest.mark.slow  # 0.5 s and more of work
def test_one_pass_gives_what_create_and_publish_give(app, settings) -> None:
    db = app.extensions["repository"].db
    with db.write() as conn:
        owner = create_user(conn, "harvest@example.org")
        lookups = DatabaseLookups(conn)
        ctx = actions.Context(settings, lookups, metadata_only=True)
        compared = [outcome(conn, ctx, owner, given) for given in recorded_metadata(lookups) + CASES]
    done = [pair for pair in compared if pair is not None]
    assert sum(isinstance(bulk, dict) for bulk, _one in done) > 60
    assert sum(isinstance(bulk, list) for bulk, _one in done) >= 8  # failures of both passes
    for bulk, one in done:
        assert bulk == one
