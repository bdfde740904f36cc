"""The administration API and the `users` commands (docs/api/administration.md, docs/operators/administration.md):
roles, blocks, takedowns with reasons, restore, owner changes and the audit log; refusals for everyone else."""

from __future__ import annotations

from datetime import timedelta

import pytest
from helpers.factories import published
from helpers.staff import staff_user

from repository.accounts.tokens import create_token, get_user_by_email
from repository.cli import COMMANDS, invoke
from repository.errors import ValidationError

JSON = {"Content-Type": "application/json"}


def _audit(client, headers, **args):
    answer = client.get("/api/admin/audit", query_string=args, headers=headers)
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()["hits"]


def test_an_admin_token_blocks_and_unblocks_a_user_whose_tokens_stop_at_once(app, client):
    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    spammer_id, spammer = staff_user(app, "spam@example.org")
    assert client.get("/api/deposit/depositions", headers=spammer).status_code == 200
    answer = client.post(f"/api/admin/users/{spammer_id}/block", json={"reason": "Spam links"}, headers=root)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["blocked"] is True and answer.get_json()["block_reason"] == "Spam links"
    assert client.get("/api/deposit/depositions", headers=spammer).status_code == 401
    found = client.get("/api/admin/users", query_string={"q": "spam@"}, headers=root).get_json()["hits"]
    assert [u["email"] for u in found] == ["spam@example.org"]
    assert client.post(f"/api/admin/users/{spammer_id}/unblock", headers=root).get_json()["active"] is True
    assert client.get("/api/deposit/depositions", headers=spammer).status_code == 200
    entries = _audit(client, root, target=f"user:{spammer_id}")["hits"]
    assert [e["action"] for e in entries] == ["user.unblock", "user.block"]
    assert entries[1]["detail"]["reason"] == "Spam links" and entries[1]["actor"]["email"] == "root@example.org"


def test_only_administrators_may_hold_the_admin_scope(app, client):
    user_id, _ = staff_user(app, "ada@example.org")
    with app.extensions["repository"].db.write() as conn, pytest.raises(ValidationError) as refused:
        create_token(conn, user_id, ["admin"])
    assert "administrators" in refused.value.errors[0]["message"]


def test_non_admins_are_refused_with_403_and_an_audit_entry_and_nothing_changes(app, client):
    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    _, moderator = staff_user(app, "mod@example.org", "moderator")
    victim_id, plain = staff_user(app, "plain@example.org")
    _, scopeless_admin = staff_user(app, "root2@example.org", "admin", ("deposit:write",))
    for headers in (moderator, plain, scopeless_admin):
        answer = client.post(f"/api/admin/users/{victim_id}/role", json={"role": "admin"}, headers=headers)
        assert answer.status_code == 403, answer.get_json()
        assert answer.get_json()["status"] == 403
    assert client.get("/api/admin/users").status_code == 401
    refused = _audit(client, root, action="admin.refused")
    assert refused["total"] == 3
    assert {e["actor"]["email"] for e in refused["hits"]} == {"mod@example.org", "plain@example.org",
                                                               "root2@example.org"}
    user = client.get(f"/api/admin/users/{victim_id}", headers=root).get_json()
    assert user["role"] == "none"


def test_the_last_administrator_cannot_be_removed_or_blocked(app, client):
    root_id, root = staff_user(app, "root@example.org", "admin", ("admin",))
    answer = client.post(f"/api/admin/users/{root_id}/role", json={"role": "none"}, headers=root)
    assert answer.status_code == 409 and "last administrator" in answer.get_json()["message"]
    assert client.post(f"/api/admin/users/{root_id}/role", json={"role": "boss"}, headers=root).status_code == 400
    assert client.post(f"/api/admin/users/{root_id}/block", json={"reason": ""}, headers=root).status_code == 400
    assert client.post(f"/api/admin/users/{root_id}/block", data="x", headers={**root, **JSON}).status_code == 400
    assert client.get("/api/admin/users/99999", headers=root).status_code == 404
    assert client.get(f"/api/admin/users/{root_id}", headers=root).get_json()["role"] == "admin"
    other_id, _ = staff_user(app, "second@example.org", "admin")
    assert client.post(f"/api/admin/users/{root_id}/role", json={"role": "moderator"}, headers=root).status_code == 200
    assert client.get(f"/api/admin/users/{other_id}", headers=root).status_code == 403  # root is a moderator now


@pytest.mark.slow  # 0.4 s and more of work
def test_takedown_with_a_public_reason_shows_in_the_410_then_restore(app, client, auth):
    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    rec = published(client, auth)
    recid = rec["record_id"] if "record_id" in rec else rec["id"]
    body = {"reason": "Copyright complaint upheld", "note": "ticket 4711"}
    answer = client.post(f"/api/admin/records/{recid}/takedown", json=body, headers=root)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["takedown"] == {"reason": "Copyright complaint upheld", "note": "ticket 4711"}
    gone = client.get(f"/api/records/{recid}")
    assert gone.status_code == 410
    assert gone.get_json()["note"] == "Copyright complaint upheld" and "4711" not in gone.get_data(as_text=True)
    assert gone.get_json()["reason"]["id"] == "takedown"
    assert client.post(f"/api/admin/records/{recid}/takedown", json=body, headers=root).status_code == 400
    assert client.post(f"/api/admin/records/{recid}/restore", headers=root).status_code == 200
    assert client.get(f"/api/records/{recid}").status_code == 200
    assert client.post(f"/api/admin/records/{recid}/restore", headers=root).status_code == 400
    actions = [e["action"] for e in _audit(client, root, target=f"record:{recid}")["hits"]]
    assert actions == ["record.restore", "record.takedown", "deposit.publish"]


def test_a_record_changes_owner(app, client, auth):
    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    new_id, new_owner = staff_user(app, "heir@example.org")
    rec = published(client, auth)
    recid = rec["record_id"] if "record_id" in rec else rec["id"]
    bad = client.post(f"/api/admin/records/{recid}/owner", json={"email": "nobody@example.org"}, headers=root)
    assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == "email"
    answer = client.post(f"/api/admin/records/{recid}/owner", json={"email": "heir@example.org"}, headers=root)
    assert answer.get_json()["owner"] == {"id": new_id, "email": "heir@example.org"}
    assert client.get(f"/api/deposit/depositions/{recid}", headers=new_owner).status_code == 200
    assert client.get(f"/api/deposit/depositions/{recid}", headers=auth).status_code == 404


def run(settings, *argv):
    return invoke(COMMANDS["users"], list(argv), settings)


def test_the_users_commands_set_roles_block_and_unblock(app, settings, client, capsys):
    staff_user(app, "root@example.org", "admin")
    _, ada = staff_user(app, "ada@example.org")
    assert run(settings, "set-role", "ada@example.org", "moderator") == 0
    assert "is now moderator" in capsys.readouterr().out
    assert run(settings, "block", "ada@example.org", "--reason", "Spam") == 0
    assert client.get("/api/deposit/depositions", headers=ada).status_code == 401
    assert run(settings, "unblock", "ada@example.org") == 0
    assert client.get("/api/deposit/depositions", headers=ada).status_code == 200
    assert run(settings, "set-role", "root@example.org", "none") == 2
    assert "last administrator" in capsys.readouterr().err
    assert run(settings, "block", "nobody@example.org", "--reason", "x") == 1


def test_personal_data_export_resend_and_account_deletion(app, client, auth):
    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    rec = published(client, auth)
    with app.extensions["repository"].db.read() as conn:
        owner_id = get_user_by_email(conn, "owner@example.org")["id"]
    data = client.get(f"/api/admin/users/{owner_id}/export", headers=root).get_json()
    assert data["account"]["email"] == "owner@example.org" and "password_hash" not in data["account"]
    assert [r["id"] for r in data["records"]] == [rec["id"]] and len(data["tokens"]) == 1
    assert "token_hash" not in data["tokens"][0]
    # An operator-made account has no password: nothing to confirm with.
    assert client.post(f"/api/admin/users/{owner_id}/resend", headers=root).status_code == 409
    assert client.delete(f"/api/admin/users/{owner_id}", headers=root).status_code == 204
    assert client.get("/api/deposit/depositions", headers=auth).status_code == 401  # its token is gone
    shown = client.get(f"/api/admin/users/{owner_id}", headers=root).get_json()
    assert shown["email"] == f"deleted-{owner_id}@invalid" and shown["active"] is False
    record = client.get(f"/api/records/{rec['id']}")
    assert record.status_code == 200 and record.get_json()["metadata"]["creators"][0]["name"]
    erased = client.get(f"/api/admin/users/{owner_id}/export", headers=root).get_json()
    assert "owner@example.org" not in str(erased["account"]) and erased["linked_sign_ins"] == []
    actions = [e["action"] for e in _audit(client, root, target=f"user:{owner_id}")["hits"]]
    assert actions == ["user.export", "user.delete", "user.export"]
    root_id = client.get("/api/admin/users", query_string={"q": "root@"}, headers=root).get_json()["hits"][0]["id"]
    assert client.delete(f"/api/admin/users/{root_id}", headers=root).status_code == 403  # not oneself


@pytest.mark.slow  # a whole walk through several requests: 0.4 s and more
def test_owners_actions_are_in_the_audit_log_with_the_changed_metadata(app, client, auth):
    from helpers.factories import edit, new_version, publish

    from repository.accounts import audit

    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    rec = published(client, auth, title="First title")
    publish(client, auth, edit(client, auth, rec["id"], title="Second title"))
    new_version(client, auth, rec, b"x,y\n3,4\n")
    entries = _audit(client, root, q="owner@example.org")["hits"]
    actions = [e["action"] for e in entries]
    assert {"deposit.publish", "record.edit", "deposit.newversion", "token.create"} <= set(actions), actions
    edited = next(e for e in entries if e["action"] == "record.edit")
    assert edited["detail"]["changed"]["title"] == {"before": "First title", "after": "Second title"}
    assert edited["target"] == {"kind": "record", "id": str(rec["id"])}
    # Retention: entries older than AUDIT_LOG_DAYS go, newer ones stay.
    with app.extensions["repository"].db.write() as conn:
        total = audit.search(conn)[1]
        assert audit.prune(conn, 30, audit.utcnow()) == 0
        assert audit.prune(conn, 30, audit.utcnow() + timedelta(days=31)) == total


@pytest.mark.slow  # a whole walk through several requests: 0.4 s and more
def test_users_are_found_by_a_name_or_orcid_their_records_carry(app, client):
    _, root = staff_user(app, "root@example.org", "admin", ("admin",))
    _, ada = staff_user(app, "ada@example.org")
    _, bob = staff_user(app, "bob@example.org")
    published(client, ada, creators=[{"name": "Lovelace, Ada", "orcid": "0000-0002-1825-0097"}])
    published(client, bob, creators=[{"name": "Babbage, Charles"}, {"name": "Lovelace, Ada"}])

    def emails(q: str) -> list[str]:
        answer = client.get("/api/admin/users", query_string={"q": q}, headers=root)
        assert answer.status_code == 200, answer.get_json()
        return sorted(user["email"] for user in answer.get_json()["hits"])

    assert emails("Lovelace") == ["ada@example.org", "bob@example.org"]
    assert emails("Babbage, Charles") == ["bob@example.org"]
    assert emails("0000-0002-1825-0097") == ["ada@example.org"]
    assert emails("Turing") == []
    for odd in ('"', "\\", "x", "a:b (", "*"):  # nothing the query language refuses fails the search
        assert isinstance(emails(odd), list)
