"""Keep access tokens out of every log line: `?access_token=` values (in URLs, referers, error texts) and
`Authorization` header values are replaced before any handler sees the record."""

from __future__ import annotations

import logging
import re
from typing import Any

from gunicorn.config import Config
from gunicorn.glogging import Logger as GunicornLogger

REDACTED = "[redacted]"
_TOKEN = re.compile(r"((?:^|[?&;\s\"'])access_token(?:=|%3D))[^&;\s\"']*", re.IGNORECASE)
_BEARER = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with access-token values replaced."""
    if "access_token" not in text.lower() and "bearer" not in text.lower():
        return text
    return _BEARER.sub(r"\1" + REDACTED, _TOKEN.sub(r"\1" + REDACTED, text))


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
    """gunicorn's logger (`--logger-class repository.serving.logs.Logger`) with access tokens redacted."""

    def setup(self, cfg: Config) -> None:
        install_redaction()
        super().setup(cfg)
