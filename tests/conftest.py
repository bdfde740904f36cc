"""Shared fixtures: a fresh database per test (SQLite by default, PostgreSQL with TEST_DATABASE_URL), the app, an
HTTPS test client, users with tokens, the same once per module for read-only tests (module_*), and a real gunicorn
server over TLS for end-to-end checks."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping

import pytest
import requests
from helpers.clock import Clock
from helpers.databases import drop_database, empty_database
from helpers.http import free_port, https_client
from helpers.opensearch_node import drop_indices
from sqlalchemy import URL, create_engine, make_url, text
from werkzeug.routing import Rule

from app import create_app
from repository.accounts.tokens import SCOPES, create_token, create_user
from repository.config import Settings
from repository.ondemand import wait_all_idle
from repository.storage import open_database, upgrade
from repository.storage.engine import close_all
from repository.storage.tables import metadata
from repository.vocabularies import loader

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL", "")
# pytest-xdist's worker name (gw0, gw1...) in its worker processes; empty in a run without workers (-n 0).
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if TEST_DATABASE_URL and XDIST_WORKER:
    # Tests empty their database between them, so each worker process has a PostgreSQL database of its own,
    # <database>_<worker>, made by `database_template` and dropped at the end of its session. Set in the environment
    # too, for the modules and subprocesses (live servers) that read it there.
    TEST_DATABASE_URL = make_url(TEST_DATABASE_URL).set(
        database=f"{make_url(TEST_DATABASE_URL).database}_{XDIST_WORKER}").render_as_string(hide_password=False)
    os.environ["TEST_DATABASE_URL"] = TEST_DATABASE_URL
# `opensearch`: the service's tests search the real OpenSearch node instead of the embedded engine (make_settings).
TEST_SEARCH = os.environ.get("TEST_SEARCH", "embedded")
# Loaded once into the template and kept between tests (tests that reload them restore the built-in data).
VOCABULARY_TABLES = {"licenses", "license_aliases", "funders", "grants"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Fixtures that start the real server (gunicorn over TLS): seconds each, so their tests are `slow`.
LIVE_SERVER_FIXTURES = {"live_server", "live_server_3_workers", "live_server_moderated", "second_live_server"}
# Parameter values that put a test on the real OpenSearch node (the search suites' backends and wire modes).
OPENSEARCH_PARAMS = {"opensearch", "node"}
# Where test folders go when the machine has one (Linux mounts a tmpfs there): pytest_configure.
TMPFS = "/dev/shm"


_BUILDERS: dict[tuple, Callable[..., tuple[str, str]]] = {}


def _memoized_compile_builder(original: Callable[..., Callable[..., tuple[str, str]]]) -> Callable[..., Callable]:
    """Werkzeug compiles two URL-builder functions (ast + compile) for each rule of each new app: ~80% of
    create_app, which almost every test calls. The function it makes depends only on the rule's parsed parts, its
    defaults and its converters' types (it reads the converters from the rule it is bound to when called), so a
    function made for one app's rule serves the same rule of every later app."""

    def compile_builder(rule: Rule, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        key = (append_unknown, rule.rule, tuple(rule._trace), repr(sorted((rule.defaults or {}).items())),
               tuple(sorted((name, type(c)) for name, c in rule._converters.items())))  # fmt: skip
        if key not in _BUILDERS:
            _BUILDERS[key] = original(rule, append_unknown)
        return _BUILDERS[key]

    return compile_builder


# Rule string and its map's converter classes -> the parts Werkzeug parsed from it, the trace it appended and the
# converters it made (variable, converter name, arguments).
_PARSED: dict[tuple, tuple[list, list[tuple[bool, str]], list[tuple[str, str, tuple, dict]]]] = {}


def _memoized_parse_rule(original: Callable[..., Iterator]) -> Callable[..., list]:
    """Werkzeug also parses each rule's string again for each new app (regular expressions per part): most of what
    create_app costs once the builders are shared. The parts depend only on the string and the converter classes
    of the map; the converters themselves belong to the rule's map, so they are made again for each rule (by the
    rule's own `get_converter`, with the arguments recorded when the string was first parsed)."""

    def parse_rule(self: Rule, rule: str) -> list:
        key = (rule, tuple(self.map.converters.items()))
        if key not in _PARSED:
            trace_from, made = len(self._trace), []
            get_converter = self.get_converter

            def recording(variable: str, name: str, args: tuple, kwargs: Mapping) -> object:
                made.append((variable, name, args, dict(kwargs)))
                return get_converter(variable, name, args, kwargs)

            self.get_converter = recording  # type: ignore[method-assign]
            try:
                parts = list(original(self, rule))
            finally:
                del self.get_converter
            _PARSED[key] = (parts, self._trace[trace_from:], made)
            return parts
        parts, trace, made = _PARSED[key]
        self._trace.extend(trace)
        for variable, name, args, kwargs in made:
            self._converters[variable] = self.get_converter(variable, name, args, kwargs)
            self.arguments.add(variable)
        return list(parts)

    return parse_rule


def pytest_configure(config: pytest.Config) -> None:
    """Apps share their URL builders and parsed rules (above). Compiled modules are kept, test folders are in
    memory (below)."""
    # Test modules rewritten for their asserts, and the modules they import, are kept in __pycache__ (ignored by
    # git) even where PYTHONDONTWRITEBYTECODE is set: compiling them all again costs each test process seconds.
    sys.dont_write_bytecode = False
    # Test folders (databases, the search index, files) in memory where the machine has a tmpfs: a test's commits
    # then cost no disk flush (a tantivy commit is three times cheaper, SQLite's writes too). pytest keeps its
    # numbering and retention there; xdist's workers get folders under the controller's. Durability is not what
    # the tests measure: crash tests kill processes, they do not cut power.
    if not config.option.basetemp and os.path.isdir(TMPFS) and os.access(TMPFS, os.W_OK):
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", TMPFS)
    if hasattr(Rule, "_compile_builder"):  # a private Werkzeug method: without it, apps just build theirs again
        Rule._compile_builder = _memoized_compile_builder(Rule._compile_builder)  # type: ignore[method-assign]
    if hasattr(Rule, "_parse_rule"):  # private too: without it, each app parses its rules again
        Rule._parse_rule = _memoized_parse_rule(Rule._parse_rule)  # type: ignore[method-assign]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on a live server, end-to-end tests and tests on the real OpenSearch node (a JVM started per process)
    are `slow` (before `-m "not slow"` deselects), wherever they are."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        on_the_node = {"opensearch_url", "opensearch_cluster"} & set(getattr(item, "fixturenames", ())) or any(
            value in OPENSEARCH_PARAMS for value in params.values() if isinstance(value, str))
        if LIVE_SERVER_FIXTURES & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("e2e") or on_the_node:
            item.add_marker(pytest.mark.slow)
        if on_the_node:
            item.add_marker(pytest.mark.opensearch)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Each test's report carries how many pages it checked with axe-core (helpers.browser counts them in the
    process that ran it; the report travels to xdist's controller, where the summary adds them up)."""
    from helpers import browser

    if call.when == "setup":
        item.stash[_CHECKS_BEFORE] = browser.checks_done
    outcome = yield
    if call.when == "call":
        outcome.get_result().user_properties.append(("axe_checks", browser.checks_done - item.stash[_CHECKS_BEFORE]))


_CHECKS_BEFORE = pytest.StashKey[int]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A test that started a background worker thread (BACKGROUND_WORKER=True) stops it before it ends: one left
    running applies its passes to the database the next tests of this process use (their mail sent, their usage
    aggregated under them)."""
    result = yield
    left = [thread for thread in threading.enumerate()
            if thread.name == "outbox-worker" and thread.is_alive() and thread.ident not in _REPORTED_THREADS]
    if left:
        _REPORTED_THREADS.update(thread.ident for thread in left)  # the test that left it fails, not those after
        raise AssertionError(f"{item.nodeid} left {len(left)} background worker thread(s) running")
    return result


_REPORTED_THREADS: set[int | None] = set()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line saying how many browser checks ran, so a run that left them out cannot pass for one that did."""
    reports = [r for r in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", [])
               if getattr(r, "when", "") == "call"]
    checks = sum(value for r in reports for name, value in r.user_properties if name == "axe_checks")
    tests = sum(1 for r in reports if any(name == "axe_checks" and value for name, value in r.user_properties))
    skipped = sum(1 for r in terminalreporter.stats.get("skipped", [])
                  if "BROWSER_TESTS=skip" in str(getattr(r, "longrepr", "")))
    line = f"browser checks: {checks} pages checked with axe-core in {tests} tests"
    if skipped:
        line += f"; {skipped} browser tests skipped (BROWSER_TESTS=skip)"
    terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def opensearch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real OpenSearch node: OPENSEARCH_URL when set, else one started for this test process in one JVM from
    Maven Central's artifacts (tests/helpers/opensearch_node.py), its data under the session's temporary
    directory, stopped at the end. Skipped only where neither can be had (no Java and Maven here)."""
    if os.environ.get("OPENSEARCH_URL"):
        yield os.environ["OPENSEARCH_URL"]
        return
    from helpers.opensearch_node import OpenSearchCluster, java_available

    if not java_available():
        pytest.skip("OPENSEARCH_URL is not set and there is no java and mvn to start a node")
    with OpenSearchCluster.start(tmp_path_factory.mktemp("opensearch")) as cluster:
        yield cluster.url


@pytest.fixture(scope="session", autouse=True)
def _worker_database() -> Iterator[None]:
    """A pytest-xdist worker's own PostgreSQL database, made before any test of the worker runs (a live server's
    too, which migrates it itself when it comes first) and dropped at the end of its session."""
    if not (TEST_DATABASE_URL and XDIST_WORKER):
        yield
        return
    _recreate_postgres(make_url(TEST_DATABASE_URL), create=True)
    yield
    close_all()
    _recreate_postgres(make_url(TEST_DATABASE_URL), create=False)


@pytest.fixture(scope="session")
def database_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Migrate once per session: a SQLite file copied for each test, or the PostgreSQL test database (a worker's
    own one with pytest-xdist: `_worker_database`)."""
    if TEST_DATABASE_URL:
        db = open_database(TEST_DATABASE_URL)
        upgrade(db)
        loader.load(db)  # kept by _empty_postgres
        db.dispose()
        return TEST_DATABASE_URL
    path = str(tmp_path_factory.mktemp("template") / "template.db")
    db = open_database(f"sqlite:///{path}")
    upgrade(db)
    loader.load(db)  # the built-in licenses, funders and grants, as create_app would load them
    with db.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    db.dispose()
    return path


def _empty_postgres(url: str) -> None:
    db = open_database(url)
    names = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables if t.name not in VOCABULARY_TABLES)
    with db.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    db.dispose()


@pytest.fixture
def database_url(database_template: str, tmp_path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A database with the newest schema and no rows; every connection opened on it is closed afterwards."""
    if TEST_DATABASE_URL:
        _empty_postgres(TEST_DATABASE_URL)
        yield TEST_DATABASE_URL
    else:
        path = tmp_path / "repository.db"
        shutil.copy(database_template, path)
        yield f"sqlite:///{path}"
    wait_all_idle()  # the threads of apps a test made itself (a DOI registration after its last publish)
    close_all()


def _build_settings(instance_path: str, database_url: str, overrides: dict) -> Settings:
    """Test settings: the given instance folder and database; keyword overrides win."""
    values = {
        "INSTANCE_PATH": instance_path,
        "DATABASE_URL": database_url,
        "BASE_URL": "https://localhost",
        "SECRET_KEY": "test-secret",
        # Tests apply the outbox themselves (publish does it right after its commit); no polling thread.
        "BACKGROUND_WORKER": False,
        "EXPORT_INTERVAL": 0,  # the worker's periodic export only where a test asks for it
        # argon2id's cheapest parameters: a sign-up costs microseconds, not half a second of CPU.
        "PASSWORD_HASH_PROFILE": "cheapest",
    }
    if "DATABASE_URL" not in overrides:
        # A copy of the migrated template: create_app's start-up migration would find nothing to do, after
        # loading every migration script (~10 ms an app). A test's own database migrates as configured.
        values["AUTO_MIGRATE"] = "false"
    values.update(overrides)
    return Settings.build(**values)


@pytest.fixture
def make_settings(tmp_path, database_url: str, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Build test settings: instance under tmp_path, the test database; keyword overrides win.

    With TEST_SEARCH=opensearch the service searches the real OpenSearch node (the scaled shape without Docker):
    SEARCH_URL is the node's and each test gets an index prefix of its own, deleted afterwards."""
    search: dict[str, str] = {}
    if TEST_SEARCH == "opensearch":
        prefix = f"svc{uuid.uuid4().hex[:12]}"
        search = {"SEARCH_URL": request.getfixturevalue("opensearch_url"), "SEARCH_INDEX_PREFIX": prefix}
        request.addfinalizer(lambda: drop_indices(search["SEARCH_URL"], prefix))

    def build(**overrides) -> Settings:  # type: ignore[no-untyped-def]
        return _build_settings(str(tmp_path / "instance"), database_url, {**search, **overrides})

    yield build


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


def close_app(application) -> None:  # type: ignore[no-untyped-def]
    """Dispose of a test app's database once its background threads (mail, DOI registrations...) are idle, their
    connections back in the pool first."""
    wait_all_idle()
    application.extensions["repository"].db.dispose()


@pytest.fixture
def app(settings: Settings):  # type: ignore[no-untyped-def]
    application = create_app(settings)
    yield application
    close_app(application)


@pytest.fixture
def client(app):  # type: ignore[no-untyped-def]
    """A test client speaking HTTPS to the app."""
    return https_client(app)


@pytest.fixture
def clock(app) -> Clock:  # type: ignore[no-untyped-def]
    """The app's clock (`services.clock`), under the test's control: time passes by moving it."""
    value = Clock()
    app.extensions["repository"].clock = value
    return value


@pytest.fixture
def make_token(app) -> Callable[..., str]:  # type: ignore[no-untyped-def]
    """Create a user (by e-mail) and a token with the given scopes; returns the token."""

    def make(email: str = "owner@example.org", scopes: tuple[str, ...] = SCOPES) -> str:
        with app.extensions["repository"].db.write() as conn:
            user_id = create_user(conn, email)
            return create_token(conn, user_id, list(scopes))[1]

    return make


@pytest.fixture
def token(make_token: Callable[..., str]) -> str:
    return make_token()


@pytest.fixture
def auth(token: str) -> dict[str, str]:
    """Authorization headers of a user holding every scope."""
    return {"Authorization": f"Bearer {token}"}


# Module-scoped fixtures: one app and database for a module's read-only tests, whose data a module fixture builds
# once (publishing records costs more than the requests the tests then make). On PostgreSQL they use a second
# database, `<test database>_module`, so that the function-scoped `database_url`, which empties the test database
# before each test, never empties theirs: a module can mix both kinds of test.
# Shared apps receive every request of their module from one address and user: limits far above any module's use.
UNLIMITED = {"RATELIMIT_GUEST": "1000000/minute", "RATELIMIT_USER": "1000000/minute",
             "RATELIMIT_OAI": "1000000/minute", "RATELIMIT_THUMBNAILS": "1000000/minute"}  # fmt: skip


def _recreate_postgres(url: URL, *, create: bool) -> None:
    """Drop the database of `url` (left over by an interrupted run) and, with `create`, create it empty."""
    server = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
        if create:
            conn.execute(text(f'CREATE DATABASE "{url.database}"'))
    server.dispose()


@pytest.fixture(scope="session")
def module_database_template(database_template: str) -> Iterator[str]:
    """What `module_database_url` starts from: the session's SQLite template, or a second, migrated PostgreSQL
    database dropped at the end of the session."""
    if not TEST_DATABASE_URL:
        yield database_template
        return
    url = make_url(TEST_DATABASE_URL)
    url = url.set(database=f"{url.database}_module")
    _recreate_postgres(url, create=True)
    address = url.render_as_string(hide_password=False)
    db = open_database(address)
    upgrade(db)
    loader.load(db)  # kept by _empty_postgres
    db.dispose()
    yield address
    close_all()
    _recreate_postgres(url, create=False)


@pytest.fixture(scope="module")
def module_database_url(module_database_template: str,
                        tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database with the newest schema and no rows, kept for the whole module."""
    if TEST_DATABASE_URL:
        _empty_postgres(module_database_template)
        yield module_database_template
    else:
        path = tmp_path_factory.mktemp("module-db") / "repository.db"
        shutil.copy(module_database_template, path)
        yield f"sqlite:///{path}"
    close_all()


@pytest.fixture(scope="module")
def module_make_settings(tmp_path_factory: pytest.TempPathFactory,
                         module_database_url: str) -> Callable[..., Settings]:
    """`make_settings` for the module's database, with rate limits out of the way; keyword overrides win."""
    instance = str(tmp_path_factory.mktemp("module") / "instance")

    def build(**overrides) -> Settings:  # type: ignore[no-untyped-def]
        return _build_settings(instance, module_database_url, {**UNLIMITED, **overrides})

    return build


@pytest.fixture(scope="module")
def module_settings(module_make_settings: Callable[..., Settings]) -> Settings:
    return module_make_settings()


@pytest.fixture(scope="module")
def module_app(module_settings: Settings):  # type: ignore[no-untyped-def]
    application = create_app(module_settings)
    yield application
    close_app(application)


@pytest.fixture
def module_client(module_app):  # type: ignore[no-untyped-def]
    """An HTTPS test client of the module's app; a new one per test (no cookies carried between tests)."""
    return https_client(module_app)


@pytest.fixture(scope="module")
def module_auth(module_app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Authorization headers of a user holding every scope, in the module's app."""
    with module_app.extensions["repository"].db.write() as conn:
        user_id = create_user(conn, "owner@example.org")
        return {"Authorization": f"Bearer {create_token(conn, user_id, list(SCOPES))[1]}"}


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The real server (scripts/serve.py → gunicorn with TLS) on 127.0.0.1; yields its URL and certificate."""
    yield from _serve(tmp_path_factory, "--workers", "2", "--threads", "2")


@pytest.fixture(scope="module")
def live_server_3_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The real server as scripts/serve.py starts it by default (3 worker processes); its access log names the
    process that answered each request (`log` in the yielded dict)."""
    yield from _serve(tmp_path_factory, "--workers", "3", "--threads", "4",
                      "--access-logformat", "pid=%(p)s %(r)s %(s)s")


@pytest.fixture(scope="module")
def live_server_moderated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The real server holding new accounts' first publications for approval (docs/operators/moderation.md)."""
    yield from _serve(tmp_path_factory, "--workers", "2", "--threads", "2", settings={"MODERATE_FIRST_DEPOSITS": "true"})


@pytest.fixture(scope="module")
def second_live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Another instance of the service, with its own database and without rate limits, for the tests that move
    records between instances (`import api`): the real server over TLS, as `live_server`."""
    url = empty_database(tmp_path_factory.mktemp("second-db"), "second")
    yield from _serve(tmp_path_factory, "--workers", "2", "--threads", "2",
                      settings={"DATABASE_URL": url, "AUTO_MIGRATE": "true", "RATELIMIT_ENABLED": "false"})
    drop_database(url)


def _serve(tmp_path_factory: pytest.TempPathFactory, *serve_args: str,
           settings: Mapping[str, str] | None = None) -> Iterator[dict]:
    instance = tmp_path_factory.mktemp("live")
    port = free_port()
    env = {
        **os.environ,
        "INSTANCE_PATH": str(instance),
        "BASE_URL": f"https://127.0.0.1:{port}",
        "SECRET_KEY": "live-secret",
    }
    env["DATABASE_URL"] = TEST_DATABASE_URL or f"sqlite:///{instance}/repository.db"
    env.update(settings or {})
    log = open(instance / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "scripts", "serve.py"), *serve_args],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        # Its own process group, so the teardown stops the workers too: a worker orphaned by a master killed
        # mid-shutdown would go on running the background worker's passes on the shared PostgreSQL test database
        # (applying other tests' outbox rows with its own registrar).
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    else:
        proc.kill()
        proc.wait()
    if proc.poll() is None:
        _wait_until_answering(f"https://127.0.0.1:{port}/healthz", str(instance / "tls" / "cert.pem"), proc)
    if proc.poll() is not None:
        log.close()
        raise RuntimeError("server did not start:\n" + (instance / "server.log").read_text())
    yield {"url": f"https://127.0.0.1:{port}", "cert": str(instance / "tls" / "cert.pem"), "env": env, "pid": proc.pid,
           "log": str(instance / "server.log")}
    _stop_group(proc)
    log.close()


def _wait_until_answering(url: str, cert: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    """Until a worker answers `url`: the port accepts connections as soon as the master listens, but a worker
    answers only once it has built the app (12 s and more on a busy machine, longer than a test's timeout)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with requests.Session() as session:
                session.trust_env = False
                session.get(url, verify=cert, timeout=30)
            return
        except (requests.RequestException, OSError):
            time.sleep(0.2)


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop a server and every process of its group: SIGTERM, then SIGKILL for whatever is left after 10 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()  # reaped: an unreaped Popen warns (an error in this suite) when it is collected
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)  # any worker of the group still there?
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
