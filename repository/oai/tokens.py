"""Resumption tokens: a signed, stateless cursor that any server process can continue from.

A token names where the next page starts — the last (datestamp, id) seen, never an offset — plus the
list's filter and its size counted once. Nothing is kept on the server, so a token can be replayed (after a
network error, say) and gives the same page again, until it expires `LIFETIME` after issue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta

from itsdangerous import BadData, URLSafeSerializer

from repository.oai.args import SET_PATTERN
from repository.oai.errors import bad_token

__all__ = ["Token", "bad_token", "expires", "issue", "read"]

LIFETIME = timedelta(minutes=2)  # the specification's figure
_EPOCH = datetime(1970, 1, 1)


@dataclass(frozen=True)
class Token:
    """The state of a list after one page: its query, where the next page starts and how far we are."""

    prefix: str | None  # metadataPrefix (None for ListSets)
    set: str | None
    from_: str | None  # as the harvester gave them, so accompanying arguments can be compared
    until: str | None
    after: tuple[str, ...]  # sort key of the last item sent: (datestamp isoformat, id) or (setSpec,)
    size: int  # completeListSize, counted on the first page only
    cursor: int  # items sent before the next page
    issued: int = 0  # seconds since the epoch (UTC)

    def query(self) -> dict[str, str | None]:
        """The arguments of the request that started the list."""
        return {"metadataPrefix": self.prefix, "set": self.set, "from": self.from_, "until": self.until}


def _serializer(secret: bytes, verb: str) -> URLSafeSerializer:
    # The verb is the salt: a ListIdentifiers token is not accepted by ListRecords.
    return URLSafeSerializer(secret, salt=f"oai-pmh:{verb}")


def _seconds(moment: datetime) -> int:
    return int((moment.replace(tzinfo=None) - _EPOCH).total_seconds())


def issue(token: Token, secret: bytes, verb: str, now: datetime) -> str:
    """The signed token string, stamped with `now`."""
    payload = asdict(replace(token, issued=_seconds(now)))
    return _serializer(secret, verb).dumps(payload)


def expires(now: datetime) -> datetime:
    """When a token issued `now` stops being accepted."""
    return now.replace(microsecond=0) + LIFETIME


def read(value: str, secret: bytes, verb: str, clock: Callable[[], datetime]) -> Token:
    """The token's content; badResumptionToken (HTTP 422) when forged, for another verb, expired, or holding
    anything a token this service issues cannot hold (a signature only says who made it: anyone holding the
    secret can sign any JSON)."""
    try:
        payload = _serializer(secret, verb).loads(value)
    except BadData:
        raise bad_token() from None
    token = _token(payload, verb)
    if token is None:
        raise bad_token()
    age = _seconds(clock()) - token.issued
    if age > LIFETIME.total_seconds() or age < -60:  # a minute of clock skew between server processes
        raise bad_token()
    return token


_TEXT_FIELDS = ("prefix", "set", "from_", "until")
_COUNT_FIELDS = ("size", "cursor", "issued")
_MAX_COUNT = 2**62  # beyond any list or clock, and within every database's integers


def _token(payload: object, verb: str) -> Token | None:
    """The Token a payload describes, when it has exactly the fields, types and shapes `issue` writes."""
    if not isinstance(payload, dict) or set(payload) != {*_TEXT_FIELDS, *_COUNT_FIELDS, "after"}:
        return None
    if not all(payload[name] is None or isinstance(payload[name], str) for name in _TEXT_FIELDS):
        return None
    if not all(type(payload[name]) is int and 0 <= payload[name] < _MAX_COUNT for name in _COUNT_FIELDS):
        return None
    after = payload["after"]
    if not isinstance(after, list) or not all(isinstance(part, str) for part in after):
        return None
    if verb == "ListSets":
        if len(after) != 1 or not SET_PATTERN.fullmatch(after[0]) or \
                any(payload[name] is not None for name in _TEXT_FIELDS):
            return None
    elif len(after) != 2 or payload["prefix"] is None or not _cursor_ok(after[0], after[1]):
        return None
    return Token(**{**payload, "after": tuple(after)})


def _cursor_ok(stamp: str, recid: str) -> bool:
    """A list's position: a naive ISO datestamp and a record id in ASCII digits."""
    if not (recid.isascii() and recid.isdigit() and len(recid) <= 18):
        return False
    try:
        return datetime.fromisoformat(stamp).tzinfo is None
    except ValueError:
        return False
