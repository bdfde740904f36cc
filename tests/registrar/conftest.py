"""Fixtures for the registrar tests: a migrated database, the DataCite stand-in and registrars pointed at them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from repository.registrar import DataCiteRegistrar, LocalRegistrar
from repository.storage import Database, open_database

from .datacite_standin import DataCiteStandin


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    database = open_database(database_url)
    yield database
    database.dispose()


@pytest.fixture
def local(db: Database) -> LocalRegistrar:
    return LocalRegistrar(db)


@pytest.fixture
def standin() -> Iterator[DataCiteStandin]:
    server = DataCiteStandin().start()
    yield server
    server.stop()


@pytest.fixture
def datacite(standin: DataCiteStandin, db: Database) -> Iterator[DataCiteRegistrar]:
    registrar = DataCiteRegistrar(standin.url, standin.username, standin.password, db=db, timeout=(2.0, 5.0))
    yield registrar
    registrar.close()
