"""The deposit form's pickers over HTTP, as a browser without JavaScript uses them: an affiliation typed by a name
ROR knows gets its ROR id, stored in the metadata; a license, a community and a language by their names; relations
in words; an ORCID iD with a typo refused with words that say so, beside the field and in the summary, while the rest
is saved; the people named before suggested."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from pages.test_deposit_form import OWNER, api, browser, start, submit
from repository.accounts.tokens import create_user
from repository.cli import COMMANDS, invoke
from repository.communities import store
from repository.storage.tables.deposits import deposits

SAMPLE = str(Path(__file__).parent.parent / "data" / "ror" / "ror-sample-v2.json")
MONASH = "https://ror.org/02bfwt286"
TYPO = "0000-0002-1825-0098"  # 0000-0002-1825-0097 with its check digit off by one


@pytest.fixture
def owner(app, settings):  # type: ignore[no-untyped-def]
    assert invoke(COMMANDS["load-ror"], [SAMPLE, "--quiet"], settings) == 0
    return browser(app, OWNER)


def _stored(client, dep_id: int) -> dict:  # type: ignore[no-untyped-def]
    """The deposition's metadata as stored (the API shows people with the specification's keys only)."""
    db = client.application.extensions["repository"].db
    with db.read() as conn:
        return conn.execute(select(deposits.c.metadata).where(deposits.c.id == dep_id)).scalar_one()


def _value(page: str, name: str) -> str:
    found = re.search(rf'name="{re.escape(name)}" value="([^"]*)"', page)
    assert found is not None, name
    return html.unescape(found[1])


def test_an_affiliation_typed_by_its_name_gets_its_ror_id(owner):
    dep_id = start(owner)
    fields = {"title": "Tides", "creators-0-name": "Doe, Jane", "creators-0-affiliation": "Monash University",
              "creators-1-name": "Roe, Richard", "creators-1-affiliation": "Royal Melbourne Institute of Technology "
                                                                            "University",
              "creators-2-name": "Poe, Edgar", "creators-2-affiliation": "Alpine Institute",
              "contributors-0-name": "Moe, Mary", "contributors-0-type": "DataCurator",
              "contributors-0-affiliation": "uq"}
    assert submit(owner, dep_id, fields).status_code == 303
    creators = _stored(owner, dep_id)["creators"]
    assert creators == [
        {"name": "Doe, Jane", "affiliation": "Monash University", "affiliation_id": MONASH},
        {"name": "Roe, Richard", "affiliation": "Royal Melbourne Institute of Technology University",
         "affiliation_id": "https://ror.org/04ttjf776"},
        {"name": "Poe, Edgar", "affiliation": "Alpine Institute"},  # a name ROR does not know: no id
    ]
    # An acronym is not a name: it says too little to be sure which organisation is meant.
    assert "affiliation_id" not in _stored(owner, dep_id)["contributors"][0]
    assert "affiliation_id" not in api(owner, dep_id)["metadata"]["creators"][0]  # what API clients read
    page = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert _value(page, "creators-0-affiliation_id") == MONASH
    assert "Affiliation&#39;s ROR id" in page or "Affiliation's ROR id" in page


def test_a_ror_id_given_is_kept_and_a_wrong_one_refused_in_words(owner):
    dep_id = start(owner)
    fields = {"title": "Tides", "creators-0-name": "Doe, Jane", "creators-0-affiliation": "Monash Uni",
              "creators-0-affiliation_id": "02bfwt286"}
    assert submit(owner, dep_id, fields).status_code == 303
    assert _stored(owner, dep_id)["creators"][0]["affiliation_id"] == MONASH
    fields["creators-0-affiliation_id"] = "02bfwt287"
    assert submit(owner, dep_id, fields).status_code == 303  # the rest saved, the id kept as typed
    page = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert "Not a valid ROR identifier: expected an id like https://ror.org/02bfwt286" in html.unescape(page)
    assert _value(page, "creators-0-affiliation_id") == "02bfwt287"


def test_an_orcid_typo_is_refused_in_words_and_the_rest_is_saved(owner):
    dep_id = start(owner)
    fields = {"title": "Tides", "creators-0-name": "Doe, Jane", "creators-0-orcid": TYPO,
              "creators-1-name": "Roe, Richard", "creators-1-orcid": "0000-0002-1825"}
    assert submit(owner, dep_id, fields).status_code == 303
    assert api(owner, dep_id)["metadata"]["title"] == "Tides"
    page = html.unescape(owner.get(f"/deposit/{dep_id}").get_data(as_text=True))
    checksum = ("This ORCID iD does not exist: its last character does not match the others (a digit is probably "
                "mistyped).")
    assert page.count(checksum) == 2  # beside the field and in the summary
    assert '<a href="#creators-0-orcid">Creator 1: ORCID: ' + checksum in page
    assert "Creator 2: ORCID: An ORCID iD is 16 digits in four groups of four" in page
    assert 'id="creators-0-orcid-error"' in page and _value(page, "creators-0-orcid") == TYPO


def test_license_language_and_community_by_their_names(owner, app):
    with app.extensions["repository"].db.write() as conn:
        store.create(conn, create_user(conn, "curator@example.org"),
                     {"identifier": "alpine", "title": "Alpine research", "description": "Mountains."})
    dep_id = start(owner)
    fields = {"title": "Tides", "upload_type": "software", "access_right": "open", "license": "mit license",
              "language": "German", "communities-0-identifier": "Alpine Research"}
    assert submit(owner, dep_id, fields).status_code == 303
    metadata = api(owner, dep_id)["metadata"]
    assert (metadata["license"], metadata["language"], metadata["communities"]) == ("MIT", "deu",
                                                                                    [{"identifier": "alpine"}])
    page = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert _value(page, "communities-0-identifier") == "Alpine research"  # shown by its title again
    assert _value(page, "language") == "German"
    fields["communities-0-identifier"] = "Alpine Rsearch"
    assert submit(owner, dep_id, fields).status_code == 303
    assert "communities" not in api(owner, dep_id)["metadata"]  # refused, kept as typed


def test_the_default_license_is_chosen_and_the_common_ones_come_first(owner):
    dep_id = start(owner)
    assert submit(owner, dep_id, {"title": "Tides", "upload_type": "dataset"}).status_code == 303
    page = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert _value(page, "license") == "cc-zero"
    listed = re.search(r'<datalist id="licenses-list">(.*?)</datalist>', page, re.S)[1]  # type: ignore[index]
    assert re.findall(r'<option value="([^"]+)"', listed)[:7] == [
        "cc-by", "cc-zero", "cc-by-sa", "MIT", "Apache-2.0", "GPL-3.0-or-later", "BSD-3-Clause"]


def test_relations_read_in_words(owner):
    page = owner.get(f"/deposit/{start(owner)}").get_data(as_text=True)
    assert '<option value="isSupplementTo">is a supplement to … (isSupplementTo)</option>' in page
    assert '<option value="isCitedBy">is cited by … (isCitedBy)</option>' in page


def test_the_people_named_before_are_suggested(owner):
    first = start(owner)
    fields = {"title": "Tides", "creators-0-name": "Doe, Jane", "creators-0-orcid": "0000-0002-1825-0097",
              "creators-0-affiliation": "Monash University"}
    assert submit(owner, first, fields).status_code == 303
    page = owner.get(f"/deposit/{start(owner)}").get_data(as_text=True)
    people = re.search(r'<datalist id="people-list">(.*?)</datalist>', page, re.S)[1]  # type: ignore[index]
    assert people == '<option value="Doe, Jane">0000-0002-1825-0097 · Monash University</option>'
    places = re.search(r'<datalist id="affiliations-list">(.*?)</datalist>', page, re.S)[1]  # type: ignore[index]
    assert places == f'<option value="Monash University">{MONASH}</option>'


@pytest.mark.slow  # a whole walk through several requests: 0.4 s and more
def test_a_subject_term_of_a_loaded_vocabulary_gets_its_identifier(owner, settings):
    sample = str(Path(__file__).parent.parent / "data" / "subjects" / "mesh-sample.jsonl")
    assert invoke(COMMANDS["load-subjects"], [sample, "--vocabulary", "MeSH"], settings) == 0
    dep_id = start(owner)
    page = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert '<option value="Hypertension">https://id.nlm.nih.gov/mesh/D006973 · MeSH</option>' in page
    fields = {"title": "Tides", "subjects-0-term": "asthma", "subjects-1-term": "Sea level",
              "subjects-1-identifier": "https://vocab.example.org/sea-level", "subjects-2-term": "Unknown term"}
    assert submit(owner, dep_id, fields).status_code == 303  # the rest saved, the unknown term kept as typed
    assert _stored(owner, dep_id)["subjects"][:2] == [
        {"term": "asthma", "identifier": "https://id.nlm.nih.gov/mesh/D001249", "scheme": "url"},
        {"term": "Sea level", "identifier": "https://vocab.example.org/sea-level", "scheme": "url"}]
    page = html.unescape(owner.get(f"/deposit/{dep_id}").get_data(as_text=True))
    assert _value(page, "subjects-2-term") == "Unknown term" and "Identifier is required." in page
