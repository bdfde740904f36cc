"""Moderation through the administration API (docs/api/administration.md#moderation): the queue, approve, hide and
unhide, block a record's owner (their records taken down), and the banned link domains; the same domain calls as
the pages (repository.records.review, repository.records.screening). An administrator's token with the `admin`
scope (repository.web.staff.api_actor: 401 for a guest, 403 and an audit entry for anyone else)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from repository import urls
from repository.accounts import admin
from repository.api.admin import REFUSED, _object, _record_json
from repository.records import moderation, review, screening
from repository.timeutil import isoformat
from repository.web.openapi import doc
from repository.web.request import json_response, services
from repository.web.staff import api_actor

bp = Blueprint("admin_moderation", __name__, url_prefix="/api/admin")
NOT_FOUND = {"404": {"description": "No such record"}}


def _item_json(item: dict) -> dict:
    base = services().settings.BASE_URL
    return {"id": item["recid"], "state": item["state"], "title": item["title"], "flags": item["flags"],
            "note": item["note"], "since": isoformat(item["created"]), "links_to": item["hosts"],
            "owner": {"id": item["owner_id"], "email": item["owner_email"], "active": item["owner_active"]},
            "links": {"html": urls.record_html(base, item["recid"]),
                      "admin_html": urls.admin_record_html(base, item["recid"])}}  # fmt: skip


def _state(recid: int) -> Response:
    with services().db.read() as conn:
        return json_response(_record_json(moderation.record_facts(conn, recid)))


@bp.get("/moderation")
@doc(responses=REFUSED)
def queue_view() -> Response:
    """The records in review (awaiting approval or hidden), oldest first: `{"hits": [...]}`."""
    api_actor()
    with services().db.read() as conn:
        found = review.queue(conn)
    return json_response({"hits": [_item_json(item) for item in found]})


@bp.post("/records/<int:recid>/approve")
@doc(responses={**REFUSED, **NOT_FOUND, "400": {"description": "Not in review, or deleted"}})
def approve_view(recid: int) -> Response:
    """`{"note": "..."}` (optional): release the record from review: public, listed, its DOI registered."""
    actor = api_actor()
    body = _object() if request.get_data(cache=True) else {}  # the body is optional
    note = moderation.parse_texts("-", body.get("note"))[1]  # only the note is checked (field `note`)
    with services().db.write() as conn:
        review.release(conn, services().settings, actor, recid, note)
    return _state(recid)


@bp.post("/records/<int:recid>/unhide")
@doc(responses={**REFUSED, **NOT_FOUND, "400": {"description": "Not in review, or deleted"}})
def unhide_view(recid: int) -> Response:
    """Release a hidden record: listed again."""
    actor = api_actor()
    with services().db.write() as conn:
        review.release(conn, services().settings, actor, recid)
    return _state(recid)


@bp.post("/records/<int:recid>/hide")
@doc(responses={**REFUSED, **NOT_FOUND, "400": {"description": "No reason, in review already, or deleted"}})
def hide_view(recid: int) -> Response:
    """`{"reason": "..."}`: hide the published record from search, the sitemaps and OAI-PMH while reviewing it."""
    actor = api_actor()
    reason = moderation.parse_texts(_object().get("reason"), "")[0]
    with services().db.write() as conn:
        review.hide(conn, actor, recid, reason)
    return _state(recid)


@bp.post("/records/<int:recid>/block-owner")
@doc(responses={**REFUSED, **NOT_FOUND, "400": {"description": "No reason"},
                "409": {"description": "The last administrator"}})  # fmt: skip
def block_owner_view(recid: int) -> Response:
    """`{"reason": "..."}`: block the record's owner and take down every published record of theirs with the
    reason: `{"owner": id, "taken_down": [ids]}`."""
    actor = api_actor()
    reason = admin.parse_reason(_object().get("reason"))
    with services().db.write() as conn:
        taken = review.block_owner(conn, actor, recid, reason)
        owner = moderation.record_facts(conn, recid)["owner_id"]
    return json_response({"owner": owner, "taken_down": taken})


@bp.get("/moderation/domains")
@doc(responses=REFUSED)
def domains_view() -> Response:
    """The banned link domains: `{"domains": [{"domain", "created", "added_by"}]}`."""
    api_actor()
    with services().db.read() as conn:
        found = screening.banned(conn)
    return json_response({"domains": [{"domain": d["domain"], "created": isoformat(d["created"]),
                                             "added_by": d["added_by"]} for d in found]})


@bp.post("/moderation/domains")
@doc(responses={**REFUSED, "400": {"description": "Not a domain name"}})
def ban_view() -> Response:
    """`{"domain": "casino.example"}`: ban it (and its subdomains); 201, or 200 when it was banned already."""
    actor = api_actor()
    domain = screening.parse_domain(_object().get("domain"))
    with services().db.write() as conn:
        added = screening.ban(conn, actor, domain)
    return json_response({"domain": domain}, 201 if added else 200)


@bp.delete("/moderation/domains/<domain>")
@doc(responses={**REFUSED, "404": {"description": "Not on the list"}})
def unban_view(domain: str) -> Response:
    """Take the domain off the list: 204."""
    actor = api_actor()
    with services().db.write() as conn:
        screening.unban(conn, actor, domain.lower())
    return Response(status=204)
