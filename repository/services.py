"""The objects the service is made of, built once per process by `build_services(settings)`.

The web application (`app.create_app`), the background worker and the command-line scripts all start from the same
`Services`, so start-up work (migrating an embedded database, loading the built-in vocabularies, wiring the worker's
periodic tasks, starting its thread) happens in one place and needs no Flask. Views reach it through
`repository.web.request.services()`.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from repository.accounts import audit, mail, passwords
from repository.accounts.mail import Mailer
from repository.config import Settings
from repository.datadesc.checks.runner import Runner
from repository.datadesc.jobs import Jobs
from repository.exports.periodic import Exporter
from repository.files import multipart
from repository.files.s3store import open_store
from repository.files.store import FileStore
from repository.files.sweeper import Sweeper
from repository.records.cache import RecordCache
from repository.records.lookups import DatabaseLookups
from repository.records.render_context import render_context
from repository.records.stats import Usage
from repository.registrar import Registrar, open_registrar
from repository.releases.ingest import ReleaseWorker
from repository.search.backend import SearchBackend
from repository.search.open import open_from_settings
from repository.storage import Database, open_database, upgrade
from repository.storage.dictionaries import Tending
from repository.timeutil import utcnow
from repository.vocabularies.loader import ensure_loaded
from repository.worker.indexer import Indexer

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class Services:
    """What requests, the worker and the scripts share; one per process (per application in tests)."""

    settings: Settings
    db: Database
    secret: bytes  # signs search cursors and OAI-PMH resumption tokens; also the web session key
    files: FileStore
    search: SearchBackend
    registrar: Registrar
    indexer: Indexer  # the outbox worker; its pass also runs the periodic tasks below
    stats: Usage  # usage statistics (COUNTER R5): buffered per process, aggregated in the worker's pass
    record_cache: RecordCache
    validations: Runner  # data-description documents of deposits, validated in the background
    validation_jobs: Jobs  # the background jobs of /api/datadesc/validate
    mailer: Mailer  # sends the mail outbox right after the commit that queued a message, and in the worker's pass
    clock: Callable[[], datetime] = utcnow  # OAI-PMH's now: tests put a controllable one here
    # Needs the Services it belongs to, so build_services sets it right after the others.
    releases: ReleaseWorker = field(init=False)


def build_services(settings: Settings, **overrides: Any) -> Services:
    """Open the database (migrating an embedded one), load the built-in vocabularies, build every service and wire
    the worker's periodic tasks; with BACKGROUND_WORKER, start its thread.

    `overrides` replace a service by name (`clock=...`, `search=...`) before the others are built from it, so an
    injected file store is also the one the sweeper and the validation runner use; an unknown name is a TypeError.
    """
    unknown = set(overrides) - {f.name for f in fields(Services)}
    if unknown:
        raise TypeError("build_services: unknown service(s) " + ", ".join(sorted(unknown)))

    def pick(name: str, build: Callable[[], T]) -> T:
        return overrides[name] if name in overrides else build()

    os.makedirs(settings.INSTANCE_PATH, mode=0o700, exist_ok=True)  # the owner's only, as everything in it
    passwords.use_profile(settings.PASSWORD_HASH_PROFILE)
    db = pick("db", lambda: _open_database(settings))
    _load_vocabularies(db)
    search = pick("search", lambda: open_from_settings(settings))
    registrar = pick("registrar", lambda: open_registrar(settings, db))
    files = pick("files", lambda: open_store(settings))
    secret = pick("secret", lambda: secret_key(settings).encode())
    services = Services(
        settings=settings,
        db=db,
        secret=secret,
        files=files,
        search=search,
        registrar=registrar,
        indexer=pick("indexer", lambda: Indexer(db, settings, search, registrar, DatabaseLookups,
                                                 lambda: render_context(settings, db))),
        stats=pick("stats", lambda: Usage(db, secret)),
        record_cache=pick("record_cache", RecordCache),
        validations=pick("validations", lambda: Runner(db, files)),
        validation_jobs=pick("validation_jobs",
                             lambda: Jobs(settings.INSTANCE_PATH, settings.DATADESC_JOB_RETENTION)),
        mailer=pick("mailer", lambda: Mailer(db, settings)),
        clock=pick("clock", lambda: utcnow),
    )
    services.releases = pick("releases", lambda: ReleaseWorker(services))
    _wire_worker(services)
    if settings.BACKGROUND_WORKER:
        services.indexer.start()
    return services


def secret_key(settings: Settings) -> str:
    """The configured key, or one generated once and kept under the instance directory (shared by every process
    of the instance, so a cursor signed by one is accepted by another)."""
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


def _open_database(settings: Settings) -> Database:
    """The database; the embedded shape (AUTO_MIGRATE=auto on SQLite) migrates itself, under a file lock."""
    db = open_database(settings.DATABASE_URL)
    if settings.migrate_on_start:
        upgrade(db, lock_path=os.path.join(settings.INSTANCE_PATH, "migrate.lock"))
    return db


def _load_vocabularies(db: Database) -> None:
    """Fill empty vocabulary tables with the built-in data, so the embedded shape needs no separate step."""
    try:
        ensure_loaded(db)
    except SQLAlchemyError as exc:
        # The scaled shape migrates separately: a server started first must still come up.
        log.warning("vocabularies not loaded (%s); run scripts/migrate.py and scripts/load_vocabularies.py", exc)


def _wire_worker(services: Services) -> None:
    """The periodic tasks of the worker's pass, the same in both shapes (the thread of each server process, and
    scripts/worker.py): usage statistics, data-description documents left pending, the validation jobs a dead process
    left and the sweep of expired ones, orphan files (a crashed upload's temporary file), the full public exports, the mail outbox, which
    each commit that queues a message also hands to this process's mail thread, and the packed columns' dictionaries."""
    settings, on_pass = services.settings, services.indexer.on_pass
    on_pass.append(services.stats.on_pass)
    on_pass.append(services.validations.on_pass)
    on_pass.append(services.validation_jobs.on_pass)
    on_pass.append(Sweeper(services.db, services.files, settings.FILES_SWEEP_INTERVAL, settings.FILES_ORPHAN_AGE,
                           # and the multipart uploads expired by the services' clock (tests move it)
                           also=lambda db, store, age: multipart.sweep(db, store, age, services.clock())))
    on_pass.append(services.mailer.process_pending)
    on_pass.append(Exporter(services.db, settings, services.search, lambda: services.clock()))  # full public exports
    on_pass.append(Tending(services.db))  # the zstd dictionaries of the packed columns, once there are enough values
    on_pass.append(audit.Retention(services.db, settings.AUDIT_LOG_DAYS))  # entries past AUDIT_LOG_DAYS
    services.db.wire(mail.SEND, services.mailer.kick)
