"""Mail about inclusion requests: the community's owner hears of a new request, the depositor of the decision.

Each message is queued (`accounts.mail.enqueue`) in the transaction that makes the change, so a rollback sends
nothing. Nobody is told of their own doing, and a deactivated or deleted account is told nothing.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from repository import urls
from repository.accounts import mail
from repository.accounts.users import get_user
from repository.config import Settings
from repository.storage.tables.communities import communities
from repository.storage.tables.records import records


def request_created(conn: Connection, settings: Settings, request: dict, depositor_id: int) -> None:
    """Tell the owner of `request`'s community that a record asks to join it (unless they asked themselves)."""
    community = _community(conn, request["community"])
    if community is None or community["owner_id"] in (None, depositor_id):
        return
    to = _address(conn, community["owner_id"])
    record = _record(conn, request["recid"])
    if to is None or record is None:
        return
    base = settings.BASE_URL
    name, title = _line(community["title"]), _title(record)
    requests = urls.community_request_api(base, community["identifier"], request["id"])
    body = (
        f"Hello,\n\nthe record \"{title}\" asks to be included in your community \"{name}\" "
        f"({community['identifier']}).\n\n"
        f"The record: {urls.record_html(base, request['recid'])}\n"
        f"Accept or reject it on the curation page: {urls.community_curate_html(base, community['identifier'])}\n\n"
        "An accepted record joins with every version.\n\n"
        f"Through the API, with one of your tokens: the pending requests are listed at\n"
        f"{urls.community_requests_api(base, community['identifier'])}\n"
        f"and POST {requests}/accept or POST {requests}/reject decides.\n\n"
        f"You receive this message because you own the community.\n\n-- \n{settings.REPOSITORY_NAME}\n{base}\n"
    )
    mail.enqueue(conn, to, f"Inclusion request for {name}: {title}", body)


def request_decided(conn: Connection, settings: Settings, request: dict, previous: str, decider_id: int) -> None:
    """Tell the depositor that the community accepted, rejected or removed their record (when the status changed
    and someone else decided)."""
    if request["status"] == previous:
        return
    record = _record(conn, request["recid"])
    community = _community(conn, request["community"])
    if record is None or community is None or record["owner_id"] == decider_id:
        return
    to = _address(conn, record["owner_id"])
    if to is None:
        return
    base = settings.BASE_URL
    name, title = _line(community["title"]), _title(record)
    if request["status"] == "accepted":
        subject = f"Accepted into {name}: {title}"
        news = (f"the community \"{name}\" accepted your record \"{title}\". Every version of the record is now "
                "listed in the community, in searches and in OAI-PMH.")
    elif previous == "accepted":
        subject = f"Removed from {name}: {title}"
        news = (f"the community \"{name}\" no longer includes your record \"{title}\". The record itself stays "
                "published, unchanged.")
    else:
        subject = f"Not accepted into {name}: {title}"
        news = (f"the community \"{name}\" did not accept your record \"{title}\". The record itself stays "
                "published, unchanged.")
    body = (
        f"Hello,\n\n{news}\n\n"
        f"The record: {urls.record_html(base, request['recid'])}\n"
        f"Your deposit: {urls.deposit_html(base, request['recid'])}\n"
        f"The community: {urls.community_html(base, community['identifier'])}\n\n"
        f"-- \n{settings.REPOSITORY_NAME}\n{base}\n"
    )
    mail.enqueue(conn, to, subject, body)


def _community(conn: Connection, identifier: str) -> dict | None:
    row = conn.execute(select(communities).where(communities.c.identifier == identifier)).mappings().first()
    return dict(row) if row else None


def _record(conn: Connection, recid: int) -> dict | None:
    row = conn.execute(select(records.c.owner_id, records.c.metadata).where(records.c.id == recid)).mappings().first()
    return dict(row) if row else None


def _title(record: dict) -> str:
    return _line(str(record["metadata"].get("title") or "Untitled"))


def _line(text: str) -> str:
    # Titles go into the subject, which must stay one line: a title with a line break must not stop the mail.
    return " ".join(text.split())


def _address(conn: Connection, user_id: int) -> str | None:
    """The address of an active account, or None."""
    user = get_user(conn, user_id)
    return user["email"] if user is not None and user["active"] else None
