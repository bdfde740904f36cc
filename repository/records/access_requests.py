"""Access requests for restricted records: "requesters justify, the owner decides".

A signed-in requester's request reaches the record's owner at once (by mail); a guest gives an address, which a
mailed link (purpose "access-request") must confirm before the owner hears of it. The owner accepts (optionally
until a date: the grant ends at the end of that day, UTC) or rejects with a message, and may revoke a grant; the
requester is mailed each decision. A live grant (accepted, not past its end) lets the requester read the record's
files: as the user who asked, or, for a guest, as any user whose confirmed address is the one that asked
(`has_grant`). Nothing public changes: search, OAI-PMH and exports show what the access right allows everyone.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Connection, and_, insert, or_, select, update

from repository import urls
from repository.accounts import mail
from repository.accounts.links import LinkInvalid, make_link_token, read_link_token
from repository.accounts.tokens import EMAIL_RE, Identity
from repository.config import Settings
from repository.errors import BadRequest, Conflict, Forbidden, NotFound, ValidationError
from repository.storage.tables import access_requests as tables
from repository.storage.tables.access_requests import access_requests
from repository.storage.tables.accounts import users
from repository.storage.tables.records import records
from repository.storage.upsert import inserted_id
from repository.timeutil import isoformat, utcnow

PURPOSE = "access-request"
JUSTIFICATION_MAX, MESSAGE_MAX = tables.JUSTIFICATION_MAX, tables.MESSAGE_MAX  # what the forms say
STATUSES = ("pending_confirmation", "pending", "accepted", "rejected", "revoked")


def _record(conn: Connection, recid: int, for_update: bool = False) -> dict:
    query = select(records.c.id, records.c.owner_id, records.c.metadata, records.c.deleted).where(records.c.id == recid)
    row = conn.execute(query.with_for_update() if for_update else query).mappings().first()
    if row is None or row["deleted"] is not None:
        raise NotFound("PID does not exist.")
    return dict(row)


def _title(record: dict) -> str:
    return str(record["metadata"].get("title") or f"record {record['id']}")


def _owner_email(conn: Connection, owner_id: int) -> str | None:
    return conn.execute(select(users.c.email).where(users.c.id == owner_id, users.c.active.is_(True))).scalar()


def _text(value: object, field: str, limit: int, required: bool) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ValidationError(errors=[{"field": field, "message": "Must be a string."}])
    value = value.strip()
    if required and not value:
        raise ValidationError(errors=[{"field": field, "message": "Required: say why you need access."
                                       if field == "justification" else "Required."}])
    if len(value) > limit:
        raise ValidationError(errors=[{"field": field, "message": f"At most {limit} characters."}])
    return value


def _live(now: dt.datetime):  # type: ignore[no-untyped-def]
    """The condition of a request that grants access at `now`."""
    return and_(access_requests.c.status == "accepted",
                or_(access_requests.c.expires.is_(None), access_requests.c.expires > now))


def _open_request(conn: Connection, recid: int, user_id: int | None, email: str, link_hours: int) -> dict | None:
    """The requester's request of `recid` that is still open: awaiting the owner, a live grant, or a guest's
    awaiting its confirmation (while its link is valid)."""
    now = utcnow()
    who = access_requests.c.requester_email == email
    if user_id is not None:
        who = or_(who, access_requests.c.requester_user_id == user_id)
    unconfirmed = and_(access_requests.c.status == "pending_confirmation",
                       access_requests.c.created > now - dt.timedelta(hours=link_hours))
    row = conn.execute(select(access_requests).where(
        access_requests.c.recid == recid, who,
        or_(access_requests.c.status == "pending", _live(now), unconfirmed),
    ).order_by(access_requests.c.id.desc())).mappings().first()  # fmt: skip
    return dict(row) if row else None


def create(conn: Connection, settings: Settings, secret: bytes, recid: int, justification: object,
           who: Identity | None, email: object = None) -> dict:
    """Ask for access to the files of restricted record `recid`, as `who` or (a guest) as `email`; returns the
    request. A signed-in requester's request is `pending` and mailed to the owner; a guest's is
    `pending_confirmation` and its confirmation link mailed to `email`. NotFound for no such record, BadRequest
    for a record that is not restricted or one's own, ValidationError for bad fields, Conflict when the requester
    already has an open request or a live grant."""
    # The record's row is locked: two requests of one requester at once cannot both pass the check for an open one.
    record = _record(conn, recid, for_update=True)
    right = record["metadata"].get("access_right", "open")
    if right != "restricted":
        raise BadRequest(f"Access can be requested only for restricted records; this record's access right is "
                         f"{right!r}: its files are {'open to everyone' if right == 'open' else 'not requestable'}.")
    text = _text(justification, "justification", JUSTIFICATION_MAX, required=True)
    if who is not None:
        if who.user_id == record["owner_id"]:
            raise BadRequest("You own this record: its files are yours already.")
        address, user_id = who.email.lower(), who.user_id
    else:
        address = _text(email, "email", 255, required=True).lower()
        if not EMAIL_RE.match(address):
            raise ValidationError(errors=[{"field": "email", "message": "Not a valid e-mail address."}])
        user_id = None
    existing = _open_request(conn, recid, user_id, address, settings.CONFIRM_LINK_HOURS)
    if existing is not None:
        state = "you already have access" if existing["status"] == "accepted" else "your request is awaiting a decision" \
            if existing["status"] == "pending" else "your request awaits the confirmation of its e-mail address"
        raise Conflict(f"You already asked for access to this record: {state} (request {existing['id']}).")
    status = "pending" if who is not None else "pending_confirmation"
    request_id = inserted_id(conn.execute(insert(access_requests).values(
        recid=recid, requester_user_id=user_id, requester_email=address, justification=text, status=status,
        created=utcnow(),
    )))  # fmt: skip
    row = _reread(conn, request_id)
    if who is not None:
        _tell_owner(conn, settings, record, row)
    else:
        token = make_link_token(secret, PURPOSE, {"id": request_id, "state": "pending_confirmation"})
        link = urls.access_confirm_html(settings.BASE_URL, recid, token)
        mail.enqueue(conn, address, f"Confirm your access request for {_short(_title(record))}",
                     f"Someone, hopefully you, asked for access to the files of \"{_title(record)}\"\n"
                     f"({urls.record_html(settings.BASE_URL, recid)}) with this address.\n\n"
                     f"To send the request to the record's owner, open this link within "
                     f"{settings.CONFIRM_LINK_HOURS} hours:\n\n{link}\n\n"
                     "If it was not you, ignore this message: nothing is sent without the confirmation.\n")
    return row


def confirm(conn: Connection, settings: Settings, secret: bytes, token: str) -> dict:
    """Confirm a guest's request through its mailed link: it becomes `pending` and the owner is mailed. BadRequest
    for a link that is invalid, expired or used already."""
    try:
        payload = read_link_token(secret, PURPOSE, token, settings.CONFIRM_LINK_HOURS * 3600)
    except LinkInvalid as exc:
        raise BadRequest(f"{exc} Ask for access again to get a new one.") from None
    request_id = payload.get("id")
    row = get(conn, request_id, for_update=True) if isinstance(request_id, int) else None
    if row is None or row["status"] != payload.get("state"):
        raise BadRequest("This link was used already (or its request is gone): the request was confirmed before.")
    conn.execute(update(access_requests).where(access_requests.c.id == row["id"]).values(status="pending"))
    row = _reread(conn, row["id"])
    _tell_owner(conn, settings, _record(conn, row["recid"]), row)
    return row


def _short(title: str) -> str:
    """The title as a mail's subject shows it: one line (a line break in a header is refused), at most 80
    characters."""
    title = " ".join(title.split())
    return title if len(title) <= 80 else title[:77] + "..."


def _tell_owner(conn: Connection, settings: Settings, record: dict, row: dict) -> None:
    to = _owner_email(conn, record["owner_id"])
    if to is None:
        return
    mail.enqueue(conn, to, f"Access request for {_short(_title(record))}",
                 f"{row['requester_email']} asks for access to the files of your restricted record\n"
                 f"\"{_title(record)}\" ({urls.record_html(settings.BASE_URL, record['id'])}).\n\n"
                 f"Their justification:\n\n{row['justification']}\n\n"
                 f"Accept (optionally until a date) or reject it here:\n\n{urls.access_requests_html(settings.BASE_URL)}\n",
                 reply_to=row["requester_email"])


def get(conn: Connection, request_id: int, for_update: bool = False) -> dict | None:
    query = select(access_requests).where(access_requests.c.id == request_id)
    row = conn.execute(query.with_for_update() if for_update else query).mappings().first()
    return dict(row) if row else None


def _reread(conn: Connection, request_id: int) -> dict:
    """A request this transaction has just written."""
    row = get(conn, request_id)
    assert row is not None
    return row


def _owned(conn: Connection, recid: int, owner_id: int) -> dict:
    record = _record(conn, recid)
    if record["owner_id"] != owner_id:
        raise Forbidden("Only the record's owner can see and decide its access requests.")
    return record


def list_for_record(conn: Connection, recid: int, owner_id: int) -> list[dict]:
    """The requests of record `recid` the owner has to see (every one but unconfirmed guests'), newest first;
    Forbidden to anyone but its owner."""
    _owned(conn, recid, owner_id)
    return [dict(r) for r in conn.execute(select(access_requests).where(
        access_requests.c.recid == recid, access_requests.c.status != "pending_confirmation",
    ).order_by(access_requests.c.id.desc())).mappings()]  # fmt: skip


def _with_titles(query):  # type: ignore[no-untyped-def]
    return query.add_columns(records.c.metadata.label("record_metadata")).select_from(
        access_requests.join(records, records.c.id == access_requests.c.recid))


def _titled(rows) -> list[dict]:  # type: ignore[no-untyped-def]
    out = []
    for r in rows:
        row = dict(r)
        meta = row.pop("record_metadata") or {}
        row["record_title"] = str(meta.get("title") or f"record {row['recid']}")
        row["until"] = (row["expires"] - dt.timedelta(days=1)).date().isoformat() if row["expires"] else None
        out.append(row)
    return out


def owner_overview(conn: Connection, owner_id: int) -> tuple[list[dict], list[dict]]:
    """The owner's pending requests (oldest first) and live grants (newest first) over all their records, each
    with `record_title`."""
    now = utcnow()
    base = _with_titles(select(access_requests)).where(records.c.owner_id == owner_id, records.c.deleted.is_(None))
    pending = _titled(conn.execute(base.where(access_requests.c.status == "pending")
                                   .order_by(access_requests.c.id)).mappings())
    grants = _titled(conn.execute(base.where(_live(now)).order_by(access_requests.c.id.desc())).mappings())
    return pending, grants


def made_by(conn: Connection, user_id: int) -> list[dict]:
    """The requests a user made (signed in, or as a guest with their confirmed address), newest first, with
    `record_title`."""
    confirmed = select(users.c.email).where(users.c.id == user_id, users.c.email_confirmed.is_not(None))
    query = _with_titles(select(access_requests)).where(
        or_(access_requests.c.requester_user_id == user_id,
            and_(access_requests.c.requester_user_id.is_(None),
                 access_requests.c.requester_email == confirmed.scalar_subquery())),
        access_requests.c.status != "pending_confirmation",
    ).order_by(access_requests.c.id.desc())  # fmt: skip
    return _titled(conn.execute(query).mappings())


def _parse_until(until: object) -> dt.datetime | None:
    """The grant's end for `until` (YYYY-MM-DD: access through that day, UTC); None for no end."""
    if until is None or until == "":
        return None
    if not isinstance(until, str):
        raise ValidationError(errors=[{"field": "until", "message": "A date as YYYY-MM-DD."}])
    try:
        day = dt.date.fromisoformat(until.strip())
    except ValueError:
        raise ValidationError(errors=[{"field": "until", "message": "Not a valid date: use YYYY-MM-DD."}]) from None
    if day <= utcnow().date():
        raise ValidationError(errors=[{"field": "until", "message": "Must be in the future."}])
    if day >= dt.date.max:  # the grant ends the next midnight, which no date holds
        raise ValidationError(errors=[{"field": "until",
                                       "message": "Too far in the future: leave it empty for access with no end."}])
    return dt.datetime.combine(day + dt.timedelta(days=1), dt.time())


def _owned_request(conn: Connection, recid: int, request_id: int, owner_id: int) -> tuple[dict, dict]:
    record = _owned(conn, recid, owner_id)
    row = get(conn, request_id, for_update=True)
    if row is None or row["recid"] != recid or row["status"] == "pending_confirmation":
        raise NotFound("Access request not found.")
    return record, row


def decide(conn: Connection, settings: Settings, recid: int, request_id: int, owner_id: int, accept: bool,
           message: object = None, until: object = None) -> dict:
    """Accept (optionally `until` a date) or reject a pending request of the owner's record, with an optional
    message; the requester is mailed the decision. Forbidden for another user, NotFound for an unknown request,
    Conflict for one decided already, ValidationError for a bad date or message."""
    record, row = _owned_request(conn, recid, request_id, owner_id)
    text = _text(message, "message", MESSAGE_MAX, required=False)
    expires = _parse_until(until) if accept else None
    if row["status"] != "pending":
        raise Conflict(f"This request was {row['status']} already: only pending requests can be decided.")
    status = "accepted" if accept else "rejected"
    conn.execute(update(access_requests).where(access_requests.c.id == request_id).values(
        status=status, decided=utcnow(), decided_by=owner_id, message=text or None, expires=expires))
    url = urls.record_html(settings.BASE_URL, recid)
    if accept:
        lasts = f" until {(expires - dt.timedelta(days=1)).date().isoformat()} (UTC)" if expires else ""
        how = ("Sign in with this address to download the files"
               if row["requester_user_id"] is None else "Sign in to download the files, or use your access tokens")
        news = f"Your request for access to \"{_title(record)}\" was accepted: you may download its files{lasts}.\n" \
               f"{how}: {url}\n"
    else:
        news = f"Your request for access to \"{_title(record)}\" ({url}) was rejected.\n"
    note = f"\nThe owner's message:\n\n{text}\n" if text else ""
    mail.enqueue(conn, row["requester_email"], f"Access request {status}: {_short(_title(record))}", news + note)
    return _reread(conn, request_id)


def revoke(conn: Connection, settings: Settings, recid: int, request_id: int, owner_id: int) -> dict:
    """End a grant of the owner's record now (the requester is mailed). Conflict when the request is not an
    accepted one (a grant ended by its date can still be revoked: nothing changes for the requester)."""
    record, row = _owned_request(conn, recid, request_id, owner_id)
    if row["status"] != "accepted":
        raise Conflict(f"This request is {row['status']}: only an accepted request (a grant) can be revoked.")
    conn.execute(update(access_requests).where(access_requests.c.id == request_id).values(
        status="revoked", decided=utcnow(), decided_by=owner_id))
    mail.enqueue(conn, row["requester_email"], f"Access revoked: {_short(_title(record))}",
                 f"The owner of \"{_title(record)}\" ({urls.record_html(settings.BASE_URL, recid)}) revoked your access "
                 "to its files.\n")
    return _reread(conn, request_id)


def has_grant(conn: Connection, recid: int, user_id: int | None = None, email: str | None = None,
              now: dt.datetime | None = None) -> bool:
    """Whether a live grant to record `recid` exists for user `user_id` (a request they made signed in, or a
    guest's made with their address once they have confirmed it) or for the confirmed address `email`."""
    if user_id is None and email is None:
        return False
    whose = []
    if user_id is not None:
        confirmed = select(users.c.email).where(users.c.id == user_id, users.c.active.is_(True),
                                                users.c.email_confirmed.is_not(None))
        whose += [access_requests.c.requester_user_id == user_id,
                  and_(access_requests.c.requester_user_id.is_(None),
                       access_requests.c.requester_email == confirmed.scalar_subquery())]
    if email is not None:
        whose.append(access_requests.c.requester_email == email.strip().lower())
    found = conn.execute(select(access_requests.c.id).where(
        access_requests.c.recid == recid, _live(now or utcnow()), or_(*whose)).limit(1)).first()  # fmt: skip
    return found is not None


def request_json(row: dict, base_url: str) -> dict:
    """An access request as the API shows it to the record's owner."""
    api = urls.access_request_api(base_url, row["recid"], row["id"])
    expires = row["expires"]
    live = row["status"] == "accepted" and (expires is None or expires > utcnow())
    return {
        "id": row["id"],
        "record_id": row["recid"],
        "status": row["status"],
        "requester": {"email": row["requester_email"], "user_id": row["requester_user_id"]},
        "justification": row["justification"],
        "message": row["message"],
        "created": isoformat(row["created"]),
        "decided": isoformat(row["decided"]),
        # The last day of access (UTC), for a grant with an end.
        "until": (expires - dt.timedelta(days=1)).date().isoformat() if expires else None,
        "access": live,
        "links": {"self": api, "record": urls.record_api(base_url, row["recid"]), "accept": api + "/accept",
                  "reject": api + "/reject", "revoke": api + "/revoke"},
    }
