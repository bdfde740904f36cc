"""The gunicorn worker class the service runs under: `gunicorn -k repository.serving.worker.Worker 'app:create_app()'`.

gunicorn's asyncio worker reads and parses every connection in an event loop (TLS included); `WSGIFront` hands a
request to the thread pool only once it has arrived. On top of gunicorn's own protocol this adds a deadline for the
first request's headers (`HEADER_TIMEOUT`: gunicorn's keep-alive timeout already bounds the later ones) and
answers the server's own errors (400, 408, 414, 431, 501) with the service's JSON error object.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson
from gunicorn.asgi.protocol import ASGIProtocol
from gunicorn.config import Config
from gunicorn.glogging import Logger as GLogger
from gunicorn.workers.gasgi import ASGIWorker

from repository.serving.adapter import WSGIFront
from repository.serving.logs import install_redaction

HEADER_TIMEOUT = 10.0  # seconds from the connection (TLS handshake included) to the end of the request's headers
ACCEPT_WAIT_PER_CONNECTION = 0.0005  # seconds a worker waits before accepting, per connection it holds (`_accept`)
ACCEPT_WAIT_MAX = 0.002  # ... at most: 500 accepts a second per worker however many connections it holds
ACCEPT_RETRY = 0.1  # seconds before accepting again after the system refused (no file descriptor left)

MESSAGES = {
    400: "The request is malformed (request line, headers or chunked body).",
    408: f"The request headers did not arrive within {HEADER_TIMEOUT:g} s.",
    414: "The request line (method, URL and version) is too long.",
    431: "The request has too many headers, or one that is too large.",
    501: "The request uses a transfer coding this server does not implement.",
}

if TYPE_CHECKING:
    # The gunicorn internals this module builds on, as gunicorn 27 has them: types-gunicorn declares the public
    # API only. At run time the bases are gunicorn's own classes.
    class _GunicornWorker(ASGIWorker):
        loop: asyncio.AbstractEventLoop  # set before any connection is served
        sockets: list[Any]  # gunicorn's BaseSocket wrappers (types-gunicorn says socket.socket)
        wsgi: Any  # `app.wsgi()`, typed WSGI-or-ASGI; the service's app is WSGI

        def _get_ssl_context(self) -> ssl.SSLContext | None: ...
        async def _shutdown(self) -> None: ...

    class _GunicornProtocol(ASGIProtocol):
        worker: _GunicornWorker
        _is_ssl: bool
        _closed: bool
        _current_request: object | None
        _request_ready: asyncio.Event | None

        def _on_headers_complete(self) -> bool: ...
        def _build_http_scope(self, request: Any, sockname: Any, peername: Any) -> dict[str, Any]: ...
        def _close_transport(self) -> None: ...
        def _safe_write(self, data: bytes) -> None: ...
        def _get_reason_phrase(self, status: int) -> str: ...
else:
    _GunicornWorker, _GunicornProtocol = ASGIWorker, ASGIProtocol


class Protocol(_GunicornProtocol):
    """gunicorn's HTTP/1.1 protocol with a header deadline and JSON error answers."""

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._header_timer = self.worker.loop.call_later(HEADER_TIMEOUT, self._headers_too_slow)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _on_headers_complete(self) -> bool:
        self._cancel_header_timer()
        return super()._on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _build_http_scope(self, request: Any, sockname: Any, peername: Any) -> dict[str, Any]:
        # The scheme is the connection's own, whatever gunicorn's forwarded-header settings: the app applies
        # X-Forwarded-Proto itself when TRUSTED_PROXIES says so.
        scope = super()._build_http_scope(request, sockname, peername)
        scope["scheme"] = "https" if self._is_ssl else "http"
        return scope

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._closed or self._current_request is not None:
            return
        self._send_error_response(408, MESSAGES[408])
        self._close_transport()
        if self._request_ready is not None:
            self._request_ready.set()  # the connection's task sees it closed and ends

    def _send_error_response(self, status: int, message: str,
                             extra_headers: Iterable[tuple[str, str]] = ()) -> None:
        # gunicorn's text may quote the request (a URL with its access_token): answer with fixed text instead.
        body = b"" if status >= 500 and status != 501 else orjson.dumps(
            {"message": MESSAGES.get(status, "The request cannot be served."), "status": status})
        head = "".join(f"{name}: {value}\r\n" for name, value in extra_headers)
        self._safe_write(
            (f"HTTP/1.1 {status} {self._get_reason_phrase(status)}\r\nContent-Type: application/json\r\n"
             f"Content-Length: {len(body)}\r\n{head}Connection: close\r\n\r\n").encode("latin-1") + body)


class Worker(_GunicornWorker):
    """gunicorn's asyncio worker serving the WSGI app through `WSGIFront` (`--threads` threads per process)."""

    @classmethod
    def check_config(cls, cfg: Config, log: GLogger) -> None:
        """`--threads` is used here (gunicorn's asyncio worker warns about it otherwise)."""

    def load_wsgi(self) -> None:
        install_redaction()
        self.wsgi = self.app.wsgi()
        self.asgi = WSGIFront(self.wsgi, threads=self.cfg.threads, timeout=float(self.cfg.timeout or 30))

    async def _serve(self) -> None:
        """gunicorn's loop, with this module's protocol, a TLS handshake deadline and accepts shared out (`_accept`)."""
        ssl_context = self._get_ssl_context()
        self._handshakes: set[asyncio.Task[None]] = set()
        accepting = [self.loop.create_task(self._accept(sock.sock, ssl_context)) for sock in self.sockets]
        while self.alive:
            self.notify()
            if self.ppid != os.getppid():
                self.log.info("Parent changed, shutting down: %s", self)
                break
            await asyncio.sleep(1.0)
        for task in accepting:  # accept no more (gunicorn's shutdown then waits for the open connections)
            task.cancel()
        await self._shutdown()

    async def _accept(self, listener: socket.socket, ssl_context: ssl.SSLContext | None) -> None:
        """Accept connections on `listener`, which every worker shares, one at a time, each worker waiting a little
        longer the more connections it holds. An event loop's server accepts every connection waiting at once, so the
        first worker to wake took them all: a client's 16 keep-alive connections opened together (a benchmark, a
        proxy's pool of upstream connections) landed on one worker in one try out of six, and that worker's one core
        then served them all (half the requests a second of an even spread). Waiting lets the workers that hold
        fewer take the next one; the wait is bounded, so a busy server still accepts hundreds a second per worker."""
        listener.setblocking(False)  # shared by the workers' loops (the flag is the open file's, the same for all)
        while self.alive:
            held = self.nr_conns + len(self._handshakes)  # a connection counts from its accept, before its handshake
            delay = min(held * ACCEPT_WAIT_PER_CONNECTION, ACCEPT_WAIT_MAX)
            if delay:
                await asyncio.sleep(delay)
            try:
                connection, _ = await self.loop.sock_accept(listener)
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue  # another worker took it, or the client left before it was accepted
            except OSError as exc:  # out of file descriptors or memory: keep serving what is open, try again soon
                self.log.warning("could not accept a connection: %s", exc)
                await asyncio.sleep(ACCEPT_RETRY)
                continue
            task = self.loop.create_task(self._connect(connection, ssl_context))
            self._handshakes.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(self._handshakes.discard)

    async def _connect(self, connection: socket.socket, ssl_context: ssl.SSLContext | None) -> None:
        """Serve an accepted connection with `Protocol`, after its TLS handshake (bounded by HEADER_TIMEOUT)."""
        try:
            await self.loop.connect_accepted_socket(
                lambda: Protocol(self), connection, ssl=ssl_context,
                ssl_handshake_timeout=HEADER_TIMEOUT if ssl_context else None,
            )
        except (TimeoutError, OSError) as exc:  # a failed or abandoned handshake (ssl.SSLError is an OSError)
            connection.close()
            self.log.debug("connection dropped before it was served: %s", exc)
