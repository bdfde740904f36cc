"""`/oai2d`: the OAI-PMH 2.0 endpoint (GET, and POST with a form-encoded body), with its own rate limit."""

from __future__ import annotations

from flask import Blueprint, Flask, Response, request

from repository.config import Settings
from repository.oai import handle
from repository.oai.response import MIMETYPE
from repository.web.openapi import doc
from repository.web.ratelimit import RateLimiter
from repository.web.request import services

bp = Blueprint("oai", __name__)

PARAMETERS = [
    {"name": name, "in": "query", "schema": {"type": "string"}, "description": text}
    for name, text in (
        ("verb", "Identify, ListMetadataFormats, ListSets, ListIdentifiers, ListRecords or GetRecord"),
        ("metadataPrefix", "oai_registry, oai_registry3, oai_registry4, registry, registry3, oai_dc, marc21 "
                           "(or the aliases oai_datacite, oai_datacite3, oai_datacite4, datacite, datacite3, "
                           "datacite4, marcxml)"),
        ("identifier", "oai:<host>:<record id>"),
        ("set", "user-<community> or type-<upload type>[-<subtype>]"),
        ("from", "YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ, inclusive"),
        ("until", "YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ, inclusive"),
        ("resumptionToken", "from the previous page; expires 2 minutes after issue, replayable until then"),
    )
]  # fmt: skip


@bp.route("/oai2d", methods=["GET", "POST"])
@doc(
    tags=["oai"],
    parameters=PARAMETERS,
    request={"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}}},
    responses={
        "200": {"description": "OAI-PMH response (protocol errors too)", "content": {"text/xml": {}}},
        "422": {
            "description": "badResumptionToken: the token is expired or invalid",
            "content": {"text/xml": {}},
        },
        "429": {"description": "Rate limit exceeded"},
    },
)
def endpoint() -> Response:
    """OAI-PMH 2.0 harvesting: all six verbs, every metadata format of the registry, community and type sets."""
    s = services()
    args = (request.form if request.method == "POST" else request.args).copy()
    args.poplist("access_token")  # the service's own authentication parameter is not an OAI argument
    body, status = handle(args, s.db, s.settings, s.secret, s.clock)
    return Response(body, status=status, content_type=MIMETYPE)


def install_limits(app: Flask, limiter: RateLimiter, settings: Settings) -> None:
    """The endpoint's own limit (RATELIMIT_OAI), instead of the application-wide ones (call after registering)."""
    limiter.limit(settings.RATELIMIT_OAI)(bp)
    limiter.exempt(bp)
