"""gunicorn settings of the service (`gunicorn -c python:repository.serving.gunicorn_conf 'app:create_app()'`;
`gunicorn.conf.py` at the top of the checkout loads this, so a bare `gunicorn 'app:create_app()'` run there uses them).

Command-line options still win (`--workers`, `--threads`, `--bind`, `--certfile`...).

With METRICS_TOKEN set, the workers count their requests in files under INSTANCE_PATH/metrics (emptied when the
server starts; a dead worker's files are merged into the totals): /metrics in any worker then sums all of them.
PROMETHEUS_MULTIPROC_DIR must name that directory before a worker imports prometheus_client, so it is set here, in
the server process the workers are forked from (an explicit PROMETHEUS_MULTIPROC_DIR is kept).
"""

import gc
import glob
import os
from typing import Any

from repository.collector import GC_THRESHOLDS
from repository.config import Settings
from repository.files.memory import limit_arenas

_settings = Settings.from_env()
limit_arenas()  # in the server process, so every worker forked from it has the cap (repository/files/memory.py)
if _settings.METRICS_TOKEN:
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", os.path.join(_settings.INSTANCE_PATH, "metrics"))


def on_starting(server: Any) -> None:
    """Start the metrics from zero: the files of an earlier run would be counted as live processes."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        for path in glob.glob(os.path.join(folder, "*.db")):
            os.remove(path)


def child_exit(server: Any, worker: Any) -> None:
    """A worker is gone: its gauges leave the totals (its counters stay counted)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess  # imported once the directory is known

        multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker: Any) -> None:
    """Once the app is loaded: what it holds from now on (modules, routes, vocabularies) leaves the collector's view
    (`gc.freeze`: never walked, never written to, so pages shared with the master stay shared), and the thresholds
    of repository/collector.py apply."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


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
# gunicorn's default line, then the app's request id, user id and route (repository/serving/logs.py adds them).
access_log_format = ('%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(M)sms '
                     'request_id=%(request_id)s user_id=%(user_id)s route=%(route)s')
logger_class = "repository.serving.logs.Logger"  # access tokens redacted from every line
control_socket_disable = True  # no runtime control socket under $HOME
asgi_loop = "uvloop"  # measured: with asyncio's own loop, uploads over TLS ran at ~60% of the threaded worker's speed
