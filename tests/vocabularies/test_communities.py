"""Communities over HTTP: creation by an authenticated user, editing by the owner only, search and paging."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from repository.records.lookups import DatabaseLookups
from repository.storage.tables.accounts import users


@pytest.fixture
def create(client, auth):
    """POST a community as the `auth` user; returns the response."""

    def post(identifier: str = "open-science", headers: dict | None = None, **fields):  # type: ignore[no-untyped-def]
        body = {"identifier": identifier, "title": f"Community {identifier}", **fields}
        return client.post("/api/communities", json=body, headers=auth if headers is None else headers)

    return post


def test_a_guest_cannot_create_a_community(client):
    response = client.post("/api/communities", json={"identifier": "x", "title": "X"})
    assert response.status_code == 401 and response.json["status"] == 401


def test_an_authenticated_user_creates_and_owns_a_community(app, client, create):
    response = create(description="<p>Open <b>science</b></p><script>alert(1)</script>", curation_policy="Anything")
    assert response.status_code == 201
    body = response.json
    with app.extensions["repository"].db.read() as conn:
        user_id = conn.execute(select(users.c.id).where(users.c.email == "owner@example.org")).scalar_one()
    assert body["id"] == "open-science" and body["title"] == "Community open-science" and body["id_user"] == user_id
    assert body["description"] == "<p>Open <b>science</b></p>" and body["curation_policy"] == "Anything"
    assert body["links"] == {"self": "https://localhost/api/communities/open-science",
                             "html": "https://localhost/communities/open-science/"}
    assert body["created"] == body["updated"] and body["created"].endswith("+00:00")
    fetched = client.get("/api/communities/open-science")
    assert fetched.json == body and fetched.headers["ETag"] and fetched.headers["Last-Modified"]
    again = client.get("/api/communities/open-science", headers={"If-None-Match": fetched.headers["ETag"]})
    assert again.status_code == 304


def test_a_token_without_write_scope_is_403(client, make_token):
    token = make_token("reader@example.org", scopes=("deposit:actions",))
    response = client.post("/api/communities", json={"identifier": "x", "title": "X"},
                           headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    assert response.status_code == 403


def test_a_taken_identifier_is_refused_naming_it(create):
    assert create("dup").status_code == 201
    response = create("dup", title="Another")
    assert response.status_code == 400
    assert response.json["errors"] == [{"field": "identifier", "message": "The community identifier 'dup' is already taken."}]


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"identifier": "Bad Slug", "title": "T"}, ["identifier"]),
        ({"identifier": "a" * 101, "title": "T"}, ["identifier"]),
        ({"identifier": "", "title": "T"}, ["identifier"]),
        ({"identifier": "ok_1-2"}, ["title"]),
        ({"title": "T"}, ["identifier"]),
        ({"identifier": "ok", "title": "  "}, ["title"]),
        ({"identifier": "ok", "title": "T", "owner": 3}, ["owner"]),
        ({"identifier": 5, "title": ["T"]}, ["identifier", "title"]),
    ],
)  # fmt: skip
def test_bad_fields_are_400_naming_each(client, auth, body, fields):
    response = client.post("/api/communities", json=body, headers=auth)
    assert response.status_code == 400
    assert sorted(error["field"] for error in response.json["errors"]) == fields


def test_a_body_that_is_not_json_is_refused(client, auth):
    assert client.post("/api/communities", data="x", headers=auth).status_code == 415
    assert client.post("/api/communities", json=["x"], headers=auth).status_code == 400


def test_the_owner_edits_others_cannot(client, create, make_token):
    assert create("lab").status_code == 201
    owner = {"Authorization": "Bearer " + make_token("owner2@example.org")}
    other = client.put("/api/communities/lab", json={"title": "Mine now"}, headers=owner)
    assert other.status_code == 403 and other.json["status"] == 403
    assert client.put("/api/communities/lab", json={"title": "Mine now"}).status_code == 401


def test_editing_changes_only_the_given_fields(client, create, auth):
    created = create("lab", description="<p>Lab</p>").json
    response = client.put("/api/communities/lab", json={"title": "The Lab", "curation_policy": "<i>Strict</i>"},
                          headers=auth)  # fmt: skip
    assert response.status_code == 200
    body = response.json
    assert body["title"] == "The Lab" and body["curation_policy"] == "<i>Strict</i>"
    assert body["description"] == "<p>Lab</p>" and body["created"] == created["created"]
    assert client.get("/api/communities/lab").json["title"] == "The Lab"
    renamed = client.put("/api/communities/lab", json={"identifier": "other"}, headers=auth)
    assert renamed.status_code == 400 and renamed.json["errors"][0]["field"] == "identifier"
    assert client.put("/api/communities/nope", json={"title": "X"}, headers=auth).status_code == 404


def test_unknown_community_is_404(client):
    response = client.get("/api/communities/nope")
    assert response.status_code == 404 and response.json["status"] == 404


def test_search_sort_and_paging(client, create):
    for identifier, title in (("beta", "Beta physics"), ("alpha", "Alpha biology"), ("gamma", "Gamma physics")):
        assert create(identifier, title=title).status_code == 201
    physics = client.get("/api/communities/?q=PHYSICS&sort=title").json
    assert [hit["id"] for hit in physics["hits"]["hits"]] == ["beta", "gamma"] and physics["hits"]["total"] == 2
    reverse = client.get("/api/communities/?sort=-title").json["hits"]["hits"]
    assert [hit["id"] for hit in reverse] == ["gamma", "beta", "alpha"]
    assert client.get("/api/communities/?q=alp").json["hits"]["hits"][0]["id"] == "alpha"
    paged = client.get("/api/communities/?sort=title&size=2&page=2").json
    assert [hit["id"] for hit in paged["hits"]["hits"]] == ["gamma"]
    assert paged["links"]["prev"] == "https://localhost/api/communities/?sort=title&page=1&size=2"
    assert "next" not in paged["links"]
    default = client.get("/api/communities/").json
    assert default["links"]["self"] == "https://localhost/api/communities/?page=1&size=20"
    assert default["hits"]["total"] == 3


@pytest.mark.parametrize(("query", "field"), [("sort=popular", "sort"), ("page=0", "page"), ("size=5000", "size")])
def test_bad_search_arguments_are_400(client, query, field):
    response = client.get(f"/api/communities/?{query}")
    assert response.status_code == 400 and response.json["errors"][0]["field"] == field


def test_lookups_know_existing_communities(app, create):
    create("known")
    with app.extensions["repository"].db.read() as conn:
        lookups = DatabaseLookups(conn)
        assert lookups.community_exists("known") and not lookups.community_exists("unknown")
