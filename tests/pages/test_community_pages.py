"""The community pages: the list with its search, a community's page (its `links.html`) with its records and the
search page's facets, creating and editing one (the API's validation, errors beside the fields), the owner's
curation page accepting and rejecting inclusion requests; unknown ids, bad queries, forged forms and ended
sessions answer pages, never JSON or a 500."""

from __future__ import annotations

import re

import pytest
from helpers.factories import published
from helpers.http import https_client
from helpers.pages import csrf_from, post_form, referer, sign_in, sign_up_and_confirm

from repository.accounts import users

PASSWORD = "correct horse battery"


def text(response) -> str:  # type: ignore[no-untyped-def]
    assert response.mimetype == "text/html", response.mimetype
    return response.get_data(as_text=True)


def titles(page: str) -> list[str]:
    return re.findall(r'<h3 class="result-title"><a href="/records/\d+">([^<]*)</a>', page)


def signed_in(app, email: str):  # type: ignore[no-untyped-def]
    client = https_client(app)
    sign_up_and_confirm(client, app, email, PASSWORD)
    assert sign_in(client, email, PASSWORD).status_code in (302, 303)
    return client


def create(client, **fields: str):  # type: ignore[no-untyped-def]
    return post_form(client, "/communities/new", fields)


@pytest.fixture
def curator(app):  # type: ignore[no-untyped-def]
    """A signed-in user owning the community `ocean` (made through the form)."""
    client = signed_in(app, "curator@example.org")
    made = create(client, identifier="ocean", title="Ocean observations", description="<p>Seas <b>only</b></p>",
                  curation_policy="<p>Peer-reviewed data</p>")
    assert made.status_code == 303 and made.headers["Location"] == "/communities/ocean/"
    return client


def test_creating_a_community_shows_each_fields_error_beside_it(app, curator):
    bad = create(curator, identifier="Not Valid!", title="  ", description="")
    assert bad.status_code == 400
    page = text(bad)
    assert re.search(r'id="identifier"[^>]*aria-describedby="identifier-hint identifier-error"[^>]*aria-invalid="true"',
                     page)
    assert '<p class="field-error" id="identifier-error">Use 1 to 100 lower-case letters' in page
    assert '<p class="field-error" id="title-error">The title cannot be empty.</p>' in page
    assert 'value="Not Valid!"' in page  # what was typed stays
    taken = text(create(curator, identifier="ocean", title="Again"))
    assert "The community identifier &#39;ocean&#39; is already taken." in taken
    assert https_client(app).get("/api/communities/").json["hits"]["total"] == 1


def test_the_community_page_is_its_links_html(client, curator):
    api = client.get("/api/communities/ocean").json
    assert api["links"]["html"] == "https://localhost/communities/ocean/"
    page = text(client.get("/communities/ocean/"))
    assert "<h1>Ocean observations</h1>" in page and "<p>Seas <b>only</b></p>" in page
    assert "Peer-reviewed data" in page and "No records yet" in page and "A record joins it" in page
    assert "0 results" in text(client.get("/communities/ocean/?q=waves"))  # a search finding nothing says so
    assert "Curate requests" not in page  # a guest sees no owner's actions
    owner_view = text(curator.get("/communities/ocean/"))
    assert 'href="/communities/ocean/curate"' in owner_view and 'href="/communities/ocean/edit"' in owner_view
    assert "<h1>Ocean observations</h1>" in text(client.get("/communities/ocean"))  # without its slash too


def test_descriptions_are_cleaned_of_scripts(client, curator):
    made = create(curator, identifier="evil", title="Evil", description='<p onclick="x()">Hi<script>alert(1)</script></p>')
    assert made.status_code == 303
    page = text(client.get("/communities/evil/"))
    assert "alert(1)" not in page and "onclick" not in page and "<p>Hi</p>" in page


def test_the_list_searches_sorts_and_pages(client, curator):
    for n in range(3):
        assert create(curator, identifier=f"group-{n}", title=f"Group {n}", description="about rivers").status_code == 303
    page = text(client.get("/communities/"))
    assert "4 communities" in page and 'href="/communities/ocean/">Ocean observations</a>' in page
    found = text(client.get("/communities/?q=rivers&sort=title"))
    assert re.findall(r'<h3><a href="/communities/([^/]+)/">', found) == ["group-0", "group-1", "group-2"]
    paged = text(client.get("/communities/?q=rivers&sort=title&size=2"))
    assert 'href="/communities/?q=rivers&amp;sort=title&amp;size=2&amp;page=2"' in paged
    bad = client.get("/communities/?sort=nonsense")
    assert bad.status_code == 400 and "Unknown sort &#39;nonsense&#39;" in text(bad)
    assert client.get("/communities/?page=0").status_code == 400


def test_unknown_community_pages_are_html_404s(client, curator):
    for path in ("/communities/nowhere/", "/communities/nowhere/edit", "/communities/nowhere/curate"):
        answer = (curator if path.endswith(("edit", "curate")) else client).get(path)
        assert answer.status_code == 404, path
        assert "Not found" in text(answer)


def test_a_bad_query_on_a_community_page_shows_the_message(client, curator):
    answer = client.get("/communities/ocean/?q=ocean&sort=nonsense")
    assert answer.status_code == 400 and "The search could not run" in text(answer)
    # A `q` the parser refuses is searched as plain words, as on the search page (docs/search.md).
    fallback = client.get("/communities/ocean/?q=title:(unclosed")
    assert fallback.status_code == 200 and "could not be read as query syntax" in text(fallback)


def test_only_the_owner_edits_and_errors_show_beside_fields(app, client, curator):
    other = signed_in(app, "other@example.org")
    assert other.get("/communities/ocean/edit").status_code == 403
    token = csrf_from(other.get("/communities/new").get_data())
    refused = other.post("/communities/ocean/edit", data={"csrf_token": token, "title": "Mine now"},
                         headers=referer("/communities/ocean/edit"))
    assert refused.status_code == 403 and "Not allowed" in text(refused)
    assert client.get("/communities/new").status_code == 302  # a guest signs in first
    form = text(curator.get("/communities/ocean/edit"))
    assert 'value="Ocean observations"' in form and "readonly" in form
    empty = post_form(curator, "/communities/ocean/edit", {"title": "", "description": "", "curation_policy": ""})
    assert empty.status_code == 400 and 'id="title-error"' in text(empty)
    saved = post_form(curator, "/communities/ocean/edit",
                      {"title": "Ocean data", "description": "<p>New</p>", "curation_policy": ""})
    assert saved.status_code == 303
    assert client.get("/api/communities/ocean").json["title"] == "Ocean data"


@pytest.mark.slow
def test_the_owner_accepts_and_rejects_requests_on_the_curation_page(app, client, curator, make_token):
    author = {"Authorization": f"Bearer {make_token('author@example.org')}"}
    api = https_client(app)
    wanted = published(api, author, title="Wave heights", communities=[{"identifier": "ocean"}], keywords=["waves"])
    unwanted = published(api, author, title="Cat pictures", communities=[{"identifier": "ocean"}])
    assert titles(text(client.get("/communities/ocean/"))) == []  # pending requests are not members yet
    page = text(curator.get("/communities/ocean/curate"))
    assert "Wave heights" in page and "Cat pictures" in page
    forms = dict(re.findall(r'<h3 id="request-(\d+)"><a href="/records/(\d+)">', page))
    by_recid = {int(recid): int(rid) for rid, recid in forms.items()}
    accept = f"/communities/ocean/curate/{by_recid[wanted['record_id']]}/accept"
    reject = f"/communities/ocean/curate/{by_recid[unwanted['record_id']]}/reject"
    assert f'action="{accept}"' in page

    done = post_form(curator, accept, {}, page="/communities/ocean/curate")
    assert done.status_code == 303 and done.headers["Location"] == "/communities/ocean/curate"
    assert "accepted" in text(curator.get("/communities/ocean/curate?status=accepted"))
    assert post_form(curator, reject, {}, page="/communities/ocean/curate").status_code == 303
    community = text(client.get("/communities/ocean/"))
    assert titles(community) == ["Wave heights"]
    assert ">Keyword</h3>" in community and ">Community</h3>" not in community  # the path names the community
    filtered = text(client.get("/communities/ocean/?keywords=waves"))
    assert titles(filtered) == ["Wave heights"] and 'href="/communities/ocean/">' in filtered
    assert "No pending request." in text(curator.get("/communities/ocean/curate"))
    assert curator.get("/communities/ocean/curate?status=bogus").status_code == 400


def test_forged_forms_strangers_and_ended_sessions_get_pages(app, client, curator):
    forged = curator.post("/communities/new", data={"identifier": "forged", "title": "Forged"},
                          headers=referer("/communities/new"))
    assert forged.status_code == 400 and forged.mimetype == "text/html"
    assert client.get("/api/communities/forged").status_code == 404
    stranger = signed_in(app, "stranger@example.org")
    assert stranger.get("/communities/ocean/curate").status_code == 403
    assert post_form(stranger, "/communities/ocean/curate/1/accept", {}, page="/communities/new").status_code == 403
    guest = client.get("/communities/ocean/curate")
    assert guest.status_code == 302 and guest.headers["Location"].startswith("/login/?next=")
    with app.extensions["repository"].db.write() as conn:
        users.end_sessions(conn, 1)  # the curator's sessions end (signed out everywhere, or expired)
    ended = curator.get("/communities/ocean/edit")
    assert ended.status_code == 302 and ended.headers["Location"] == "/login/?next=/communities/ocean/edit"


def test_counts_titles_and_the_empty_state(app, client, curator, make_token):
    empty = text(client.get("/communities/ocean/"))
    assert "No records yet" in empty and "Communities</strong> field" in empty and "Try fewer words" not in empty
    assert "See the requests" in text(curator.get("/communities/ocean/"))  # the owner is led to the curation page
    assert "0 records" in text(client.get("/communities/"))
    author = {"Authorization": f"Bearer {make_token('author@example.org')}"}
    record = published(https_client(app), author, title="Tides", communities=[{"identifier": "ocean"}])
    page = text(curator.get("/communities/ocean/curate"))
    request_id = re.search(r'<h3 id="request-(\d+)">', page).group(1)  # type: ignore[union-attr]
    assert post_form(curator, f"/communities/ocean/curate/{request_id}/accept", {},
                     page="/communities/ocean/curate").status_code == 303  # fmt: skip
    listing = text(client.get("/communities/"))
    assert "1 record<" in listing
    community = text(client.get("/communities/ocean/"))
    assert "No records yet" not in community and titles(community) == ["Tides"]
    shown = text(client.get(f"/records/{record['record_id']}"))
    assert '<a href="/communities/ocean/">Ocean observations</a>' in shown  # the title, not the identifier
