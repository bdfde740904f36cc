"""Keep access tokens out of every log line: `?access_token=` values (`token`, `password` and `client_secret`
too; in URLs, referers, error texts) and `Authorization` header values are replaced before any handler sees the
record. gunicorn's access line also gets the app's request fields, and JSON with LOG_FORMAT=json."""

from __future__ import annotations

import logging
import os
import re
import traceback
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import unquote

from gunicorn.config import Config
from gunicorn.glogging import Logger as GunicornLogger

from repository.config import Settings
from repository.serving.adapter import APP_STATUS, CLIENT_CLOSED, LOG_FIELDS
from repository.web.logs import json_formatter

REDACTED = "[redacted]"
# The access line's status for a request whose client left before its answer was written, as nginx logs it.
# gunicorn logs those as 500 with no byte sent (it answers a request the app did not, and ignores the answer of an
# app whose client is gone): an operator would read a server error, and every benchmark run stopping its
# connections mid-request left a few.
CLIENT_CLOSED_REQUEST = 499
# Query parameters whose values are secrets: a token in the URL, and a password a client put there by mistake;
# matched on the key as the app decodes it (`access%5Ftoken` is access_token).
_SECRET_KEYS = frozenset(("access_token", "token", "password", "client_secret"))
_PARAMETER = re.compile(r"((?:^|[?&;\s\"'])([^=&;\s\"'?]+)(?:=|%3D))([^&;\s\"']*)", re.IGNORECASE)
_BEARER = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
# Pages whose last path segment is a one-time secret: password reset, the e-mail confirmations (sign-up, a new
# address, a guest's access request, an OpenID Connect address).
_PATH_TOKEN = re.compile(r"(/(?:account/(?:reset|confirm|confirm-email)|records/\d+/access/confirm|"
                         r"login/oidc/confirm)/)(?!<)[^/?#&;\s\"']+")  # not the route's own <token>
_HINTS = ("token", "bearer", "password", "secret", "%", "confirm", "reset")


def _parameter(match: re.Match[str]) -> str:
    key = unquote(match.group(2)).lower()
    return match.group(1) + REDACTED if key in _SECRET_KEYS else match.group(0)


def redact(text: str) -> str:
    """`text` with access-token values (query parameters, path tokens, Bearer headers) replaced."""
    lowered = text.lower()
    if not any(hint in lowered for hint in _HINTS):
        return text
    text = _PATH_TOKEN.sub(r"\1" + REDACTED, text)
    return _BEARER.sub(r"\1" + REDACTED, _PARAMETER.sub(_parameter, text))


def install_redaction() -> None:
    """Redact every log record of this process when it is created (idempotent)."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "redacting", False):
        return

    def make_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format is the handler's to report, as without this factory
            return record
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return record

    make_record.redacting = True  # type: ignore[attr-defined]  # a marker on the function, read by getattr above
    logging.setLogRecordFactory(make_record)


class Logger(GunicornLogger):
    """gunicorn's logger (`--logger-class repository.serving.logs.Logger`) with access tokens redacted, the app's
    request id, user id and route on each access line (`%(request_id)s`, `%(user_id)s`, `%(route)s` in
    `access_log_format`), a request whose client left before its answer logged as 499 (not gunicorn's 500), and
    JSON lines with LOG_FORMAT=json."""

    log_format = "text"

    def setup(self, cfg: Config) -> None:
        install_redaction()
        super().setup(cfg)
        self.log_format = Settings.from_env().LOG_FORMAT
        if self.log_format == "json":
            for log in (self.error_log, self.access_log):
                for handler in log.handlers:
                    handler.setFormatter(json_formatter())

    def atoms(self, resp: Any, req: Any, environ: MutableMapping[str, Any], request_time: Any) -> Any:
        atoms: dict[str, Any] = dict(super().atoms(resp, req, environ, request_time))
        fields = LOG_FIELDS.get() or {}
        atoms["request_id"] = fields.get("request_id") or atoms.get("{x-request-id}o") or "-"
        atoms["user_id"] = fields.get("user_id") or "-"
        atoms["route"] = fields.get("route") or "-"
        gone = fields.get(CLIENT_CLOSED) or fields.get(APP_STATUS) not in (None, 500)
        if str(atoms.get("s")) == "500" and not getattr(resp, "sent", None) and gone:
            atoms["s"] = CLIENT_CLOSED_REQUEST
        return atoms

    def access(self, resp: Any, req: Any, environ: MutableMapping[str, Any], request_time: Any) -> None:
        if self.log_format != "json":
            super().access(resp, req, environ, request_time)
            return
        if not self.access_log_enabled:
            return
        try:
            atoms = self.atoms(resp, req, environ, request_time)
            fields = {
                "request_id": _dash_none(atoms["request_id"]), "user_id": _dash_none(atoms["user_id"]),
                "route": _dash_none(atoms["route"]), "method": atoms["m"], "path": redact(atoms["U"] or ""),
                "query": redact(atoms["q"] or ""), "status": int(atoms["s"]), "bytes": atoms["B"],
                "duration_ms": atoms["M"], "remote_addr": atoms["h"], "referer": redact(atoms["f"]),
                "user_agent": atoms["a"], "pid": os.getpid(),
            }
            self.access_log.info("%s %s %s", atoms["m"], fields["path"], atoms["s"], extra=fields)
        except Exception:  # noqa: BLE001 - as gunicorn's own access(): a log line never fails a request
            self.error(traceback.format_exc())


def _dash_none(value: Any) -> Any:
    return None if value == "-" else value
