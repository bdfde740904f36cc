"""Run the WSGI app in a thread pool behind an asyncio front that first reads each request off the network.

A thread is taken only once a request's headers and its body (up to `buffer_bytes`) have arrived, so clients
that trickle headers or a small body cost a socket and a little memory, never a thread. Larger bodies (uploads)
stream to the app as they arrive, at most `streams` at a time per process, so slow uploads cannot take every
thread either. Responses are produced in a thread about `buffer_bytes` at a time and written by the event loop, so a client that
reads slowly holds no thread either; one that reads nothing for `timeout` seconds is cut off.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote_to_bytes

import orjson
from werkzeug.exceptions import ClientDisconnected

Message = MutableMapping[str, Any]  # what gunicorn's ASGI types say
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

BUFFER_BYTES = 256 * 1024
FETCH_BYTES = 1024 * 1024  # what a read of the whole rest, or of a line, asks the event loop for at a time
MIN_FETCH_BYTES = 64 * 1024
# The fields the app gives the request's access line (request id, user id, route: repository/web/logs.py), read by
# gunicorn's logger (repository/serving/logs.py) in the connection's task, once the response is sent.
LOG_FIELDS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("log_fields", default=None)
LOG_FIELDS_KEY = "repository.log_fields"  # their dict in the WSGI environ
# Also among them, for the access line of a request whose client left before its answer (logs.Logger): the status
# the app answered, and whether the client left while the request itself was still arriving.
APP_STATUS, CLIENT_CLOSED = "app_status", "client_closed"


class _Timeout(Exception):
    """The client did not send or read in time."""


class RequestBody:
    """`wsgi.input`: the buffered start of the body, then chunks fetched from the event loop as the app reads."""

    def __init__(self, buffered: bytes, more: bool, fetch: Callable[[int], tuple[bytes, bool]]) -> None:
        self._buffer = bytearray(buffered)
        self._more = more
        self._fetch = fetch

    def _fill(self, size: int) -> None:
        while self._more and (size < 0 or len(self._buffer) < size):
            # One trip to the event loop per read, not per network chunk (TLS records are 16 KB).
            wanted = size - len(self._buffer) if size >= 0 else FETCH_BYTES
            chunk, self._more = self._fetch(max(wanted, MIN_FETCH_BYTES))
            self._buffer += chunk

    def read(self, size: int | None = -1) -> bytes:
        size = -1 if size is None else size
        if size >= MIN_FETCH_BYTES and not self._buffer and self._more:
            # An upload's large reads: the fetched bytes as they come, never more than asked (the front splits a
            # piece that would overshoot), with no copy through the buffer. Three copies of every byte fewer: py-spy
            # had this method among a part upload's top costs.
            chunk, self._more = self._fetch(size)
            return chunk
        self._fill(size)
        if size < 0 or size >= len(self._buffer):
            data = bytes(self._buffer)
            self._buffer.clear()
            return data
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def readline(self, size: int | None = -1) -> bytes:
        size = -1 if size is None else size
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0 or not self._more or 0 <= size <= len(self._buffer):
                break
            self._fill(len(self._buffer) + 1)
        cut = end + 1 if end >= 0 else len(self._buffer)
        if size >= 0:
            cut = min(cut, size)
        data = bytes(self._buffer[:cut])
        del self._buffer[:cut]
        return data

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")


def build_environ(scope: Message, body: RequestBody) -> dict[str, Any]:
    """The WSGI environ of an ASGI HTTP scope, as gunicorn's own workers build it."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
    query = scope.get("query_string", b"")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(raw_path).decode("latin-1"),
        "QUERY_STRING": query.decode("latin-1"),
        "RAW_URI": (raw_path + (b"?" + query if query else b"")).decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "REMOTE_ADDR": str(client[0]),
        "REMOTE_PORT": str(client[1]),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        # The front has de-chunked and delimited the body: werkzeug may read it to its end.
        "wsgi.input_terminated": True,
    }
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        key = name if name in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + name
        value = raw_value.decode("latin-1")
        if key in environ:
            value = environ[key] + ("; " if key == "HTTP_COOKIE" else ",") + value
        environ[key] = value
    return environ


def error_response(status: int, message: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The service's error object, for answers given before the app is reached."""
    body = orjson.dumps({"message": message, "status": status})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    return status, headers, body


class WSGIFront:
    """An ASGI application running `app` (WSGI) in `threads` threads once each request has been read."""

    def __init__(self, app: Callable, threads: int, timeout: float = 30.0, buffer_bytes: int = BUFFER_BYTES,
                 streams: int | None = None) -> None:
        self.app = app
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="wsgi")
        self.timeout = timeout
        self.buffer_bytes = buffer_bytes
        self.streams = streams or max(1, threads // 2)
        self._stream_slots: asyncio.Semaphore | None = None

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _http(self, scope: Message, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        fields: dict[str, Any] = {}
        LOG_FIELDS.set(fields)  # a new dict for each request of a kept-alive connection
        scope[LOG_FIELDS_KEY] = fields
        try:
            async with asyncio.timeout(2 * self.timeout):
                head, more = await self._read_start(receive)
        except TimeoutError:
            await _send_error(send, 408, f"The request body did not arrive within {2 * self.timeout:g} s.")
            return
        except ClientDisconnected:
            fields[CLIENT_CLOSED] = True  # gunicorn logs a request it was never answered as a 500
            return

        leftover: list[bytes] = []  # the rest of a piece split at the end of a fetch: the start of the next one
        arriving = True  # whether the client has more of the body to send

        async def next_chunk(wanted: int) -> tuple[bytes, bool]:
            """Up to `wanted` bytes (fewer only at the end of the body) and whether more is to come."""
            nonlocal arriving
            parts = leftover[:]
            leftover.clear()
            size = sum(map(len, parts))
            while arriving and size < wanted:
                try:
                    message = await asyncio.wait_for(receive(), self.timeout)
                except TimeoutError:
                    raise ClientDisconnected("The request body stopped arriving.") from None
                if message["type"] != "http.request":
                    raise ClientDisconnected("The client went away before the end of the request body.")
                parts.append(message.get("body", b""))
                size += len(parts[-1])
                arriving = message.get("more_body", False)
            if size > wanted:
                last = parts.pop()
                keep = len(last) - (size - wanted)
                parts.append(last[:keep])
                leftover.append(last[keep:])
            return b"".join(parts), arriving or bool(leftover)

        def fetch(wanted: int) -> tuple[bytes, bool]:
            return asyncio.run_coroutine_threadsafe(next_chunk(wanted), loop).result()

        body = RequestBody(head, more, fetch)
        if not more:
            await self._respond(scope, body, send, loop)
            return
        if self._stream_slots is None:
            self._stream_slots = asyncio.Semaphore(self.streams)
        async with self._stream_slots:
            await self._respond(scope, body, send, loop)

    async def _read_start(self, receive: Receive) -> tuple[bytes, bool]:
        """The body up to `buffer_bytes`, read in the event loop; and whether more is to come."""
        parts: list[bytes] = []
        size, more = 0, True
        while more and size < self.buffer_bytes:
            message = await receive()
            if message["type"] != "http.request":
                raise ClientDisconnected()
            chunk = message.get("body", b"")
            parts.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
        return b"".join(parts), more

    async def _respond(self, scope: Message, body: RequestBody, send: Send, loop: asyncio.AbstractEventLoop) -> None:
        """Run the app in a thread; send its answer from the event loop, so no thread waits for a slow reader."""
        call = _Call(self.app, self.buffer_bytes)
        environ = build_environ(scope, body)
        fields = environ[LOG_FIELDS_KEY] = scope.setdefault(LOG_FIELDS_KEY, {})  # `_http` put it there
        following: asyncio.Future[tuple[list[bytes], bool]] | None = None
        try:
            status, headers, chunks, done = await loop.run_in_executor(self.executor, call.start, environ)
            await self._send(send, {"type": "http.response.start", "status": status, "headers": headers})
            # Handed over without error: written, or dropped by gunicorn because the client is gone (logs.Logger
            # then logs 499). An answer gunicorn refused (it raises) stays the 500 it logs.
            fields[APP_STATUS] = status
            while True:
                # The next batch is made in a thread while the loop encrypts and writes this one: a file read from
                # a cold disk then overlaps the sending instead of alternating with it (bench/archive_bench.py: the
                # whole-record archive over TLS about 10% faster). One batch ahead at most.
                following = None if done else loop.run_in_executor(self.executor, call.more)
                await self._send(send, {"type": "http.response.body", "body": b"".join(chunks), "more_body": not done})
                if following is None:
                    break
                chunks, done = await following
                following = None
        except _Timeout:
            fields[CLIENT_CLOSED] = True  # not reading: if nothing was written, gunicorn would log its own 500
            return  # the response stays incomplete
        finally:
            if following is not None:  # a batch still being made: the app's steps run one at a time, close last
                with contextlib.suppress(Exception):
                    await following
            await loop.run_in_executor(self.executor, call.close)

    async def _send(self, send: Send, message: Message) -> None:
        try:
            await asyncio.wait_for(send(message), self.timeout)
        except TimeoutError:
            raise _Timeout() from None


class _Call:
    """One application call; its steps run in worker threads, one at a time, in one context."""

    def __init__(self, app: Callable, batch_bytes: int) -> None:
        self.app, self.batch_bytes = app, batch_bytes
        self.context = contextvars.copy_context()
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []
        self.result: Iterable[bytes] | None = None
        self.iterator: Iterator[bytes] = iter(())  # the body's chunks, once the app is called

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable:
        self.status = int(status.split(" ", 1)[0])
        self.headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        return self._write_unsupported

    @staticmethod
    def _write_unsupported(data: bytes) -> None:
        raise RuntimeError("the write() callable of start_response is not supported")

    def start(self, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], list[bytes], bool]:
        """Call the app: its status, headers, the first chunks of its body and whether that is all of it."""
        return self.context.run(self._start, environ)

    def _start(self, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], list[bytes], bool]:
        self.result = self.app(environ, self.start_response)
        self.iterator = iter(self.result)
        chunks, done = self._batch()
        return self.status, self.headers, chunks, done

    def more(self) -> tuple[list[bytes], bool]:
        """The next chunks of the body (about `batch_bytes`) and whether they end it."""
        return self.context.run(self._batch)

    def _batch(self) -> tuple[list[bytes], bool]:
        chunks: list[bytes] = []
        size = 0
        for chunk in self.iterator:
            chunks.append(chunk)
            size += len(chunk)
            if size >= self.batch_bytes:
                return chunks, False
        return chunks, True

    def close(self) -> None:
        close = getattr(self.result, "close", None)
        if close is not None:
            self.context.run(close)


async def _send_error(send: Send, status: int, message: str) -> None:
    status, headers, body = error_response(status, message)
    with contextlib.suppress(Exception):
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
