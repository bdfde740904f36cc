"""My uploads (`/deposit`): the signed-in user's depositions with their state, links to the form and the record,
the deposition list's search and paging; an empty state that offers a new upload; sign-in first for a guest."""

from __future__ import annotations

import io
import re

import pytest
from helpers.factories import metadata
from helpers.http import https_client
from helpers.pages import session_headers, signed_in

PASSWORD = "correct horse battery"
API = "/api/deposit/depositions"


def draft(client, title: str, **overrides) -> int:  # type: ignore[no-untyped-def]
    created = client.post(API, json={"metadata": metadata(title=title, **overrides)}, headers=session_headers(client))
    assert created.status_code == 201, created.json
    return int(created.json["id"])


def publish(client, dep_id: int) -> None:  # type: ignore[no-untyped-def]
    sent = client.post(f"{API}/{dep_id}/files", data={"file": (io.BytesIO(b"a,b\n"), "data.csv")},
                       headers=session_headers(client), content_type="multipart/form-data")
    assert sent.status_code == 201, sent.json
    assert client.post(f"{API}/{dep_id}/actions/publish", headers=session_headers(client)).status_code == 202


def listed(html: str) -> list[str]:
    """The titles of the uploads listed, in order."""
    return re.findall(r'<h2 class="upload-title"><a href="/deposit/\d+">([^<]*)</a>', html)


def page(client, query: str = "", status: int = 200) -> str:  # type: ignore[no-untyped-def]
    answer = client.get("/deposit" + query)
    assert answer.status_code == status, answer.status_code
    assert answer.mimetype == "text/html"
    return answer.get_data(as_text=True)


@pytest.fixture
def owner(client, app):  # type: ignore[no-untyped-def]
    signed_in(client, app, "owner@example.org", PASSWORD)
    return client


def test_a_guest_is_sent_to_sign_in(client):
    answer = client.get("/deposit?q=x")
    assert answer.status_code == 302
    assert answer.headers["Location"].startswith("/login/?next=") and "deposit" in answer.headers["Location"]


def test_the_empty_state_offers_a_new_upload(owner):
    html = page(owner)
    assert "You have no uploads yet" in html
    assert re.search(r'<form method="post" action="/deposit/new"><input type="hidden" name="csrf_token"', html)
    assert "Search your uploads" not in html


@pytest.mark.slow
def test_states_links_and_only_ones_own(owner, app):
    first = draft(owner, "Alpine lake temperatures")
    published = draft(owner, "Glacier mass balance")
    publish(owner, published)
    edited = draft(owner, "Permafrost cores")
    publish(owner, edited)
    assert owner.post(f"{API}/{edited}/actions/edit", headers=session_headers(owner)).status_code == 201

    other = https_client(app)
    signed_in(other, app, "other@example.org", PASSWORD)
    draft(other, "Someone else's upload")

    html = page(owner)
    assert listed(html) == ["Permafrost cores", "Glacier mass balance", "Alpine lake temperatures"]
    assert "Someone else" not in html
    cards = dict(zip(listed(html), html.split('<h2 class="upload-title">')[1:], strict=True))
    assert "Draft" in cards["Alpine lake temperatures"] and "Continue editing" in cards["Alpine lake temperatures"]
    assert f'href="/deposit/{first}"' in cards["Alpine lake temperatures"]
    assert "/records/" not in cards["Alpine lake temperatures"]
    assert "Published</span>" in cards["Glacier mass balance"]
    assert f'href="/records/{published}"' in cards["Glacier mass balance"]
    assert "Published, being edited" in cards["Permafrost cores"] and f'href="/records/{edited}"' in cards["Permafrost cores"]
    assert "10.5072/" in cards["Glacier mass balance"] or "doi.org/" in cards["Glacier mass balance"]

    assert listed(page(owner, "?status=draft")) == ["Permafrost cores", "Alpine lake temperatures"]
    assert listed(page(owner, "?status=published")) == ["Permafrost cores", "Glacier mass balance"]

    made = owner.post(f"{API}/{published}/actions/newversion", headers=session_headers(owner))
    assert made.status_code == 201
    new_id = int(made.json["links"]["latest_draft"].rsplit("/", 1)[1])
    html = page(owner)
    assert listed(html)[:2] == ["Glacier mass balance", "Permafrost cores"]
    card = html.split(f'<a href="/deposit/{new_id}">', 1)[1].split("</li>")[0]
    assert "Draft of a new version" in card and f'href="/records/{published}"' in card
    assert "View the published version" in card


def test_search_and_paging(owner):
    for n in range(5):
        draft(owner, f"Survey {n}", keywords=["ice"] if n % 2 else ["rock"])
    found = page(owner, "?q=keywords:ice")
    assert listed(found) == ["Survey 3", "Survey 1"]
    assert 'value="keywords:ice"' in found  # the search box keeps the query
    assert "No upload matches “nothing-like-this”" in page(owner, "?q=nothing-like-this")

    first = page(owner, "?size=2")
    assert listed(first) == ["Survey 4", "Survey 3"] and 'rel="prev"' not in first
    nexts = re.findall(r'href="([^"]+)" rel="next"', first)
    assert nexts == ["/deposit?size=2&amp;page=2"]
    second = page(owner, "/deposit?size=2&page=2".removeprefix("/deposit"))
    assert listed(second) == ["Survey 2", "Survey 1"] and 'rel="prev"' in second and 'rel="next"' in second
    assert listed(page(owner, "?size=2&page=3")) == ["Survey 0"]
    assert listed(page(owner, "?q=keywords:rock&size=1&page=2")) == ["Survey 2"]


def test_bad_input_shows_the_message_on_the_page(owner):
    draft(owner, "Anything")
    bad_query = page(owner, "?q=title:(unclosed", status=400)
    assert 'role="alert"' in bad_query and "Search your uploads" in bad_query
    assert 'value="title:(unclosed"' in bad_query
    assert "{" not in bad_query.split('role="alert"')[1].split("</div>")[0]  # a sentence, not a JSON body
    assert "Must be draft or published" in page(owner, "?status=lost", status=400)
    assert "page" in page(owner, "?page=0", status=400)
