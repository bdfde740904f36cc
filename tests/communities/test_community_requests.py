"""Inclusion requests: made on publish, decided by the community owner, applying to every version."""

import pytest
from helpers.factories import published

API = "/api/deposit/depositions"


def make_community(client, auth, identifier: str) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/api/communities", json={"identifier": identifier, "title": identifier.title()},
                           headers=auth)
    assert response.status_code == 201, response.json


@pytest.mark.slow  # 0.4 s and more of work
def test_request_accept_and_membership(client, make_token):
    curator = {"Authorization": f"Bearer {make_token('curator@example.org')}"}
    author = {"Authorization": f"Bearer {make_token('author@example.org')}"}
    make_community(client, curator, "ecology")
    make_community(client, author, "mine")
    dep = published(client, author, communities=[{"identifier": "ecology"}, {"identifier": "mine"}])
    record = client.get(f"/api/records/{dep['id']}").json
    # The author's own community accepts at once; the other waits for its curator.
    assert record["metadata"]["communities"] == [{"id": "mine"}]
    assert dep["metadata"]["communities"] == [{"identifier": "ecology"}, {"identifier": "mine"}]
    assert client.get("/api/communities/ecology/requests/", headers=author).status_code == 403
    pending = client.get("/api/communities/ecology/requests/", headers=curator).json
    assert [(r["record_id"], r["status"]) for r in pending] == [(dep["id"], "pending")]
    assert client.get("/api/records/?communities=ecology").json["hits"]["total"] == 0
    accepted = client.post(pending[0]["links"]["accept"].replace("https://localhost", ""), headers=curator)
    assert accepted.status_code == 200 and accepted.json["status"] == "accepted"
    assert client.get("/api/communities/ecology/requests/", headers=curator).json == []
    assert client.get(f"/api/records/{dep['id']}").json["metadata"]["communities"] == [
        {"id": "ecology"}, {"id": "mine"},
    ]
    assert client.get("/api/records/?communities=ecology").json["hits"]["total"] == 1
    # A new version belongs to the community too.
    draft = client.post(f"{API}/{dep['id']}/actions/newversion", headers=author).json["links"]["latest_draft"]
    draft_id = int(draft.rsplit("/", 1)[1])
    files = client.get(f"{API}/{draft_id}/files", headers=author).json
    client.delete(f"{API}/{draft_id}/files/{files[0]['id']}", headers=author)
    from helpers.factories import upload

    upload(client, author, {"id": draft_id}, content=b"new content")
    client.post(f"{API}/{draft_id}/actions/publish", headers=author)
    assert client.get(f"/api/records/{draft_id}").json["metadata"]["communities"] == [
        {"id": "ecology"}, {"id": "mine"},
    ]


@pytest.mark.slow  # 0.4 s and more of work
def test_reject(client, make_token):
    curator = {"Authorization": f"Bearer {make_token('curator@example.org')}"}
    author = {"Authorization": f"Bearer {make_token('author@example.org')}"}
    make_community(client, curator, "physics")
    dep = published(client, author, communities=[{"identifier": "physics"}])
    request_id = client.get("/api/communities/physics/requests/", headers=curator).json[0]["id"]
    url = f"/api/communities/physics/requests/{request_id}/reject"
    assert client.post(url, headers=author).status_code == 403
    rejected = client.post(url, headers=curator)
    assert rejected.status_code == 200 and rejected.json["status"] == "rejected"
    assert "communities" not in client.get(f"/api/records/{dep['id']}").json["metadata"]
    listed = client.get("/api/communities/physics/requests/?status=rejected", headers=curator).json
    assert [r["id"] for r in listed] == [request_id]
    assert client.get("/api/communities/physics/requests/?status=maybe", headers=curator).status_code == 400
    assert client.post("/api/communities/physics/requests/999/accept", headers=curator).status_code == 404
    assert client.get("/api/communities/nothing/requests/", headers=curator).status_code == 404


def test_unknown_community_is_a_validation_error(client, auth):
    response = client.post(API, json={"metadata": {"communities": [{"identifier": "nowhere"}]}}, headers=auth)
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "metadata.communities.0.identifier"


@pytest.mark.slow  # 0.4 s and more of work
def test_deciding_needs_the_actions_scope(client, make_token):
    """A token with no scopes only reads (the documented read-only token): it lists the requests but neither
    accepts nor rejects them (403 naming the scope); `deposit:write` alone does not decide either."""
    curator = {"Authorization": f"Bearer {make_token('curator@example.org')}"}
    reader = {"Authorization": f"Bearer {make_token('curator@example.org', scopes=())}"}
    writer = {"Authorization": f"Bearer {make_token('curator@example.org', scopes=('deposit:write',))}"}
    author = {"Authorization": f"Bearer {make_token('author@example.org')}"}
    make_community(client, curator, "geology")
    published(client, author, communities=[{"identifier": "geology"}])
    listed = client.get("/api/communities/geology/requests/", headers=reader)
    assert listed.status_code == 200
    request_id = listed.json[0]["id"]
    for verb in ("accept", "reject"):
        for token in (reader, writer):
            refused = client.post(f"/api/communities/geology/requests/{request_id}/{verb}", headers=token)
            assert refused.status_code == 403 and "deposit:actions" in refused.json["message"], verb
    assert client.get("/api/communities/geology/requests/", headers=curator).json[0]["status"] == "pending"
    accepted = client.post(f"/api/communities/geology/requests/{request_id}/accept", headers=curator)
    assert accepted.status_code == 200 and accepted.json["status"] == "accepted"
