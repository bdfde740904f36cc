"""The six verbs as a table: each has one argument schema and one builder that fills the verb's element."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from lxml import etree
from sqlalchemy import Connection

from repository import urls
from repository.communities import inclusions
from repository.config import Settings
from repository.oai import listing, response, sets, tokens
from repository.oai.args import check_names, check_set, date_range, datestamp
from repository.oai.errors import OaiError, bad_argument
from repository.oai.response import q
from repository.records import renditions
from repository.records.render_context import render_context
from repository.storage import Database
from serializers import OAI_FORMATS, OaiFormat, oai_format
from serializers.context import RenderContext
from serializers.oai import XSI, metadata_renderer, rendition_name
from serializers.text import sub

OAI_IDENTIFIER_NS = "http://www.openarchives.org/OAI/2.0/oai-identifier"
OAI_IDENTIFIER_SCHEMA = "http://www.openarchives.org/OAI/2.0/oai-identifier.xsd"
# What the oai-identifier description allows as a repository identifier (a domain name with a dot).
_MAX_ID = 2**31 - 1  # record ids are 32-bit integers in PostgreSQL: a larger one would be a database error
_DOMAIN = re.compile(r"[a-zA-Z][a-zA-Z0-9\-]*(\.[a-zA-Z][a-zA-Z0-9\-]*)+")


@dataclass
class Context:
    """What a builder needs: the connection, settings, signing key and the (injectable) clock; `records` holds
    the page's metadata bodies, serialized, for `response.to_bytes`."""

    conn: Connection
    db: Database
    settings: Settings
    secret: bytes
    clock: Callable[[], datetime]
    now: datetime = field(init=False)
    records: list[bytes] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.now = self.clock().replace(microsecond=0)

    @property
    def base_url(self) -> str:
        return urls.oai(self.settings.BASE_URL)

    @cached_property
    def _identifier_prefix(self) -> str:
        return f"oai:{self.settings.oai_host}:"  # parsed from BASE_URL: once per request, not once per record

    def identifier(self, recid: int) -> str:
        return f"{self._identifier_prefix}{recid}"

    @cached_property
    def render(self) -> RenderContext:
        return render_context(self.settings, self.db)

    def metadata(self, fmt: OaiFormat, rows: list[dict]) -> dict[int, bytes]:
        """record id -> its `<metadata>` body in `fmt`, for the live rows (stored renditions when current)."""
        render = metadata_renderer(fmt)
        name = rendition_name(fmt)
        return renditions.bodies(self.conn, self.db, self.settings, self.render, rows, name, render)


Builder = Callable[[Context, dict[str, str], etree._Element], None]


@dataclass(frozen=True)
class Verb:
    """A verb's arguments (resumptionToken is exclusive when allowed) and its builder."""

    build: Builder
    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    resumable: bool = False

    def check(self, args: dict[str, str]) -> None:
        if self.resumable and "resumptionToken" in args:
            # The token carries the query: other arguments are only tolerated when they repeat it (read_state).
            check_names(args, frozenset(), self.required | self.optional | {"resumptionToken"})
        else:
            check_names(args, self.required, self.optional)


def _format(prefix: str) -> OaiFormat:
    fmt = oai_format(prefix)
    if fmt is None:
        raise OaiError("cannotDisseminateFormat", f"The metadata format {prefix!r} is not supported.")
    return fmt


def _record_id(ctx: Context, identifier: str) -> int:
    scheme, _, rest = identifier.partition(":")
    host, _, recid = rest.rpartition(":")
    if scheme != "oai" or host != ctx.settings.oai_host or not (recid.isascii() and recid.isdigit()) \
            or len(recid) > 18 or int(recid) > _MAX_ID:
        raise OaiError("idDoesNotExist", f"No record has the identifier {identifier!r}.")
    return int(recid)


def _row(ctx: Context, identifier: str) -> dict:
    row = listing.get_header_row(ctx.conn, _record_id(ctx, identifier))
    if row is None:
        raise OaiError("idDoesNotExist", f"No record has the identifier {identifier!r}.")
    return row


def identify(ctx: Context, args: dict[str, str], parent: etree._Element) -> None:
    element = sub(parent, q("Identify"))
    settings = ctx.settings
    sub(element, q("repositoryName"), settings.REPOSITORY_NAME)
    sub(element, q("baseURL"), ctx.base_url)
    sub(element, q("protocolVersion"), "2.0")
    sub(element, q("adminEmail"), settings.ADMIN_EMAIL)
    earliest = listing.earliest_datestamp(ctx.conn) or ctx.now
    sub(element, q("earliestDatestamp"), datestamp(earliest))
    sub(element, q("deletedRecord"), "persistent")
    sub(element, q("granularity"), "YYYY-MM-DDThh:mm:ssZ")
    if _DOMAIN.fullmatch(settings.oai_host):  # the description's schema wants a domain name, not localhost
        description = sub(element, q("description"))
        ident = etree.SubElement(
            description, f"{{{OAI_IDENTIFIER_NS}}}oai-identifier",
            {f"{{{XSI}}}schemaLocation": f"{OAI_IDENTIFIER_NS} {OAI_IDENTIFIER_SCHEMA}"},
            nsmap={None: OAI_IDENTIFIER_NS, "xsi": XSI},
        )  # fmt: skip
        for name, value in (
            ("scheme", "oai"),
            ("repositoryIdentifier", settings.oai_host),
            ("delimiter", ":"),
            ("sampleIdentifier", ctx.identifier(1)),
        ):
            sub(ident, f"{{{OAI_IDENTIFIER_NS}}}{name}", value)


def list_metadata_formats(ctx: Context, args: dict[str, str], parent: etree._Element) -> None:
    if "identifier" in args:
        _row(ctx, args["identifier"])  # every record, tombstones too, has every format
    element = sub(parent, q("ListMetadataFormats"))
    # Every prefix served, each format followed by its aliases (the reference system's names): harvesters pick
    # a format from this list by the names they know.
    for fmt in OAI_FORMATS.values():
        for prefix in (fmt.prefix, *fmt.aliases):
            item = sub(element, q("metadataFormat"))
            sub(item, q("metadataPrefix"), prefix)
            sub(item, q("schema"), fmt.schema)
            sub(item, q("metadataNamespace"), fmt.namespace)


def list_sets(ctx: Context, args: dict[str, str], parent: etree._Element) -> None:
    token = args.get("resumptionToken")
    state = tokens.read(token, ctx.secret, "ListSets", ctx.clock) if token is not None else None
    size = ctx.settings.OAI_PAGE_SIZE
    found = sets.list_sets(ctx.conn, state.after[0] if state else None, size + 1)
    more, found = len(found) > size, found[:size]
    element = sub(parent, q("ListSets"))
    for oai_set in found:
        item = sub(element, q("set"))
        sub(item, q("setSpec"), oai_set.spec)
        sub(item, q("setName"), oai_set.name)
        if oai_set.description:
            response.dublin_core(sub(item, q("setDescription")), oai_set.description)
    if not (more or state):
        return
    total = state.size if state else sets.count_sets(ctx.conn)
    cursor = state.cursor if state else 0
    nxt = (
        tokens.Token(None, None, None, None, (found[-1].spec,), total, cursor + len(found)) if more else None
    )
    _resumption(ctx, element, "ListSets", nxt, total, cursor)


def _resumption(
    ctx: Context, element: etree._Element, verb: str, nxt: tokens.Token | None, total: int, cursor: int
) -> None:
    value = tokens.issue(nxt, ctx.secret, verb, ctx.now) if nxt else None
    response.resumption(element, value, tokens.expires(ctx.now) if nxt else None, total, cursor)


def _read_state(ctx: Context, args: dict[str, str], verb: str) -> tokens.Token:
    state = tokens.read(args["resumptionToken"], ctx.secret, verb, ctx.clock)
    for name, value in state.query().items():
        if name in args and args[name] != value:
            raise bad_argument(
                f"The argument {name!r} differs from the resumptionToken's; send the token alone."
            )
    return state


def _list(ctx: Context, args: dict[str, str], parent: etree._Element, verb: str) -> None:
    """ListIdentifiers and ListRecords: one page after the token's cursor."""
    state = _read_state(ctx, args, verb) if "resumptionToken" in args else None
    query = (
        state.query()
        if state
        else {name: args.get(name) for name in ("metadataPrefix", "set", "from", "until")}
    )
    try:
        check_set(query["set"])
        dates = date_range(query["from"], query["until"])
        fmt = _format(query["metadataPrefix"] or "")
    except OaiError:
        if state:  # signed, yet not a query this service would have started a list with
            raise tokens.bad_token() from None
        raise
    where = listing.conditions(query["set"], dates)
    size = ctx.settings.OAI_PAGE_SIZE
    after = (datetime.fromisoformat(state.after[0]), int(state.after[1])) if state else None
    rows = listing.page(ctx.conn, where, after, size + 1) if where is not None else []
    more, rows = len(rows) > size, rows[:size]
    if not rows:
        raise OaiError("noRecordsMatch", "No records match the request.")
    element = sub(parent, q(verb))
    accepted = inclusions.accepted_communities(ctx.conn, list({row["conceptrecid"] for row in rows}))
    whole = verb == "ListRecords"
    bodies = ctx.metadata(fmt, rows) if whole else {}
    for row in rows:
        _record(ctx, element, row, accepted[row["conceptrecid"]], bodies.get(row["id"]), whole)
    if not (more or state):
        return
    total = state.size if state else listing.count(ctx.conn, where or [])
    cursor = state.cursor if state else 0
    last = rows[-1]
    nxt = tokens.Token(
        query["metadataPrefix"], query["set"], query["from"], query["until"],
        (last["updated"].isoformat(), str(last["id"])), total, cursor + len(rows),
    ) if more else None  # fmt: skip
    _resumption(ctx, element, verb, nxt, total, cursor)


def _record(ctx: Context, parent: etree._Element, row: dict, accepted: list[str], body: bytes | None,
            whole: bool = True) -> None:
    """A `<record>` (its header and, unless a tombstone, its metadata), or the header alone (`whole=False`)."""
    specs = sets.record_sets({name: row[name] for name in sets.TYPE_FIELDS}, accepted)
    # A record hidden while reviewed shows as deleted: harvesters drop their copy, and take it again when its
    # datestamp moves on release (docs/operators/moderation.md#oai-pmh).
    gone = row["deleted"] is not None or row["review"] is not None
    header = response.header(ctx.identifier(row["id"]), row["updated"], specs, gone)
    response.slot(parent, ctx.records, response.record(header, None if gone else body) if whole else header)


def list_identifiers(ctx: Context, args: dict[str, str], parent: etree._Element) -> None:
    _list(ctx, args, parent, "ListIdentifiers")


def list_records(ctx: Context, args: dict[str, str], parent: etree._Element) -> None:
    _list(ctx, args, parent, "ListRecords")


def get_record(ctx: Context, args: dict[str, str], parent: etree._Element) -> None:
    fmt = _format(args["metadataPrefix"])
    row = _row(ctx, args["identifier"])
    accepted = inclusions.accepted_communities(ctx.conn, [row["conceptrecid"]])[row["conceptrecid"]]
    _record(ctx, sub(parent, q("GetRecord")), row, accepted, ctx.metadata(fmt, [row]).get(row["id"]))  # tombstones: None


_LIST_ARGS = frozenset({"set", "from", "until"})
VERBS: dict[str, Verb] = {
    "Identify": Verb(identify),
    "ListMetadataFormats": Verb(list_metadata_formats, optional=frozenset({"identifier"})),
    "ListSets": Verb(list_sets, optional=frozenset({"resumptionToken"})),
    "ListIdentifiers": Verb(list_identifiers, frozenset({"metadataPrefix"}), _LIST_ARGS, resumable=True),
    "ListRecords": Verb(list_records, frozenset({"metadataPrefix"}), _LIST_ARGS, resumable=True),
    "GetRecord": Verb(get_record, frozenset({"identifier", "metadataPrefix"})),
}
