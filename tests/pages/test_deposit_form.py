"""The deposit form over HTTP, as a browser without JavaScript uses it: start a draft with a button, save every kind
of field (each repeatable group too), see errors beside the fields their dotted paths name, publish, edit and
discard, make a new version, delete a draft after confirming; nobody else's deposition, no forged form and no
expired session gets anywhere."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from helpers.http import https_client
from helpers.pages import csrf_from, referer, sign_in, sign_up_and_confirm

from repository.accounts.tokens import create_token, create_user, get_user_by_email
from repository.accounts.users import end_sessions
from repository.communities import store

OWNER, OTHER = "owner@example.org", "other@example.org"
PASSWORD = "correct horse battery"
ORCID = "0000-0002-1825-0097"

FILLED = {
    "upload_type": "publication", "publication_type": "article", "publication_date": "2024-03-01",
    "title": "Permafrost thaw in the Alps", "description": "<p>Hourly ground temperatures.</p>",
    "version": "v1.2", "language": "eng", "notes": "Collected by drones.",
    "access_right": "open", "license": "cc-by-sa", "prereserve_doi": "1",
    "creators-0-name": "Doe, Jane", "creators-0-affiliation": "Alpine Institute", "creators-0-orcid": ORCID,
    "creators-1-name": "Roe, Richard", "creators-1-gnd": "170118215",
    "keywords-0": "permafrost", "keywords-1": "alps",
    "contributors-0-name": "Poe, Edgar", "contributors-0-type": "DataCurator",
    "related_identifiers-0-identifier": "10.1234/other.5", "related_identifiers-0-relation": "isSupplementTo",
    "related_identifiers-0-resource_type": "dataset",
    "references-0": "Doe, J. (2020). Ice. Nature, 1, 2-3.",
    "communities-0-identifier": "alpine",
    "grants-0-id": "10.13039/501100000780::283595",
    "subjects-0-term": "Glaciology", "subjects-0-identifier": "https://id.loc.gov/authorities/subjects/sh85055042",
    "locations-0-place": "Zermatt, Switzerland", "locations-0-lat": "46.02", "locations-0-lon": "7.75",
    "dates-0-start": "2023-06-01", "dates-0-end": "2023-09-30", "dates-0-type": "Collected",
    "journal_title": "Cold Regions", "journal_volume": "12", "journal_issue": "3", "journal_pages": "10-20",
    "conference_title": "Alpine Days", "conference_acronym": "AD24", "conference_place": "Bern, Switzerland",
    "conference_url": "https://alpine.example.org/", "imprint_publisher": "Snow Press",
    "partof_title": "Ice Book", "thesis_university": "ETH Zurich",
    "thesis_supervisors-0-name": "Moe, Mary", "method": "<p>Boreholes.</p>",
}


def browser(app, email: str):  # type: ignore[no-untyped-def]
    """A new browser, signed up (confirmed) and signed in as `email`."""
    client = https_client(app)
    sign_up_and_confirm(client, app, email, PASSWORD)
    assert sign_in(client, email, PASSWORD).status_code in (302, 303)
    return client


def user_id(app, email: str) -> int:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        user = get_user_by_email(conn, email)
    assert user is not None
    return int(user["id"])


def bearer(app, email: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.write() as conn:
        return {"Authorization": f"Bearer {create_token(conn, user_id(app, email), ['deposit:write'])[1]}"}


def start(client) -> int:  # type: ignore[no-untyped-def]
    """Press "Start a new upload"; the new draft's id."""
    page = client.get("/deposit/new")
    created = client.post("/deposit/new", data={"csrf_token": csrf_from(page.get_data())}, headers=referer("/deposit/new"))
    assert created.status_code == 303, created.get_data(as_text=True)
    return int(re.fullmatch(r"/deposit/(\d+)", urlsplit(created.headers["Location"]).path)[1])  # type: ignore[index]


def submit(client, dep_id: int, fields: dict, action: str = "save"):  # type: ignore[no-untyped-def]
    """Post the form of deposition `dep_id` with `fields` and the pressed button's `action`."""
    page = client.get(f"/deposit/{dep_id}")
    data = {"csrf_token": csrf_from(page.get_data()), **fields, "action": action}
    return client.post(f"/deposit/{dep_id}", data=data, headers=referer(f"/deposit/{dep_id}"))


def review_and_publish(client, dep_id: int, fields: dict) -> str:  # type: ignore[no-untyped-def]
    """Press "Review and publish" with `fields`, then "Publish" on the review step; the review page's HTML."""
    saved = submit(client, dep_id, fields, "publish")
    assert saved.status_code == 303 and saved.headers["Location"].endswith(f"/deposit/{dep_id}/publish")
    review = client.get(f"/deposit/{dep_id}/publish").get_data(as_text=True)
    done = post(client, f"/deposit/{dep_id}/publish", f"/deposit/{dep_id}/publish")
    assert done.status_code == 303 and done.headers["Location"].endswith(f"/deposit/{dep_id}"), review
    return review


def post(client, path: str, page: str):  # type: ignore[no-untyped-def]
    token = csrf_from(client.get(page).get_data())
    return client.post(path, data={"csrf_token": token}, headers=referer(page))


def api(client, dep_id: int) -> dict:  # type: ignore[no-untyped-def]
    """The deposition as the API shows it to its signed-in owner."""
    answer = client.get(f"/api/deposit/depositions/{dep_id}")
    assert answer.status_code == 200
    return answer.get_json()


def add_file(client, app, dep_id: int, name: str = "data.csv", content: bytes = b"a,b\n1,2\n") -> None:  # type: ignore[no-untyped-def]
    bucket = urlsplit(api(client, dep_id)["links"]["bucket"]).path
    assert client.put(f"{bucket}/{name}", data=content, headers=bearer(app, OWNER)).status_code in (200, 201)


@pytest.fixture
def owner(app):  # type: ignore[no-untyped-def]
    return browser(app, OWNER)


@pytest.fixture
def community(app):  # type: ignore[no-untyped-def]
    """The community `alpine`, owned by someone else."""
    with app.extensions["repository"].db.write() as conn:
        store.create(conn, create_user(conn, "curator@example.org"),
                     {"identifier": "alpine", "title": "Alpine research", "description": "Mountains."})


def test_starting_needs_sign_in_and_a_button(client, app):
    away = client.get("/deposit/new")
    assert away.status_code in (302, 303) and "/login/?next=/deposit/new" in away.headers["Location"]
    signed = browser(app, OWNER)
    page = signed.get("/deposit/new")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Start a new upload" in html and 'action="/deposit/new"' in html
    assert signed.get("/api/deposit/depositions").get_json() == []  # showing the page created nothing
    dep_id = start(signed)
    form = signed.get(f"/deposit/{dep_id}")
    html = form.get_data(as_text=True)
    assert form.status_code == 200 and form.headers["Cache-Control"] == "private, no-store"
    for name in ("upload_type", "title", "creators-0-name", "description", "access_right", "license", "keywords-0"):
        assert f'name="{name}"' in html, name
    assert '<option value="cc-by">' in html and '<option value="English">eng</option>' in html  # pickers' suggestions
    assert 'pages/deposit/_files.html' not in html and 'id="files"' in html  # the file area is there
    assert [d["id"] for d in signed.get("/api/deposit/depositions").get_json()] == [dep_id]
    paths = client.get("/api/openapi.json").get_json()["paths"]
    assert {"/deposit/new", "/deposit/{dep_id}", "/deposit/{dep_id}/delete", "/deposit/{dep_id}/newversion"} <= set(paths)


@pytest.mark.slow
def test_save_every_field_and_repeatable_kind(owner, app, community):
    dep_id = start(owner)
    saved = submit(owner, dep_id, FILLED)
    assert saved.status_code == 303 and saved.headers["Location"].endswith(f"/deposit/{dep_id}")
    m = api(owner, dep_id)["metadata"]
    assert m["title"] == FILLED["title"] and m["publication_type"] == "article" and m["license"] == "cc-by-sa"
    assert m["creators"] == [{"name": "Doe, Jane", "affiliation": "Alpine Institute", "orcid": ORCID},
                             {"name": "Roe, Richard", "gnd": "170118215"}]
    assert m["keywords"] == ["permafrost", "alps"] and m["references"] == [FILLED["references-0"]]
    assert m["contributors"] == [{"name": "Poe, Edgar", "type": "DataCurator"}]
    assert m["related_identifiers"][0] | {"scheme": "doi"} == {
        "identifier": "10.1234/other.5", "relation": "isSupplementTo", "resource_type": "dataset", "scheme": "doi"}
    assert m["communities"] == [{"identifier": "alpine"}] and m["grants"] == [{"id": FILLED["grants-0-id"]}]
    assert m["subjects"][0]["term"] == "Glaciology" and m["subjects"][0]["scheme"] == "url"
    assert m["locations"] == [{"place": "Zermatt, Switzerland", "lat": 46.02, "lon": 7.75}]
    assert m["dates"] == [{"start": "2023-06-01", "end": "2023-09-30", "type": "Collected"}]
    assert m["thesis_supervisors"] == [{"name": "Moe, Mary"}] and m["conference_acronym"] == "AD24"
    assert m["prereserve_doi"]["doi"].endswith(str(dep_id)) and m["method"] == "<p>Boreholes.</p>"
    # The form shows it all again, the reserved DOI too.
    page = owner.get(f"/deposit/{dep_id}")
    html = page.get_data(as_text=True)
    assert "Draft saved." in html and m["prereserve_doi"]["doi"] in html
    assert 'id="creators-1-gnd" name="creators-1-gnd" value="170118215"' in html
    assert 'name="locations-0-lat" value="46.02"' in html and 'value="DataCurator" selected' in html
    # Emptying a field removes it; keys the form does not show (set through the API) are kept.
    assert owner.put(f"/api/deposit/depositions/{dep_id}", json={"metadata": {**m, "custom": {"dwc:genus": ["Ursus"]}}},
                     headers={"X-CSRFToken": csrf_from(html), **referer(f"/deposit/{dep_id}")}).status_code == 200
    fewer = {k: v for k, v in FILLED.items() if not k.startswith(("keywords", "journal_"))}
    assert submit(owner, dep_id, fewer).status_code == 303
    m = api(owner, dep_id)["metadata"]
    assert "keywords" not in m and "journal_title" not in m and m["custom"] == {"dwc:genus": ["Ursus"]}


@pytest.mark.slow  # 0.4 s and more of work
def test_rows_are_added_and_removed_without_javascript(owner):
    dep_id = start(owner)
    added = submit(owner, dep_id, {"title": "Typed, not saved", "creators-0-name": "Doe, Jane"}, "add:contributors")
    html = added.get_data(as_text=True)
    assert added.status_code == 200 and 'name="contributors-0-name"' in html and "autofocus" in html
    assert 'value="Typed, not saved"' in html and "Not saved yet" in html
    assert "title" not in api(owner, dep_id)["metadata"]
    # Rows are read in index order whatever the gaps (static/deposit-form.js leaves some) and numbered again.
    removed = submit(owner, dep_id, {"creators-0-name": "Doe, Jane", "creators-7-name": "Roe, Richard",
                                     "creators-9-name": "Poe, Edgar"}, "remove:creators:1")
    html = removed.get_data(as_text=True)
    assert 'name="creators-1-name" value="Poe, Edgar"' in html and "Roe, Richard" not in html
    assert 'name="creators-2-name"' not in html
    for odd in ("remove:creators:x", "add:nothing", "remove:nothing:0", "explode"):
        answer = submit(owner, dep_id, {"creators-0-name": "Doe, Jane"}, odd)
        assert answer.status_code in (200, 303), odd  # shown again or saved, never an error


def test_errors_are_shown_beside_their_fields_and_the_rest_is_saved(owner):
    dep_id = start(owner)
    typed = {"title": "Kept as typed", "upload_type": "poster", "language": "klingonese", "locations-0-place": "Here",
             "locations-0-lat": "north", "locations-0-lon": "nan", "creators-0-name": "Doe, Jane", "creators-1-name": "",  # a blank row
             "creators-2-name": "Roe, Richard", "creators-2-orcid": "0000-0000-0000-0000",
             "grants-0-id": "10.13039/501100000780::nope"}
    saved = submit(owner, dep_id, typed)
    assert saved.status_code == 303 and saved.headers["Location"].endswith(f"/deposit/{dep_id}")
    # The valid fields are in the draft (the refused ORCID alone is left out of its creator's row) ...
    m = api(owner, dep_id)["metadata"]
    assert m["title"] == "Kept as typed" and m["upload_type"] == "poster"
    assert m["creators"] == [{"name": "Doe, Jane"}, {"name": "Roe, Richard"}]
    assert m["locations"] == [{"place": "Here"}]
    assert "language" not in m and "grants" not in m
    # ... and the form shows the refused ones as typed, each error beside its field, on every later visit.
    for _ in range(2):
        page = owner.get(f"/deposit/{dep_id}")
        html = page.get_data(as_text=True)
        assert page.status_code == 200 and "kept as you typed them" in html
        # metadata.creators.1.orcid is the third row of the form (the blank second row was not sent).
        orcid = re.search(r'<input[^>]*id="creators-2-orcid"[^>]*>', html)
        assert orcid is not None and 'aria-invalid="true"' in orcid[0] and 'value="0000-0000-0000-0000"' in orcid[0]
        assert 'aria-describedby="creators-2-orcid-hint creators-2-orcid-error"' in orcid[0]
        assert re.search(r"<p class=\"field-error\" id=\"creators-2-orcid-error\">This ORCID iD does not exist", html)
        assert 'href="#creators-2-orcid">Creator 3: ORCID: This ORCID iD does not exist' in html
        for field in ("language", "locations-0-lat", "locations-0-lon", "grants-0-id"):
            assert f'id="{field}-error"' in html and f'href="#{field}"' in html, field
        assert 'value="Kept as typed"' in html and 'value="klingonese"' in html and 'value="north"' in html
        assert 'role="alert"' in html and "problems to correct" in html
    # Publishing is refused while fields are kept as typed: the review lists them, the final button is refused.
    review = owner.get(f"/deposit/{dep_id}/publish").get_data(as_text=True)
    assert f'href="/deposit/{dep_id}#language"' in review and 'value="publish"' not in review
    assert f'action="/deposit/{dep_id}/publish"' not in review
    refused = post(owner, f"/deposit/{dep_id}/publish", f"/deposit/{dep_id}")
    assert refused.status_code == 303 and api(owner, dep_id)["state"] == "unsubmitted"
    # Corrected and saved: the typed state is gone, the draft holds every field.
    fixed = typed | {"language": "eng", "locations-0-lat": "46", "locations-0-lon": "7",
                     "creators-2-orcid": ORCID, "grants-0-id": "10.13039/501100000780::283595"}
    assert submit(owner, dep_id, fixed).status_code == 303
    html = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert "Draft saved." in html and "kept as you typed" not in html and 'aria-invalid' not in html
    m = api(owner, dep_id)["metadata"]
    assert m["language"] == "eng" and m["creators"][1]["orcid"] == ORCID and m["locations"][0]["lat"] == 46


@pytest.mark.slow  # 0.4 s and more of work
def test_languages_and_licenses_by_name(owner):
    dep_id = start(owner)
    html = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    # The common licenses come first among the suggestions, in this order; then the others.
    listed = re.findall(r'<option value="([^"]+)">', html.split('id="licenses-list"')[1].split("</datalist>")[0])
    assert listed[:7] == ["cc-by", "cc-zero", "cc-by-sa", "MIT", "Apache-2.0", "GPL-3.0-or-later", "BSD-3-Clause"]
    assert len(listed) > 500 and len(set(listed)) == len(listed)
    # A language and a license typed by their names are stored as their codes, and shown by name again.
    saved = submit(owner, dep_id, {"title": "Named", "upload_type": "software", "language": "english",
                                   "license": "Creative Commons Attribution Share Alike 4.0 International"})
    assert saved.status_code == 303
    m = api(owner, dep_id)["metadata"]
    assert m["language"] == "eng" and m["license"] == "cc-by-sa"
    html = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert 'name="language" value="English"' in html and 'name="license" value="cc-by-sa"' in html
    # A code still works; an unknown name is refused beside its field, in the form's words.
    assert submit(owner, dep_id, {"title": "Named", "language": "deu", "license": "MIT"}).status_code == 303
    assert api(owner, dep_id)["metadata"]["language"] == "deu" and api(owner, dep_id)["metadata"]["license"] == "MIT"
    submit(owner, dep_id, {"title": "Named", "language": "Elvish", "license": "Free for all"})
    html = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert re.search(r'id="license-error">Not a license this repository knows: type part of its name', html)
    assert 'id="language-error"' in html and 'value="Elvish"' in html and 'value="Free for all"' in html
    assert "/api/licenses" not in html.split('id="license-error"')[1].split("</p>")[0]


@pytest.mark.slow  # 0.4 s and more of work
def test_the_resource_types_default_license_is_preselected(owner):
    dep_id = start(owner)
    assert 'name="license" value=""' in owner.get(f"/deposit/{dep_id}").get_data(as_text=True)  # no type yet
    submit(owner, dep_id, {"title": "Data", "upload_type": "dataset"})
    assert 'name="license" value="cc-zero"' in owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    submit(owner, dep_id, {"title": "Paper", "upload_type": "poster"})
    assert 'name="license" value="cc-by"' in owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    submit(owner, dep_id, {"title": "Paper", "upload_type": "poster", "access_right": "closed"})
    assert 'name="license" value=""' in owner.get(f"/deposit/{dep_id}").get_data(as_text=True)  # no license applies


def test_a_change_through_the_api_replaces_the_typed_form(owner):
    dep_id = start(owner)
    assert submit(owner, dep_id, {"title": "Typed", "language": "klingonese"}).status_code == 303
    assert 'value="klingonese"' in owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    html = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    changed = owner.put(f"/api/deposit/depositions/{dep_id}", json={"metadata": {"title": "From the API"}},
                        headers={"X-CSRFToken": csrf_from(html), **referer(f"/deposit/{dep_id}")})
    assert changed.status_code == 200
    html = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert 'value="From the API"' in html and "klingon" not in html and "kept as you typed" not in html
    # The API's answers are its own: an invalid field refuses the whole PUT, as before.
    refused = owner.put(f"/api/deposit/depositions/{dep_id}", json={"metadata": {"title": "Changed", "language": "klingon"}},
                        headers={"X-CSRFToken": csrf_from(html), **referer(f"/deposit/{dep_id}")})
    assert refused.status_code == 400 and [e["field"] for e in refused.get_json()["errors"]] == ["metadata.language"]
    assert api(owner, dep_id)["metadata"]["title"] == "From the API"


@pytest.mark.slow
def test_publish_edit_discard_and_new_version(owner, app):
    dep_id = start(owner)
    # The review step lists what is missing, the files too, each linked to its field; nothing is published.
    asked = submit(owner, dep_id, {"title": "Ice"}, "publish")
    assert asked.status_code == 303 and asked.headers["Location"].endswith(f"/deposit/{dep_id}/publish")
    html = owner.get(f"/deposit/{dep_id}/publish").get_data(as_text=True)
    assert "to correct before publishing" in html and f'action="/deposit/{dep_id}/publish"' not in html
    for field in ("upload_type", "creators", "description", "files"):
        assert f'href="/deposit/{dep_id}#{field}"' in html, field
    assert "Minimum one file" in html
    assert api(owner, dep_id)["metadata"]["title"] == "Ice"  # the save before the review was kept
    # Publishing anyway (a form from before) is refused by the action, each reason beside its field.
    refused = post(owner, f"/deposit/{dep_id}/publish", f"/deposit/{dep_id}")
    html = refused.get_data(as_text=True)
    assert refused.status_code == 400 and "publishing was refused" in html
    for field in ("upload_type", "creators", "description"):
        assert f'href="#{field}"' in html and f'id="{field}-error"' in html, field
    assert 'href="#files">Files: Minimum one file' in html and api(owner, dep_id)["state"] == "unsubmitted"

    add_file(owner, app, dep_id)
    ready = {"upload_type": "dataset", "title": "Ice cores", "creators-0-name": "Doe, Jane",
             "description": "Cores from 2023.", "access_right": "open"}
    assert submit(owner, dep_id, ready, "publish").status_code == 303
    review = owner.get(f"/deposit/{dep_id}/publish").get_data(as_text=True)
    assert re.search(rf"The DOI <code>10\.[0-9]+/[a-z]+\.{dep_id}</code> is registered", review), review
    assert "<code>data.csv</code>" in review
    assert "is frozen" in review and "public, under the license Creative Commons Zero" in review
    assert "No community is asked" in review and api(owner, dep_id)["state"] == "unsubmitted"  # shown, not done
    review_and_publish(owner, dep_id, ready)
    shown = owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert "Published." in shown and f'href="/records/{dep_id}"' in shown
    assert "disabled" in shown and f'action="/deposit/{dep_id}/edit"' in shown
    dep = api(owner, dep_id)
    assert dep["state"] == "done" and dep["metadata"]["license"] == "cc-zero"
    assert owner.get(f"/api/records/{dep_id}").status_code == 200
    # A published deposition's form refuses a save until it is unlocked.
    locked = submit(owner, dep_id, ready | {"title": "Changed"})
    assert locked.status_code == 403 and "actions/edit" in locked.get_data(as_text=True)

    assert post(owner, f"/deposit/{dep_id}/edit", f"/deposit/{dep_id}").status_code == 303
    assert api(owner, dep_id)["state"] == "inprogress"
    assert submit(owner, dep_id, ready | {"title": "Ice cores, corrected"}).status_code == 303
    assert api(owner, dep_id)["title"] == "Ice cores, corrected"
    assert post(owner, f"/deposit/{dep_id}/discard", f"/deposit/{dep_id}").status_code == 303
    dep = api(owner, dep_id)
    assert dep["state"] == "done" and dep["title"] == "Ice cores"
    # Discarding twice is refused with the action's message, on the form.
    again = post(owner, f"/deposit/{dep_id}/discard", f"/deposit/{dep_id}")
    assert again.status_code == 303 and "nothing to discard" in owner.get(f"/deposit/{dep_id}").get_data(as_text=True)

    post(owner, f"/deposit/{dep_id}/edit", f"/deposit/{dep_id}")
    review = review_and_publish(owner, dep_id, ready | {"title": "Ice cores v1"})
    assert "Publish changes" in review and "The files stay as they were published" in review and "stays" in review
    assert owner.get(f"/api/records/{dep_id}").get_json()["metadata"]["title"] == "Ice cores v1"

    made = post(owner, f"/deposit/{dep_id}/newversion", f"/deposit/{dep_id}")
    assert made.status_code == 303
    draft = int(urlsplit(made.headers["Location"]).path.rsplit("/", 1)[1])
    assert draft != dep_id and api(owner, draft)["state"] == "unsubmitted"
    html = owner.get(f"/deposit/{draft}").get_data(as_text=True)
    assert 'value="Ice cores v1"' in html and "A new version" in html
    assert api(owner, draft)["metadata"]["prereserve_doi"]["doi"] in html  # its DOI, reserved
    # A second press finds the same draft.
    assert post(owner, f"/deposit/{dep_id}/newversion", f"/deposit/{dep_id}").headers["Location"].endswith(
        f"/deposit/{draft}")
    # The new version passes through the review step too, with its own DOI and its changed file.
    add_file(owner, app, draft, "more.csv", b"c\n3\n")
    review = review_and_publish(owner, draft, ready | {"title": "Ice cores v2"})
    assert "Publish this new version?" in review and "Publish the new version" in review
    assert re.search(rf"The DOI <code>10\.[0-9]+/[a-z]+\.{draft}</code> is registered", review)
    assert "The earlier versions" in review
    assert api(owner, draft)["state"] == "done"


def test_delete_a_draft_after_confirming(owner, app):
    dep_id = start(owner)
    add_file(owner, app, dep_id)
    asked = owner.get(f"/deposit/{dep_id}/delete")
    html = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "Delete the draft" in html and "1 file" in html
    assert api(owner, dep_id)["id"] == dep_id  # asking deleted nothing
    deleted = post(owner, f"/deposit/{dep_id}/delete", f"/deposit/{dep_id}/delete")
    assert deleted.status_code == 303 and urlsplit(deleted.headers["Location"]).path == "/deposit"
    gone = owner.get(f"/deposit/{dep_id}")
    assert gone.status_code == 404 and gone.mimetype == "text/html"


def test_a_published_deposition_cannot_be_deleted(owner, app):
    dep_id = start(owner)
    add_file(owner, app, dep_id)
    review_and_publish(owner, dep_id, {"upload_type": "software", "title": "Tool", "creators-0-name": "Doe, Jane",
                                       "description": "A tool."})
    # The page offers the version's deletion with a reason (tests/pages/test_corrections.py), not the draft's.
    assert "Delete this version" in owner.get(f"/deposit/{dep_id}/delete").get_data(as_text=True)
    refused = post(owner, f"/deposit/{dep_id}/delete", f"/deposit/{dep_id}")
    assert refused.status_code == 303
    assert "cannot be deleted" in owner.get(f"/deposit/{dep_id}").get_data(as_text=True)
    assert api(owner, dep_id)["state"] == "done"


def test_another_users_deposition_is_not_found(owner, app):
    dep_id = start(owner)
    submit(owner, dep_id, {"title": "Mine"})
    other = browser(app, OTHER)
    for path in (f"/deposit/{dep_id}", f"/deposit/{dep_id}/delete", "/deposit/999999"):
        page = other.get(path)
        assert page.status_code == 404 and page.mimetype == "text/html" and "Mine" not in page.get_data(as_text=True)
    token = csrf_from(other.get("/deposit/new").get_data())
    for path, data in ((f"/deposit/{dep_id}", {"title": "Theirs", "action": "save"}),
                       (f"/deposit/{dep_id}/delete", {}), (f"/deposit/{dep_id}/newversion", {}),
                       (f"/deposit/{dep_id}/edit", {})):
        answer = other.post(path, data={"csrf_token": token, **data}, headers=referer(path))
        assert answer.status_code == 404 and answer.mimetype == "text/html", path
    assert api(owner, dep_id)["title"] == "Mine"


def test_forged_forms_are_refused(owner):
    dep_id = start(owner)
    forged = owner.post(f"/deposit/{dep_id}", data={"title": "Forged", "action": "save"},
                        headers=referer(f"/deposit/{dep_id}"))
    assert forged.status_code == 400 and forged.mimetype == "text/html"
    assert "Reload the page" in forged.get_data(as_text=True)
    created = owner.post("/deposit/new", data={}, headers=referer("/deposit/new"))
    assert created.status_code == 400 and created.mimetype == "text/html"
    token = csrf_from(owner.get(f"/deposit/{dep_id}").get_data())
    foreign = owner.post(f"/deposit/{dep_id}/delete", data={"csrf_token": token},
                         headers={"Referer": "https://evil.example/"})
    assert foreign.status_code == 400
    assert [d["id"] for d in owner.get("/api/deposit/depositions").get_json()] == [dep_id]
    assert "title" not in api(owner, dep_id)["metadata"]


def test_an_expired_session_goes_to_sign_in(owner, app):
    dep_id = start(owner)
    token = csrf_from(owner.get(f"/deposit/{dep_id}").get_data())
    with app.extensions["repository"].db.write() as conn:
        end_sessions(conn, user_id(app, OWNER))
    page = owner.get(f"/deposit/{dep_id}")
    assert page.status_code in (302, 303)
    assert urlsplit(page.headers["Location"]).path == "/login/" and f"next=/deposit/{dep_id}" in page.headers[
        "Location"]
    # A form sent from before (the session's CSRF secret is gone too): to sign in, coming back to the form; nothing
    # is changed.
    late = owner.post(f"/deposit/{dep_id}", data={"csrf_token": token, "title": "Late"},
                      headers=referer(f"/deposit/{dep_id}"))
    assert late.status_code == 303
    assert late.headers["Location"] == f"/login/?next=/deposit/{dep_id}"
    assert "Your session has ended" in owner.get(late.headers["Location"]).get_data(as_text=True)
    # An access token does not open the pages.
    assert owner.get(f"/deposit/{dep_id}", headers=bearer(app, OWNER)).status_code == 401
