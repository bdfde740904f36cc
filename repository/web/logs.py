"""Log lines as text or JSON (LOG_FORMAT), each line written for a request carrying its request id, user id and
route; used by `create_app`, the scripts' preamble and gunicorn's logger (repository/serving/logs.py).

Tokens never reach a line: the record factory of repository/serving/logs.py redacts every message, and the fields
added here are the request id, a user's number and a route template, never a URL. Bodies (passwords) are never
logged at all.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, g, has_request_context, request
from pythonjsonlogger.json import JsonFormatter

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
REQUEST_FIELDS = ("request_id", "user_id", "route")
# The WSGI environ key under which the server (repository/serving/adapter.py) hands the app a dict to fill with the
# request's fields, which gunicorn's access line then carries.
ENVIRON_FIELDS = "repository.log_fields"


def request_fields() -> dict[str, Any]:
    """The current request's id, user id (once the caller is known; never looked up here) and route template;
    empty outside a request."""
    if not has_request_context():
        return {}
    identity = g.get("identity")
    rule = request.url_rule
    return {"request_id": g.get("request_id"), "user_id": getattr(identity, "user_id", None),
            "route": rule.rule if rule is not None else None}


class RequestFields(logging.Filter):
    """Adds request_id, user_id and route to each record (None outside a request), for both formats."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = request_fields()
        for name in REQUEST_FIELDS:
            if not hasattr(record, name):
                setattr(record, name, fields.get(name))
        return True


class TextFormatter(logging.Formatter):
    """`time level logger message`, then `[request=… user=… route=…]` on lines written for a request."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = getattr(record, "request_id", None)
        if request_id is None:
            return line
        return (f"{line} [request={request_id} user={getattr(record, 'user_id', None) or '-'} "
                f"route={getattr(record, 'route', None) or '-'}]")


def json_formatter() -> logging.Formatter:
    """One JSON object a line: time (ISO 8601, UTC), level, logger, message, the extra fields of the record
    (request_id, user_id, route...) and exc_info when there is one."""
    return JsonFormatter("{levelname}{name}{message}", style="{", timestamp="time",
                         rename_fields={"levelname": "level", "name": "logger"})


def formatter(log_format: str) -> logging.Formatter:
    return json_formatter() if log_format == "json" else TextFormatter(TEXT_FORMAT)


def configure_logging(level: str, log_format: str) -> None:
    """Log at `level` on stderr in `log_format` (text or json) through one handler of the root logger. As
    logging.basicConfig did before: a root logger that already has other handlers (a test runner's) is left as it
    is; called again, the handler takes the new format."""
    root = logging.getLogger()
    ours = [h for h in root.handlers if getattr(h, "repository", False)]
    if not ours and root.handlers:
        return
    root.setLevel(level.upper())
    handler = ours[0] if ours else logging.StreamHandler()
    handler.repository = True  # type: ignore[attr-defined]  # a marker: this module's handler
    handler.setFormatter(formatter(log_format))
    if not any(isinstance(f, RequestFields) for f in handler.filters):
        handler.addFilter(RequestFields())
    if not ours:
        root.addHandler(handler)


def install(app: Flask) -> None:
    """Hand the request's fields to the server's access line (when the server asks for them)."""

    @app.after_request
    def note_fields(response: Response) -> Response:
        target = request.environ.get(ENVIRON_FIELDS)
        if isinstance(target, dict):
            target.update(request_fields())
        return response
