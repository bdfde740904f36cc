"""DOI registration with the agency: a small Protocol, a local registrar (the default) and DataCite's REST API.

The outbox worker calls `register()` after a publish or an edit and `hide()` when a record is taken down. Both are
idempotent, so a retried outbox row does no harm. Failures raise `RegistrarError`, whose `retryable` tells the
worker whether to try again later (network trouble, 5xx, 429) or to give up and surface the message (4xx).
"""

from __future__ import annotations

import base64
import json
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

import requests
from lxml import etree
from sqlalchemy import Connection, insert, select, update

from repository.config import Settings, StartupError
from repository.storage.engine import Database
from repository.storage.tables.records import doi_registrations
from repository.timeutil import utcnow

JSONAPI = "application/vnd.api+json"
# DataCite usually answers in well under a second, but a publish with large metadata can take several.
TIMEOUT = (5.0, 30.0)


class RegistrarError(Exception):
    """Registration failed; `retryable` says whether trying again later can help."""

    def __init__(
        self, message: str, retryable: bool, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status  # the agency's HTTP status, None for network errors and local checks
        self.retry_after = retry_after  # seconds, from a 429/503 Retry-After header


class Registrar(Protocol):
    """Where DOIs are registered. Every method is idempotent."""

    def register(self, doi: str, url: str, metadata_xml: bytes, recid: int) -> None:
        """Create or update `doi` as findable, resolving to `url`, described by DataCite XML `metadata_xml`."""
        ...

    def hide(self, doi: str) -> None:
        """Take `doi` out of the agency's search: a findable DOI cannot be deleted, only hidden; it still resolves.

        Hiding a hidden DOI changes nothing; DataCite answers a DOI it never saw by keeping an invisible draft.
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def check_registration(doi: str, url: str, metadata_xml: bytes) -> None:
    """Refuse what the agency would refuse, so the local registrar catches the same mistakes (RegistrarError)."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise RegistrarError(f"url: {url!r} is not an absolute http(s) URL", retryable=False)
    identifier = metadata_identifier(metadata_xml)
    if identifier.lower() != doi.lower():
        raise RegistrarError(
            f"xml: the metadata identifier {identifier!r} does not match the DOI {doi!r}", retryable=False
        )


def metadata_identifier(metadata_xml: bytes) -> str:
    """The DOI in the XML's `<identifier identifierType="DOI">`; RegistrarError when malformed or missing."""
    # No entities, no network: the XML is ours, but a parser must never fetch anything.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(metadata_xml, parser)
    except etree.XMLSyntaxError as exc:
        raise RegistrarError(f"xml: not well-formed: {exc}", retryable=False) from None
    # Any kernel-4.x namespace (and none) is accepted: the identifier element has not moved between versions.
    for element in root.iterchildren():
        if isinstance(element.tag, str) and etree.QName(element).localname == "identifier":
            if element.get("identifierType") == "DOI" and element.text:
                return element.text.strip()
    raise RegistrarError('xml: no <identifier identifierType="DOI">', retryable=False)


def _upsert(conn: Connection, doi: str, recid: int, url: str, metadata_xml: bytes, registrar: str) -> None:
    # Update-then-insert stays portable across SQLite and PostgreSQL; the outbox gives one worker per record.
    now = utcnow()
    values = {"recid": recid, "url": url, "metadata_xml": metadata_xml.decode("utf-8"), "registrar": registrar}
    changed = conn.execute(
        update(doi_registrations).where(doi_registrations.c.doi == doi).values(updated=now, **values)
    ).rowcount
    if not changed:
        conn.execute(insert(doi_registrations).values(doi=doi, registered=now, updated=now, **values))


def _touch(conn: Connection, doi: str) -> None:
    # The table has no state column: a hidden DOI keeps its row (DOIs are permanent), only `updated` moves.
    conn.execute(update(doi_registrations).where(doi_registrations.c.doi == doi).values(updated=utcnow()))


def read_registration(conn: Connection, doi: str) -> dict[str, Any] | None:
    """The stored registration (or receipt) of `doi`, or None."""
    row = conn.execute(select(doi_registrations).where(doi_registrations.c.doi == doi.lower())).first()
    return dict(row._mapping) if row else None


class LocalRegistrar:
    """Records registrations in `doi_registrations` and tells no one: the embedded shape and test instances."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def register(self, doi: str, url: str, metadata_xml: bytes, recid: int) -> None:
        check_registration(doi, url, metadata_xml)
        with self.db.write() as conn:
            _upsert(conn, doi.lower(), recid, url, metadata_xml, "local")

    def hide(self, doi: str) -> None:
        with self.db.write() as conn:
            _touch(conn, doi.lower())

    def close(self) -> None:
        pass


class DataCiteRegistrar:
    """DataCite's REST API (`PUT /dois/<doi>`, JSON:API), with a receipt in `doi_registrations` when `db` is given.

    Written on `requests` rather than `datacite.DataCiteRESTClient`: that client treats the 201 of a PUT that
    creates a DOI as an error, flattens every failure into status-named exceptions without telling network errors
    from HTTP ones usefully, and cannot share a session (one connection per call).
    """

    def __init__(
        self,
        base_url: str,
        username: str,
        password: str,
        session: requests.Session | None = None,
        db: Database | None = None,
        timeout: tuple[float, float] = TIMEOUT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.db = db
        self.timeout = timeout
        self._own_session = session is None
        self.session = session or requests.Session()
        self.auth = (username, password)

    def register(self, doi: str, url: str, metadata_xml: bytes, recid: int) -> None:
        attributes = {
            "doi": doi,
            "event": "publish",
            "url": url,
            "xml": base64.b64encode(metadata_xml).decode("ascii"),
        }
        self._put(doi, attributes)
        if self.db is not None:
            with self.db.write() as conn:
                _upsert(conn, doi.lower(), recid, url, metadata_xml, "datacite")

    def hide(self, doi: str) -> None:
        self._put(doi, {"doi": doi, "event": "hide"})
        if self.db is not None:
            with self.db.write() as conn:
                _touch(conn, doi.lower())

    def close(self) -> None:
        if self._own_session:
            self.session.close()

    def _put(self, doi: str, attributes: dict[str, Any]) -> None:
        body = {"data": {"id": doi, "type": "dois", "attributes": attributes}}
        try:
            response = self.session.put(
                f"{self.base_url}/dois/{quote(doi, safe='/')}",
                data=json.dumps(body),
                headers={"Content-Type": JSONAPI, "Accept": JSONAPI},
                auth=self.auth,
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            raise RegistrarError(f"DataCite unreachable: {exc}", retryable=True) from None
        with response:
            if response.status_code not in (200, 201):  # 201 when the PUT created the DOI
                raise _http_error(doi, response)


def _http_error(doi: str, response: requests.Response) -> RegistrarError:
    status = response.status_code
    retryable = status >= 500 or status in (408, 429)
    retry_after = None
    try:
        retry_after = float(response.headers.get("Retry-After", ""))
    except ValueError:
        pass
    detail = _error_detail(response)
    return RegistrarError(f"DataCite answered {status} for {doi}: {detail}", retryable, status, retry_after)


def _error_detail(response: requests.Response) -> str:
    """The JSON:API `errors` as `source: title; ...`, or the start of whatever else came back (a proxy's page)."""
    try:
        errors = response.json().get("errors")
    except (ValueError, AttributeError):
        errors = None
    if isinstance(errors, list) and errors:
        parts = []
        for error in errors:
            if not isinstance(error, dict):
                continue
            title = str(error.get("title") or error.get("detail") or "error")
            source = error.get("source")
            if isinstance(source, dict):  # JSON:API allows {"pointer": "/data/attributes/url"}
                source = source.get("pointer") or source.get("parameter")
            parts.append(f"{source}: {title}" if source else title)
        if parts:
            return "; ".join(parts)
    return response.text[:300].strip() or response.reason or "no detail"


def open_registrar(settings: Settings, db: Database) -> Registrar:
    """The registrar `settings.REGISTRAR` names; StartupError when DataCite is chosen without an account."""
    if settings.REGISTRAR == "datacite":
        for name in ("DATACITE_USERNAME", "DATACITE_PASSWORD"):
            if not getattr(settings, name):
                raise StartupError(f"Setting {name} is required when REGISTRAR=datacite")
        return DataCiteRegistrar(
            settings.DATACITE_URL, settings.DATACITE_USERNAME, settings.DATACITE_PASSWORD, db=db
        )
    return LocalRegistrar(db)
