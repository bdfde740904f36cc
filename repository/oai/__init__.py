"""OAI-PMH 2.0: `handle(args, ...)` answers one request with the response document and its HTTP status."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from werkzeug.datastructures import MultiDict

from repository.config import Settings
from repository.oai import response
from repository.oai.args import single_values
from repository.oai.errors import OaiError
from repository.oai.verbs import VERBS, Context
from repository.storage import Database

__all__ = ["handle", "OaiError", "VERBS"]


def handle(
    args: MultiDict, db: Database, settings: Settings, secret: bytes, clock: Callable[[], datetime]
) -> tuple[bytes, int]:
    """The response document for one request's arguments, and its HTTP status (200, or 422 for a bad token)."""
    with db.read() as conn:
        ctx = Context(conn, db, settings, secret, clock)
        echoed: dict[str, str] = {}
        root = None
        try:
            values = single_values(args)
            verb = VERBS.get(values.get("verb", ""))
            if verb is None:
                raise OaiError("badVerb", "The verb argument is missing or is not an OAI-PMH verb.")
            verb.check(values)
            echoed = values
            root = response.envelope(ctx.now, ctx.base_url, echoed)
            verb.build(ctx, values, root)
        except OaiError as exc:
            root = response.envelope(ctx.now, ctx.base_url, echoed if exc.echoes_arguments else {})
            response.error(root, exc.code, exc.message)
            return response.to_bytes(root), exc.status
        return response.to_bytes(root, ctx.records), 200
