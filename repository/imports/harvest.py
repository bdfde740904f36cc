"""The OAI-PMH harvest loop (docs/operators/migration.md#importing-from-oai-pmh): ListRecords pages followed by
their resumption tokens, each request retried with backoff, the answers read as XML with no entity or network
access. What cannot go on (garbage after every retry, an OAI-PMH error, a token the source already gave) stops
the harvest with its reason: the pages before it stay imported, and a rerun starts again from the same `from`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import requests
from lxml import etree

OAI = "http://www.openarchives.org/OAI/2.0/"
NS = {"o": OAI}
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, remove_blank_text=True)
_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


class HarvestStopped(Exception):
    """The harvest cannot go on; the message says why, for the report."""


@dataclass
class Harvested:
    """One record of a ListRecords page: its header, and its metadata element (None when deleted or absent)."""

    identifier: str
    datestamp: str | None
    deleted: bool
    metadata: etree._Element | None


@dataclass
class Page:
    """One answer: its records, its responseDate and the token of the next page (None: the last)."""

    records: list[Harvested]
    response_date: str | None
    token: str | None
    problems: list[tuple[str, str]] = field(default_factory=list)  # (where, why) of records without an identifier


@dataclass
class Fetcher:
    """GET requests to one base URL, retried with exponential backoff (a 429's or 503's Retry-After wins)."""

    base_url: str
    retries: int = 5
    backoff: float = 1.0  # seconds before the first retry; doubled each time, at most `max_wait`
    max_wait: float = 60.0
    timeout: float = 60.0
    sleep: Callable[[float], object] = time.sleep
    session: requests.Session = field(default_factory=requests.Session)
    requests_made: int = 0

    def page(self, params: dict[str, str]) -> etree._Element:
        """The parsed answer to `params`; HarvestStopped once every try failed (the last failure named)."""
        failure = ""
        wait = 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(wait)
            wait = min(self.backoff * 2 ** attempt, self.max_wait)
            self.requests_made += 1
            try:
                answer = self.session.get(self.base_url, params=params, timeout=self.timeout)
            except requests.RequestException as exc:
                failure = f"no answer ({type(exc).__name__})"
                continue
            if answer.status_code in _RETRIED_STATUSES:
                failure = f"HTTP {answer.status_code}"
                wait = _retry_after(answer.headers.get("Retry-After"), wait, self.max_wait)
                continue
            try:
                root = etree.fromstring(answer.content, _PARSER)
            except etree.XMLSyntaxError as exc:
                if answer.status_code != 200:
                    raise HarvestStopped(f"HTTP {answer.status_code} for {_describe(params)}") from exc
                failure = f"an answer that is not XML, or cut short ({exc})"
                continue
            # Some repositories send their OAI-PMH errors with a 4xx status (Zenodo: 422): read as OAI-PMH.
            if root.tag != f"{{{OAI}}}OAI-PMH" and answer.status_code != 200:
                raise HarvestStopped(f"HTTP {answer.status_code} for {_describe(params)}")
            if root.tag != f"{{{OAI}}}OAI-PMH":
                failure = f"an answer that is not OAI-PMH (root element {etree.QName(root).localname})"
                continue
            return root
        raise HarvestStopped(f"{failure} for {_describe(params)}, after {self.retries + 1} tries")


def _retry_after(value: str | None, wait: float, most: float) -> float:
    try:
        return min(max(float(value), 0.0), most) if value is not None else wait
    except ValueError:
        return wait


def _describe(params: dict[str, str]) -> str:
    token = params.get("resumptionToken")
    return f"resumption token {token!r}" if token else "the first page"


def pages(fetcher: Fetcher, prefix: str, set_spec: str | None = None, from_: str | None = None) -> Iterator[Page]:
    """Every ListRecords page of a harvest, in order; HarvestStopped when it cannot go on."""
    params = {"verb": "ListRecords", "metadataPrefix": prefix}
    if set_spec:
        params["set"] = set_spec
    if from_:
        params["from"] = from_
    seen: set[str] = set()
    while True:
        page = _read(fetcher.page(params), params)
        yield page
        if page.token is None:
            return
        if page.token in seen:
            raise HarvestStopped(f"the source gave resumption token {page.token!r} a second time (a loop)")
        seen.add(page.token)
        params = {"verb": "ListRecords", "resumptionToken": page.token}


def _read(root: etree._Element, params: dict[str, str]) -> Page:
    date = root.findtext("o:responseDate", None, NS)
    error = root.find("o:error", NS)
    if error is not None:
        code = error.get("code", "")
        if code == "noRecordsMatch":
            return Page([], date, None)
        raise HarvestStopped(f"OAI-PMH error {code}: {(error.text or '').strip()} for {_describe(params)}")
    listing = root.find("o:ListRecords", NS)
    if listing is None:
        raise HarvestStopped(f"an answer without ListRecords for {_describe(params)}")
    page = Page([], date, None)
    for index, record in enumerate(listing.iterfind("o:record", NS)):
        header = record.find("o:header", NS)
        identifier = (header.findtext("o:identifier", "", NS) if header is not None else "").strip()
        if not identifier:
            page.problems.append((f"record {index + 1} of the page after {_describe(params)}",
                                  "a record without an identifier"))
            continue
        metadata = record.find("o:metadata", NS)
        page.records.append(Harvested(
            identifier, (header.findtext("o:datestamp", "", NS) or "").strip() or None,  # type: ignore[union-attr]
            header.get("status") == "deleted",  # type: ignore[union-attr]
            next((child for child in metadata if isinstance(child.tag, str)), None) if metadata is not None else None,
        ))
    token = listing.find("o:resumptionToken", NS)
    page.token = (token.text or "").strip() or None if token is not None else None
    return page
