"""The WSGI entry point: `gunicorn 'app:create_app()'`, `flask --app app ...`."""

from __future__ import annotations

import logging
import os
import secrets

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import IntegerConverter

from repository.config import Settings
from repository.storage import open_database, upgrade
from repository.web import request
from repository.web.cors import install_cors
from repository.web.ratelimit import install_limiter


class DatabaseInt(IntegerConverter):
    """`<int:...>` in routes matches only ids a database integer column can hold: larger ones are 404, not a
    driver overflow (a 500)."""

    def __init__(self, url_map, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        kwargs.setdefault("max", 2**31 - 1)
        super().__init__(url_map, *args, **kwargs)


def _secret_key(settings: Settings) -> str:
    """The configured key, or one generated once and kept under the instance directory."""
    if settings.SECRET_KEY:
        return settings.SECRET_KEY
    path = os.path.join(settings.INSTANCE_PATH, "secret_key")
    if not os.path.exists(path):
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
        os.replace(path + ".tmp", path)
    with open(path) as handle:
        return handle.read().strip()


def create_app(settings: Settings | None = None) -> Flask:
    """Build the application from `settings` (default: the environment)."""
    settings = settings or Settings.from_env()
    logging.basicConfig(level=settings.LOG_LEVEL.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    os.makedirs(settings.INSTANCE_PATH, exist_ok=True)

    db = open_database(settings.DATABASE_URL)
    if settings.migrate_on_start:
        upgrade(db, lock_path=os.path.join(settings.INSTANCE_PATH, "migrate.lock"))

    app = Flask(__name__, instance_path=settings.INSTANCE_PATH)
    app.config.update(SECRET_KEY=_secret_key(settings), MAX_CONTENT_LENGTH=None, JSON_SORT_KEYS=False)
    if settings.TRUSTED_PROXIES:
        n = settings.TRUSTED_PROXIES
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n, x_port=n)  # type: ignore[method-assign]
    app.url_map.strict_slashes = False
    app.url_map.converters["int"] = DatabaseInt

    services = request.Services(settings=settings, db=db, extras={"secret": app.config["SECRET_KEY"].encode()})
    app.extensions["repository"] = services
    request.install(app)
    install_cors(app)
    services.extras["limiter"] = install_limiter(app, settings, request.resolve_identity)
    request.install_checks(app)

    _install_services(services)

    from repository.api import (
        badges,
        communities,
        community_requests,
        datadesc,
        deposit_files,
        deposits,
        files,
        funders,
        grants,
        landing,
        licenses,
        oai,
        records,
        releases,
        root,
        schemas,
        thumbnails,
        tokens,
    )

    for blueprint in (root.bp, tokens.bp, deposits.bp, deposit_files.bp, files.bp, records.bp, licenses.bp, funders.bp,
                      grants.bp, communities.bp, community_requests.bp, oai.bp, releases.bp, schemas.bp, thumbnails.bp,
                      landing.bp, datadesc.bp, badges.bp):
        app.register_blueprint(blueprint)
    oai.install_limits(app, services.extras["limiter"], settings)
    if settings.BENCH_CEILING_ENDPOINT:
        from repository.api import ceiling

        app.register_blueprint(ceiling.bp)
    thumbnails.install_limits(services.extras["limiter"], settings)
    return app


def _install_services(services: request.Services) -> None:
    """The file store, the search engine, the DOI registrar and the outbox indexer."""
    from repository.datadesc.checks import install as install_validations
    from repository.datadesc.jobs import Jobs
    from repository.files.buckets import FileStore, Sweeper
    from repository.indexing.outbox import Indexer
    from repository.records.cache import RecordCache
    from repository.records.render_context import render_context
    from repository.records.stats import ViewCounter
    from repository.registrar import open_registrar
    from repository.search.backend import open_from_settings
    from repository.vocabularies.lookups import DatabaseLookups

    settings, db = services.settings, services.db
    search = open_from_settings(settings)
    registrar = open_registrar(settings, db)
    indexer = Indexer(db, settings, search, registrar, DatabaseLookups, lambda: render_context(settings, db))
    stats = ViewCounter(db)
    indexer.on_pass.append(stats.flush)
    services.extras.update(
        files=FileStore(settings.FILES_ROOT), search=search, registrar=registrar, indexer=indexer, stats=stats,
        record_cache=RecordCache(),
    )
    indexer.on_pass.append(install_validations(services))  # data-description documents left pending
    # Background jobs of /api/datadesc/validate: those a dead process left, and the sweep of expired ones.
    services.extras["validation_jobs"] = Jobs(settings.INSTANCE_PATH, settings.DATADESC_JOB_RETENTION)
    indexer.on_pass.append(services.extras["validation_jobs"].on_pass)
    # Orphan files (a crashed upload's temporary file), in both shapes: this thread or scripts/worker.py.
    indexer.on_pass.append(Sweeper(db, services.extras["files"], settings.FILES_SWEEP_INTERVAL,
                                   settings.FILES_ORPHAN_AGE))
    if settings.BACKGROUND_WORKER:
        indexer.start()
