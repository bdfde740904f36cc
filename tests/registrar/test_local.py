"""LocalRegistrar: registrations recorded in doi_registrations; open_registrar chooses by settings."""

from __future__ import annotations

from datetime import datetime

import pytest
from helpers.registrar import DOI, URL, datacite_xml, receipt
from sqlalchemy import func, select, update

from repository.config import Settings, StartupError
from repository.registrar import (
    DataCiteRegistrar,
    LocalRegistrar,
    RegistrarError,
    metadata_identifier,
    open_registrar,
)
from repository.storage import Database
from repository.storage.tables.records import doi_registrations


def count(db: Database) -> int:
    with db.read() as conn:
        return conn.execute(select(func.count()).select_from(doi_registrations)).scalar_one()


def backdate(db: Database) -> None:
    """Move the timestamps into the past so an update is visible at one-second resolution."""
    past = datetime(2020, 1, 1)
    with db.write() as conn:
        conn.execute(update(doi_registrations).values(registered=past, updated=past))


def test_register_records_the_registration(local: LocalRegistrar, db: Database) -> None:
    local.register(DOI, URL, datacite_xml(), recid=1)

    row = receipt(db, DOI)
    assert row is not None
    assert (row["doi"], row["recid"], row["url"], row["registrar"]) == (DOI, 1, URL, "local")
    assert row["metadata_xml"].encode() == datacite_xml()
    assert row["registered"] == row["updated"]


def test_register_again_updates_in_place(local: LocalRegistrar, db: Database) -> None:
    local.register(DOI, URL, datacite_xml(), recid=1)
    backdate(db)

    local.register(DOI.upper(), URL + "?v=2", datacite_xml(DOI.upper(), title="Renamed"), recid=1)

    assert count(db) == 1
    row = receipt(db, DOI)
    assert row["url"] == URL + "?v=2"
    assert b"Renamed" in row["metadata_xml"].encode()
    assert row["registered"].year == 2020  # first registration kept
    assert row["updated"].year > 2020


@pytest.mark.parametrize(
    "doi, url, xml, expected",
    [
        (DOI, URL, b"<resource><identifier", "not well-formed"),
        (DOI, URL, datacite_xml("10.5072/other.2"), "does not match the DOI"),
        (DOI, URL, b"<resource xmlns='http://datacite.org/schema/kernel-4'/>", "no <identifier"),
        (DOI, "records/1", datacite_xml(), "not an absolute http(s) URL"),
        (DOI, "", datacite_xml(), "not an absolute http(s) URL"),
    ],
)
def test_register_refuses_what_datacite_would(
    local: LocalRegistrar, db: Database, doi: str, url: str, xml: bytes, expected: str
) -> None:
    with pytest.raises(RegistrarError) as caught:
        local.register(doi, url, xml, recid=1)

    assert expected in caught.value.message
    assert caught.value.retryable is False
    assert count(db) == 0


def test_metadata_identifier_ignores_other_elements() -> None:
    xml = (
        b'<resource xmlns="http://datacite.org/schema/kernel-4">'
        b'<alternateIdentifiers><alternateIdentifier alternateIdentifierType="DOI">10.1/x</alternateIdentifier>'
        b"</alternateIdentifiers><!-- a comment --><identifier identifierType='DOI'> 10.5072/A.1 </identifier>"
        b"</resource>"
    )
    assert metadata_identifier(xml) == "10.5072/A.1"


def test_hide_keeps_the_registration(local: LocalRegistrar, db: Database) -> None:
    local.register(DOI, URL, datacite_xml(), recid=1)
    backdate(db)

    local.hide(DOI)
    local.hide("10.5072/never.registered")  # nothing to hide: no error

    row = receipt(db, DOI)
    assert row["url"] == URL
    assert row["updated"].year > 2020
    assert count(db) == 1


def test_open_registrar_is_local_by_default(make_settings, db: Database) -> None:  # type: ignore[no-untyped-def]
    registrar = open_registrar(make_settings(), db)
    assert isinstance(registrar, LocalRegistrar)


def test_open_registrar_datacite(make_settings, db: Database) -> None:  # type: ignore[no-untyped-def]
    settings: Settings = make_settings(
        REGISTRAR="datacite", DOI_PREFIX="10.12345", DATACITE_URL="https://api.test.datacite.org",
        DATACITE_USERNAME="REPO.X", DATACITE_PASSWORD="pw",
    )  # fmt: skip
    registrar = open_registrar(settings, db)
    try:
        assert isinstance(registrar, DataCiteRegistrar)
        assert registrar.base_url == "https://api.test.datacite.org"
        assert registrar.auth == ("REPO.X", "pw")
        assert registrar.db is db
    finally:
        registrar.close()


def test_open_registrar_datacite_needs_an_account(make_settings, db: Database) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(StartupError, match="DATACITE_USERNAME"):
        open_registrar(make_settings(REGISTRAR="datacite", DOI_PREFIX="10.12345"), db)
    with pytest.raises(StartupError, match="DATACITE_PASSWORD"):
        open_registrar(make_settings(REGISTRAR="datacite", DOI_PREFIX="10.12345", DATACITE_USERNAME="REPO.X"), db)
