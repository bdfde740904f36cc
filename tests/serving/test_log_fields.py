"""What the front tells the access log about an answer (repository.serving.adapter → logs.Logger): an answer handed to
the server carries the app's status, so a line gunicorn would write as "500 0" because the client had gone is
logged 499; an answer the server refused (it raised) carries none, so its 500 stays a 500."""

from __future__ import annotations

import asyncio
from typing import Any

from repository.serving.adapter import APP_STATUS, LOG_FIELDS_KEY, WSGIFront


def _app(environ: dict, start_response: Any) -> list[bytes]:
    start_response("201 Created", [("Content-Type", "text/plain")])
    return [b"made"]


def _scope() -> dict[str, Any]:
    return {"type": "http", "http_version": "1.1", "method": "GET", "scheme": "http", "path": "/", "raw_path": b"/",
            "query_string": b"", "root_path": "", "headers": [(b"host", b"127.0.0.1")],
            "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 50000)}


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


def _serve(send: Any) -> tuple[dict[str, Any], Exception | None]:
    """The log fields of one GET answered through `send` (an ASGI server's), and what the front raised."""
    scope = _scope()
    front = WSGIFront(_app, threads=1)
    error = None
    try:
        asyncio.run(front(scope, _receive, send))
    except RuntimeError as exc:
        error = exc
    finally:
        front.executor.shutdown()
    return scope[LOG_FIELDS_KEY], error


def test_an_answer_handed_over_carries_the_apps_status():
    async def gone(message: dict[str, Any]) -> None:  # gunicorn's send once the client has left: silently nothing
        return None

    fields, error = _serve(gone)
    assert error is None
    assert fields[APP_STATUS] == 201


def test_an_answer_the_server_refused_carries_no_status():
    async def refusing(message: dict[str, Any]) -> None:  # as gunicorn refuses a header it cannot write
        raise RuntimeError("invalid response header")

    fields, error = _serve(refusing)
    assert error is not None  # gunicorn logs the error and its 500
    assert APP_STATUS not in fields
