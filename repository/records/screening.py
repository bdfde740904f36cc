"""The moderation rules (docs/operators/moderation.md#rules), run when a deposit is first published: a new
account's first deposits (MODERATE_FIRST_DEPOSITS), links to a banned domain (the list the administrators edit),
many records in a short time (MODERATION_BURST_RECORDS within MODERATION_BURST_MINUTES) and a description that is
mostly links (MODERATION_LINKS_PERCENT). `findings` says which rules a publication meets; any finding holds it
for review. The banned domains are kept here too."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select

from repository.accounts import audit
from repository.accounts.audit import Actor
from repository.config import Settings
from repository.errors import NotFound, ValidationError, field_error
from repository.storage.tables.moderation import banned_domains
from repository.storage.tables.records import records
from repository.timeutil import utcnow

_URL = re.compile(r"(?:https?|ftp)://([^/\s\"'<>?#:]+)", re.IGNORECASE)
_BARE_URL = re.compile(r"(?:https?|ftp)://[^\s\"'<>]+|www\.[^\s\"'<>]+", re.IGNORECASE)
_ANCHOR = re.compile(r"<a\b[^>]*>(.*?)</a\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$")


def link_hosts(metadata: dict) -> set[str]:
    """The host names of every http(s)/ftp address anywhere in the metadata (description, notes, related
    identifiers, ...), lower case."""
    text = json.dumps(metadata, ensure_ascii=False)
    return {host.lower().rstrip(".") for host in _URL.findall(text)}


def links_share(description: str) -> int:
    """How much of a description's visible text is links, in percent: the text of its anchors and the bare
    addresses written out, over all its text (spaces left out)."""
    anchored = sum(len("".join(_TAG.sub("", text).split())) for text in _ANCHOR.findall(description))
    rest = _TAG.sub(" ", _ANCHOR.sub(" ", description))
    bare = sum(len(url) for url in _BARE_URL.findall(rest))
    total = anchored + len("".join(rest.split()))
    return 0 if total == 0 else round(100 * (anchored + bare) / total)


def banned(conn: Connection) -> list[dict]:
    """The banned domains, alphabetically, with who added them and when."""
    return [dict(row) for row in conn.execute(select(banned_domains).order_by(banned_domains.c.domain)).mappings()]


def order_free_rules(conn: Connection, settings: Settings) -> bool:
    """Whether any rule that looks at a record alone (banned domains, the links' share) can hold one: a batch of
    publications skips them when none can (docs/operators/migration.md#bulk-writes)."""
    return bool(settings.MODERATION_LINKS_PERCENT) or conn.execute(select(banned_domains.c.domain).limit(1)).first() \
        is not None


def _banned_hit(conn: Connection, hosts: set[str]) -> list[str]:
    if not hosts:
        return []
    candidates = {".".join(host.split(".")[i:]) for host in hosts for i in range(host.count(".") + 1)}
    query = select(banned_domains.c.domain).where(banned_domains.c.domain.in_(sorted(candidates)))
    return sorted(conn.execute(query).scalars())


def parse_domain(given: Any) -> str:
    """A domain name as the list keeps it (lower case, no scheme or path); ValidationError otherwise."""
    text = given.strip().lower() if isinstance(given, str) else ""
    text = re.sub(r"^[a-z]+://", "", text).split("/")[0].removeprefix("www.").rstrip(".")
    if not _DOMAIN.match(text):
        raise ValidationError(errors=[field_error("domain", "Give a domain name, such as casino.example.")])
    return text


def ban(conn: Connection, actor: Actor, domain: str) -> bool:
    """Add `domain` (parsed already) to the list; False when it was there."""
    if conn.execute(select(banned_domains.c.domain).where(banned_domains.c.domain == domain)).first():
        return False
    conn.execute(insert(banned_domains).values(domain=domain, created=utcnow(), added_by=actor.email))
    audit.record(conn, actor, "domain.ban", "domain", domain)
    return True


def unban(conn: Connection, actor: Actor, domain: str) -> None:
    """Take `domain` off the list; NotFound when it is not on it."""
    if not conn.execute(delete(banned_domains).where(banned_domains.c.domain == domain)).rowcount:
        raise NotFound(f"{domain} is not on the list.")
    audit.record(conn, actor, "domain.unban", "domain", domain)


def findings(conn: Connection, settings: Settings, recid: int, owner_id: int, metadata: dict) -> list[dict]:
    """The rules record `recid` (being published by `owner_id`) meets: [{"rule", "message"}], empty when none."""
    found = []
    if settings.MODERATE_FIRST_DEPOSITS and not _has_approved(conn, owner_id, recid):
        found.append({"rule": "first_deposit", "message": "The first publication of a new account."})
    hits = _banned_hit(conn, link_hosts(metadata))
    if hits:
        found.append({"rule": "banned_domain", "message": "Links to a banned domain: " + ", ".join(hits) + "."})
    if settings.MODERATION_BURST_RECORDS:
        since = utcnow() - timedelta(minutes=settings.MODERATION_BURST_MINUTES)
        recent = conn.execute(select(func.count()).select_from(records).where(
            records.c.owner_id == owner_id, records.c.created >= since)).scalar() or 0
        if recent >= settings.MODERATION_BURST_RECORDS:
            found.append({"rule": "burst", "message": f"The owner published {recent} records within "
                                                      f"{settings.MODERATION_BURST_MINUTES} minutes."})
    share = links_share(str(metadata.get("description") or ""))
    if settings.MODERATION_LINKS_PERCENT and share >= settings.MODERATION_LINKS_PERCENT:
        found.append({"rule": "links", "message": f"Links make up {share}% of the description."})
    return found


def _has_approved(conn: Connection, owner_id: int, recid: int) -> bool:
    """Whether `owner_id` holds another record that is public (approved, or never held)."""
    query = select(records.c.id).where(records.c.owner_id == owner_id, records.c.id != recid,
                                       records.c.review.is_(None), records.c.deleted.is_(None)).limit(1)
    return conn.execute(query).first() is not None
