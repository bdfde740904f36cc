"""gunicorn settings of the service (`gunicorn -c python:repository.serving.gunicorn_conf 'app:create_app()'`;
`gunicorn.conf.py` at the top of the checkout loads this, so a bare `gunicorn 'app:create_app()'` run there uses them).

Command-line options still win (`--workers`, `--threads`, `--bind`, `--certfile`...).
"""

# An asyncio front reads each request before a thread runs the app: slow clients cannot hold the threads.
worker_class = "repository.serving.worker.Worker"
workers = 3
threads = 4

# Forwarded headers are the app's business (TRUSTED_PROXIES): gunicorn applies none, from any address.
forwarded_allow_ips = ""
secure_scheme_headers: dict[str, str] = {}
forwarder_headers = ""

# Request bounds (gunicorn's defaults, stated): request line, header count and size of one header.
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
timeout = 30  # a silent worker is restarted; also the longest wait for the next piece of a body or a read
keepalive = 5  # an idle kept-alive connection is closed after this; the next request's headers must come in it

accesslog = "-"
logger_class = "repository.serving.logs.Logger"  # access tokens redacted from every line
control_socket_disable = True  # no runtime control socket under $HOME
asgi_loop = "uvloop"  # measured: with asyncio's own loop, uploads over TLS ran at ~60% of the threaded worker's speed
