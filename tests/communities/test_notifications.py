"""Mail about inclusion requests: the community's owner hears of a new request, the depositor of the decision."""

from __future__ import annotations

import pytest
from helpers.factories import MINIMAL, new_version, published
from helpers.mailbox import body, links, sent_mail

from repository.communities import inclusions

TITLE = MINIMAL["title"]
CURATOR, AUTHOR = "curator@example.org", "author@example.org"


@pytest.fixture(autouse=True)
def mail_settles(app):  # type: ignore[no-untyped-def]
    """The app's mail thread may still be in its last pass when a test ends: let it finish before the app goes."""
    yield
    app.extensions["repository"].mailer.wait_idle()


@pytest.fixture
def people(client, make_token):  # type: ignore[no-untyped-def]
    """The curator owning the community `ecology` ("Ecology of the North") and an author; their auth headers."""
    curator = {"Authorization": f"Bearer {make_token(CURATOR)}"}
    author = {"Authorization": f"Bearer {make_token(AUTHOR)}"}
    response = client.post("/api/communities", json={"identifier": "ecology", "title": "Ecology of the North"},
                           headers=curator)
    assert response.status_code == 201, response.json
    return curator, author


def path(link: str) -> str:
    return link.removeprefix("https://localhost")


def subject(message) -> str:  # type: ignore[no-untyped-def]
    # A long subject is folded onto its own line, and Python's parser keeps the fold's space: mail clients trim it.
    return str(message["Subject"]).strip()


@pytest.mark.slow  # 0.4 s and more of work
def test_the_owner_is_mailed_once_of_a_new_request_and_can_act_on_it(app, client, people):
    curator, author = people
    dep = published(client, author, communities=[{"identifier": "ecology"}])
    [message] = sent_mail(app, CURATOR)
    assert subject(message) == f"Inclusion request for Ecology of the North: {TITLE}"
    text = body(message)
    assert f'"{TITLE}"' in text and "(ecology)" in text
    record, curate, listing = links(message)[:3]
    assert path(record) == f"/records/{dep['id']}"
    assert client.get(path(record)).status_code == 200
    assert path(curate) == "/communities/ecology/curate"  # the owner's page (a guest is asked to sign in)
    assert client.get(path(curate)).headers["Location"].startswith("/login/?next=/communities/ecology/curate")
    pending = client.get(path(listing), headers=curator).json
    assert [r["record_id"] for r in pending] == [dep["id"]]
    accept = [link for link in links(message) if link.endswith("/accept")]
    assert accept == [pending[0]["links"]["accept"]]
    assert sent_mail(app, AUTHOR) == []  # the depositor hears of the decision, not of their own request
    # A new version asks nothing new: the request is the concept's.
    new_version(client, author, dep, b"second version\n")
    assert len(sent_mail(app, CURATOR)) == 1


@pytest.mark.slow
def test_the_depositor_is_mailed_the_acceptance_once(app, client, people):
    curator, author = people
    dep = published(client, author, communities=[{"identifier": "ecology"}])
    request_id = client.get("/api/communities/ecology/requests/", headers=curator).json[0]["id"]
    accept = f"/api/communities/ecology/requests/{request_id}/accept"
    assert client.post(accept, headers=curator).status_code == 200
    assert client.post(accept, headers=curator).status_code == 200  # the same decision again tells nothing new
    [message] = sent_mail(app, AUTHOR)
    assert subject(message) == f"Accepted into Ecology of the North: {TITLE}"
    assert f'accepted your record "{TITLE}"' in body(message)
    record, deposit, community = links(message)[:3]
    assert client.get(path(record)).status_code == 200
    # The deposition's page, for people: a guest is asked to sign in first.
    assert path(deposit) == f"/deposit/{dep['id']}"
    assert client.get(path(deposit)).headers["Location"].startswith("/login/?next=")
    assert path(community) == "/communities/ecology/"
    assert "Ecology of the North" in client.get(path(community)).get_data(as_text=True)
    assert len(sent_mail(app, CURATOR)) == 1  # only the request: the curator is not told of their own decision


@pytest.mark.slow
def test_the_depositor_is_mailed_a_rejection_and_a_later_change_of_mind(app, client, people):
    curator, author = people
    dep = published(client, author, communities=[{"identifier": "ecology"}])
    request_id = client.get("/api/communities/ecology/requests/", headers=curator).json[0]["id"]
    base = f"/api/communities/ecology/requests/{request_id}"
    assert client.post(f"{base}/reject", headers=curator).status_code == 200
    [rejected] = sent_mail(app, AUTHOR)
    assert subject(rejected) == f"Not accepted into Ecology of the North: {TITLE}"
    assert "stays published" in body(rejected) and f"/records/{dep['id']}" in body(rejected)
    assert client.post(f"{base}/accept", headers=curator).status_code == 200
    assert client.post(f"{base}/reject", headers=curator).status_code == 200
    subjects = [subject(m).split(":")[0] for m in sent_mail(app, AUTHOR)]
    assert subjects == ["Not accepted into Ecology of the North", "Accepted into Ecology of the North",
                        "Removed from Ecology of the North"]


def test_no_mail_for_ones_own_community(app, client, people):
    curator, _ = people
    published(client, curator, communities=[{"identifier": "ecology"}])  # accepted at once
    assert sent_mail(app) == []


def test_no_mail_when_the_decision_fails(app, client, people, monkeypatch):
    curator, author = people
    published(client, author, communities=[{"identifier": "ecology"}])
    request_id = client.get("/api/communities/ecology/requests/", headers=curator).json[0]["id"]
    base = f"/api/communities/ecology/requests/{request_id}"
    assert client.post(f"{base}/accept", headers=author).status_code == 403
    assert client.post("/api/communities/ecology/requests/999/accept", headers=curator).status_code == 404

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("the outbox is gone")  # after the status change and the mail, in the same transaction

    monkeypatch.setattr(inclusions.outbox, "enqueue", broken)
    app.config["PROPAGATE_EXCEPTIONS"] = False
    assert client.post(f"{base}/accept", headers=curator).status_code == 500
    monkeypatch.undo()
    assert sent_mail(app, AUTHOR) == []
    assert [r["status"] for r in client.get("/api/communities/ecology/requests/", headers=curator).json] == ["pending"]


def test_no_mail_when_the_publish_fails(app, client, people):
    _, author = people
    response = client.post("/api/deposit/depositions", json={"metadata": {**MINIMAL, "communities": [
        {"identifier": "ecology"}]}}, headers=author)
    dep_id = response.json["id"]
    # No file: the publish is refused and asks nothing of the community.
    assert client.post(f"/api/deposit/depositions/{dep_id}/actions/publish", headers=author).status_code == 400
    assert sent_mail(app) == []
    assert client.get("/api/communities/ecology/requests/", headers=people[0]).json == []
