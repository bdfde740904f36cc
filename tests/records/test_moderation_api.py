"""Moderation over HTTP (docs/operators/moderation.md, docs/api/administration.md#moderation): first deposits held
for approval, the rules (banned link domains, many records in a short time, a description of links), hiding a
record while reviewing it, the queue's decisions with the owner's mail and the audit entries, and refusals."""

from __future__ import annotations

import pytest
from helpers.factories import make_deposit, publish, published, upload
from helpers.http import https_client
from helpers.mailbox import body, sent_mail
from helpers.registrar import receipt
from helpers.staff import staff_user

from app import create_app
from repository.ondemand import wait_all_idle


@pytest.fixture
def moderated(make_settings):  # type: ignore[no-untyped-def]
    application = create_app(make_settings(MODERATE_FIRST_DEPOSITS=True, MODERATION_BURST_RECORDS=3,
                                           MODERATION_BURST_MINUTES=10, MODERATION_LINKS_PERCENT=50))
    yield application
    wait_all_idle()  # as conftest's close_app
    application.extensions["repository"].db.dispose()


def _listed(client, recid: int) -> dict[str, bool]:  # type: ignore[no-untyped-def]
    """Where record `recid` is listed: search, the sitemap, OAI-PMH (and whether OAI calls it deleted)."""
    hits = client.get("/api/records", query_string={"size": 100}).get_json()["hits"]["hits"]
    sitemap = client.get("/sitemap-0.xml").get_data(as_text=True)
    oai = client.get("/oai2d", query_string={"verb": "ListIdentifiers", "metadataPrefix": "oai_dc"})
    text = oai.get_data(as_text=True)
    mine = [part for part in text.split("<header") if f":{recid}</identifier>" in part]
    return {"search": any(hit["id"] == recid for hit in hits), "sitemap": f"/records/{recid}<" in sitemap,
            "oai": bool(mine), "oai_deleted": bool(mine) and 'status="deleted"' in mine[0]}


@pytest.mark.slow  # 0.4 s and more of work
def test_a_first_deposit_waits_for_approval_then_is_public_with_its_doi(moderated):
    client = https_client(moderated)
    db = moderated.extensions["repository"].db
    _, root = staff_user(moderated, "root@example.org", "admin", ("admin",))
    owner_id, owner = staff_user(moderated, "new@example.org")
    rec = published(client, owner, title="My first dataset")
    recid = rec["record_id"]
    assert _listed(client, recid) == {"search": False, "sitemap": False, "oai": False, "oai_deleted": False}
    assert client.get(f"/api/records/{recid}").status_code == 404  # not public
    own = client.get(f"/api/records/{recid}", headers=owner)
    assert own.status_code == 200 and own.headers["X-Robots-Tag"] == "noindex"
    assert receipt(db, rec["doi"]) is None  # no DOI registered while it waits
    opened = client.post(f"/api/deposit/depositions/{rec['id']}/actions/edit", headers=owner)
    assert opened.status_code == 409 and "approval" in opened.get_json()["message"]
    assert "Awaiting review" in sent_mail(moderated, "new@example.org")[-1]["Subject"]

    queue = client.get("/api/admin/moderation", headers=root).get_json()["hits"]
    assert [(item["id"], item["state"], [f["rule"] for f in item["flags"]]) for item in queue] == [
        (recid, "pending", ["first_deposit"])]
    answer = client.post(f"/api/admin/records/{recid}/approve", headers=root)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["review"] is None
    assert _listed(client, recid) == {"search": True, "sitemap": True, "oai": True, "oai_deleted": False}
    assert client.get(f"/api/records/{recid}").status_code == 200
    assert "X-Robots-Tag" not in client.get(f"/api/records/{recid}").headers
    moderated.extensions["repository"].indexer.process_pending(grace=0)
    assert receipt(db, rec["doi"]) is not None
    approved = sent_mail(moderated, "new@example.org")[-1]
    assert "Approved" in approved["Subject"] and "My first dataset" in body(approved)
    # Approved once, the owner's next publication goes straight out.
    second = published(client, owner, title="My second dataset")
    assert client.get(f"/api/records/{second['record_id']}").status_code == 200
    entries = client.get("/api/admin/audit", query_string={"target": f"record:{recid}"}, headers=root).get_json()
    assert [e["action"] for e in entries["hits"]["hits"]] == ["record.approve", "record.held", "deposit.publish"]
    assert client.get(f"/api/admin/users/{owner_id}", headers=root).status_code == 200


@pytest.mark.slow  # 0.4 s and more of work
def test_hiding_a_record_takes_it_out_of_search_sitemap_and_oai_until_unhidden(app, client):
    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    _, owner = staff_user(app, "owner@example.org")
    recid = published(client, owner, title="Under question")["record_id"]
    assert _listed(client, recid)["search"] is True
    answer = client.post(f"/api/admin/records/{recid}/hide", json={"reason": "Reported as plagiarism"}, headers=root)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["review"] == "hidden"
    assert _listed(client, recid) == {"search": False, "sitemap": False, "oai": True, "oai_deleted": True}
    page = client.get(f"/records/{recid}")
    assert page.status_code == 200 and page.headers["X-Robots-Tag"] == "noindex"
    text = page.get_data(as_text=True)
    assert '<meta name="robots" content="noindex">' in text and "hidden from search" in text
    mail = sent_mail(app, "owner@example.org")[-1]
    assert "Hidden while reviewed" in mail["Subject"] and "Reported as plagiarism" in body(mail)
    again = client.post(f"/api/admin/records/{recid}/hide", json={"reason": "twice"}, headers=root)
    assert again.status_code == 400
    assert client.post(f"/api/admin/records/{recid}/unhide", headers=root).get_json()["review"] is None
    assert _listed(client, recid) == {"search": True, "sitemap": True, "oai": True, "oai_deleted": False}
    assert "X-Robots-Tag" not in client.get(f"/records/{recid}").headers
    assert client.post(f"/api/admin/records/{recid}/unhide", headers=root).status_code == 400
    actions = [e["action"] for e in client.get("/api/admin/audit", query_string={"target": f"record:{recid}"},
                                                headers=root).get_json()["hits"]["hits"]]
    assert actions[:2] == ["record.unhide", "record.hide"]


@pytest.mark.slow  # 0.4 s and more of work
def test_the_rules_hold_banned_domains_bursts_and_link_lists(moderated):
    client = https_client(moderated)
    _, root = staff_user(moderated, "root@example.org", "admin", ("admin",))
    _, owner = staff_user(moderated, "busy@example.org")
    first = published(client, owner, title="Fine")["record_id"]
    client.post(f"/api/admin/records/{first}/approve", headers=root)
    added = client.post("/api/admin/moderation/domains", json={"domain": "https://Casino.example/win"}, headers=root)
    assert added.status_code == 201 and added.get_json() == {"domain": "casino.example"}
    assert client.post("/api/admin/moderation/domains", json={"domain": "casino.example"},
                       headers=root).status_code == 200
    for bad in ("", "not a domain", 7, "x" * 300):
        refused = client.post("/api/admin/moderation/domains", json={"domain": bad}, headers=root)
        assert refused.status_code == 400 and refused.get_json()["errors"][0]["field"] == "domain"
    banned = published(client, owner, title="Win", description='<p>See <a href="https://www.casino.example/x">'
                                                                 "our tables</a> for the data we used.</p>")
    links = published(client, owner, title="Links", description="<p>https://a.example/1 https://b.example/2 ok</p>")
    queue = {item["id"]: [f["rule"] for f in item["flags"]]
             for item in client.get("/api/admin/moderation", headers=root).get_json()["hits"]}
    assert queue[banned["record_id"]] == ["banned_domain"]
    assert queue[links["record_id"]] == ["burst", "links"]  # the third record within ten minutes
    listed = client.get("/api/admin/moderation/domains", headers=root).get_json()["domains"]
    assert [d["domain"] for d in listed] == ["casino.example"] and listed[0]["added_by"] == "root@example.org"
    assert client.delete("/api/admin/moderation/domains/casino.example", headers=root).status_code == 204
    assert client.delete("/api/admin/moderation/domains/casino.example", headers=root).status_code == 404


def test_blocking_an_owner_from_the_queue_takes_their_records_down_with_the_reason(moderated):
    client = https_client(moderated)
    _, root = staff_user(moderated, "root@example.org", "admin", ("admin",))
    spammer_id, spammer = staff_user(moderated, "spam@example.org")
    recid = published(client, spammer, title="Cheap pills")["record_id"]
    refused = client.post(f"/api/admin/records/{recid}/block-owner", json={"reason": ""}, headers=root)
    assert refused.status_code == 400
    assert client.get("/api/deposit/depositions", headers=spammer).status_code == 200  # nothing changed
    answer = client.post(f"/api/admin/records/{recid}/block-owner", json={"reason": "Spam"}, headers=root)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json() == {"owner": spammer_id, "taken_down": [recid]}
    assert client.get("/api/deposit/depositions", headers=spammer).status_code == 401
    gone = client.get(f"/api/records/{recid}")
    assert gone.status_code == 410 and gone.get_json()["note"] == "Spam"
    assert client.get("/api/admin/moderation", headers=root).get_json()["hits"] == []
    mail = sent_mail(moderated, "spam@example.org")[-1]
    assert "Account blocked" in mail["Subject"] and "Spam" in body(mail)
    actions = [e["action"] for e in client.get("/api/admin/audit", headers=root).get_json()["hits"]["hits"]]
    assert actions[:2] == ["record.takedown", "user.block"]


def test_non_admins_are_refused_moderation_with_403_and_an_audit_entry(moderated):
    client = https_client(moderated)
    _, root = staff_user(moderated, "root@example.org", "admin", ("admin",))
    _, moderator = staff_user(moderated, "mod@example.org", "moderator")
    _, owner = staff_user(moderated, "owner@example.org")
    dep = make_deposit(client, owner)
    upload(client, owner, dep)
    recid = publish(client, owner, dep)["record_id"]
    calls = [("post", f"/api/admin/records/{recid}/approve", None), ("post", f"/api/admin/records/{recid}/hide",
             {"reason": "x"}), ("get", "/api/admin/moderation", None),
             ("post", "/api/admin/moderation/domains", {"domain": "a.example"})]
    for method, path, json in calls:
        for headers in (owner, moderator):
            answer = getattr(client, method)(path, json=json, headers=headers)
            assert answer.status_code == 403, (path, answer.get_json())
        assert getattr(client, method)(path, json=json).status_code == 401
    assert client.get(f"/api/records/{recid}").status_code == 404  # still waiting
    assert client.get("/api/admin/moderation/domains", headers=root).get_json()["domains"] == []
    refused = client.get("/api/admin/audit", query_string={"action": "admin.refused"}, headers=root).get_json()
    assert refused["hits"]["total"] == 8
    for path, body_ in ((f"/api/admin/records/{recid}/approve", {"note": 5}),
                        (f"/api/admin/records/{recid}/hide", {"reason": ["x"]}),
                        ("/api/admin/records/999999/approve", None), ("/api/admin/records/999999/hide",
                                                                     {"reason": "x"})):
        answer = client.post(path, json=body_, headers=root)
        assert answer.status_code in (400, 404) and answer.get_json()["message"], answer.get_json()
    assert client.post(f"/api/admin/records/{recid}/approve", data="[", headers={**root, "Content-Type":
                       "application/json"}).status_code == 400
    assert client.get(f"/api/records/{recid}").status_code == 404


@pytest.mark.slow  # 0.4 s and more of work
def test_a_held_new_version_is_no_version_until_approved(moderated):
    """Its siblings neither count it nor lead to it, and the communities it names are not asked, until a moderator
    approves it; then all of that happens (docs/operators/moderation.md)."""
    client = https_client(moderated)
    _, root = staff_user(moderated, "root@example.org", "admin", ("admin",))
    _, curator = staff_user(moderated, "curator@example.org")
    _, owner = staff_user(moderated, "owner@example.org")
    assert client.post("/api/communities", json={"identifier": "lab", "title": "Lab"}, headers=curator).status_code == 201
    first = published(client, owner, title="Tides")
    v1 = first["record_id"]
    assert client.post(f"/api/admin/records/{v1}/approve", headers=root).status_code == 200
    assert client.post("/api/admin/moderation/domains", json={"domain": "casino.example"}, headers=root).status_code == 201
    api = "/api/deposit/depositions"
    draft = client.post(f"{api}/{first['id']}/actions/newversion", headers=owner).get_json()["links"]["latest_draft"]
    v2 = int(draft.rsplit("/", 1)[1])
    changed = client.put(f"{api}/{v2}", headers=owner, json={"metadata": {
        **{k: v for k, v in first["metadata"].items() if k not in ("doi", "prereserve_doi")},
        "description": '<p>Tables at <a href="https://casino.example/x">the casino</a>.</p>',
        "communities": [{"identifier": "lab"}]}})
    assert changed.status_code == 200, changed.get_json()
    files = client.get(f"{api}/{v2}/files", headers=owner).get_json()
    client.delete(f"{api}/{v2}/files/{files[0]['id']}", headers=owner)
    upload(client, owner, {"id": v2}, content=b"a,b\n3,4\n")
    publish(client, owner, {"id": v2})

    def version_of(recid: int) -> dict:
        return client.get(f"/api/records/{recid}").get_json()["metadata"]["relations"]["version"][0]

    assert version_of(v1)["is_last"] is True and version_of(v1)["count"] == 1
    concept = first["conceptrecid"]
    assert client.get(f"/api/records/{concept}").headers["Location"].endswith(f"/api/records/{v1}")
    assert client.get("/api/communities/lab/requests/", headers=curator).get_json() == []
    assert client.get(f"/api/records/{v2}").status_code == 404

    assert client.post(f"/api/admin/records/{v2}/approve", headers=root).status_code == 200
    assert version_of(v1)["is_last"] is False and version_of(v1)["count"] == 2
    assert version_of(v2)["is_last"] is True
    assert client.get(f"/api/records/{concept}").headers["Location"].endswith(f"/api/records/{v2}")
    asked = client.get("/api/communities/lab/requests/", headers=curator).get_json()
    assert len(asked) == 1 and asked[0]["status"] == "pending", asked
    assert f"/records/{v2}" in str(asked[0]), asked  # the version that asked
