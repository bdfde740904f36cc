"""Talk OAI-PMH to the app over HTTP; every response is parsed and validated against OAI-PMH.xsd and its format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lxml import etree

from helpers import xsd

NS = {
    "o": "http://www.openarchives.org/OAI/2.0/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "oai_dc": "http://www.openarchives.org/OAI/2.0/oai_dc/",
    "id": "http://www.openarchives.org/OAI/2.0/oai-identifier",
    "marc": "http://www.loc.gov/MARC21/slim",
    "w": "http://schema.datacite.org/oai/oai-1.0/",
    "d4": "http://datacite.org/schema/kernel-4",
    "d3": "http://datacite.org/schema/kernel-3",
}

# The Identify description's schema, added to the shared offline tables (its copy is among the official ones).
_IDENTIFIER_URL = "http://www.openarchives.org/OAI/2.0/oai-identifier.xsd"
xsd.FORMATS.setdefault("oai_identifier", (NS["id"], _IDENTIFIER_URL))

# metadataPrefix -> (schemas the response is validated with, namespace of the element inside <metadata>).
PREFIXES: dict[str, tuple[tuple[str, ...], str]] = {
    "oai_registry": (("oai_datacite", "datacite4"), NS["w"]),
    "oai_registry4": (("oai_datacite", "datacite4"), NS["w"]),
    "oai_registry3": (("oai_datacite", "datacite3"), NS["w"]),
    "oai_datacite": (("oai_datacite", "datacite4"), NS["w"]),
    "oai_datacite4": (("oai_datacite", "datacite4"), NS["w"]),
    "oai_datacite3": (("oai_datacite", "datacite3"), NS["w"]),
    "registry": (("datacite4",), NS["d4"]),
    "datacite": (("datacite4",), NS["d4"]),
    "datacite4": (("datacite4",), NS["d4"]),
    "registry3": (("datacite3",), NS["d3"]),
    "datacite3": (("datacite3",), NS["d3"]),
    "oai_dc": (("oai_dc",), NS["oai_dc"]),
    "marc21": (("marc21",), NS["marc"]),
    "marcxml": (("marc21",), NS["marc"]),
}
CANONICAL = ("oai_registry", "oai_registry3", "oai_registry4", "registry", "registry3", "oai_dc", "marc21")

# The host the OAI tests serve under (identifiers are oai:<host>:<recid>).
HOST = "repository.example.org"


def xpath_one(tree: Any, path: str) -> Any:
    """The single match of `path`; fails unless there is exactly one."""
    found = tree.xpath(path, namespaces=NS)
    assert len(found) == 1, f"{path}: {len(found)} matches"
    return found[0]


@dataclass
class Reply:
    """One parsed OAI-PMH response."""

    status: int
    tree: etree._Element
    content_type: str

    def xpath(self, path: str) -> list:
        return self.tree.xpath(path, namespaces=NS)

    def one(self, path: str) -> Any:
        return xpath_one(self.tree, path)

    @property
    def error(self) -> str | None:
        codes = self.xpath("/o:OAI-PMH/o:error/@code")
        return codes[0] if codes else None

    @property
    def identifiers(self) -> list[str]:
        return [str(i) for i in self.xpath("//o:header/o:identifier/text()")]

    @property
    def token(self) -> etree._Element | None:
        found = self.xpath("//o:resumptionToken")
        return found[0] if found else None

    @property
    def request_attributes(self) -> dict[str, str]:
        return dict(self.one("/o:OAI-PMH/o:request").attrib)


class Oai:
    """`get(verb=..., ...)`/`post(...)` against /oai2d; remembers a list's metadataPrefix for its token pages."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.prefix: str | None = None

    def get(self, **args: str) -> Reply:
        return self._reply(self.client.get("/oai2d", query_string=args), args)

    def post(self, **args: str) -> Reply:
        return self._reply(self.client.post("/oai2d", data=args), args)

    def _reply(self, response: Any, args: dict[str, str]) -> Reply:
        reply = Reply(response.status_code, etree.fromstring(response.data), response.headers["Content-Type"])
        assert reply.content_type == "text/xml; charset=utf-8"
        if "metadataPrefix" in args:
            self.prefix = args["metadataPrefix"]
        validate(reply, self.prefix if "resumptionToken" in args else args.get("metadataPrefix"))
        return reply


def validate(reply: Reply, prefix: str | None) -> None:
    """OAI-PMH.xsd plus the schema of whatever the response carries; <metadata> children in the prefix's namespace."""
    formats: tuple[str, ...] = ()
    if reply.xpath("//o:metadata"):
        formats, namespace = PREFIXES[prefix or ""]
        assert {etree.QName(e).namespace for e in reply.xpath("//o:metadata/*")} == {namespace}
    elif reply.xpath("//o:Identify/o:description"):
        formats = ("oai_identifier",)
    elif reply.xpath("//o:setDescription"):
        formats = ("oai_dc",)
    xsd.validate_oai(reply.tree, *formats)
