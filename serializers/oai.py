"""OAI-PMH metadata formats: the `<metadata>` content per metadataPrefix, from the same renderers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from . import datacite, datacite3, dublincore, marc
from .context import RenderContext
from .text import sub

WRAPPER_NS = "http://schema.datacite.org/oai/oai-1.0/"
WRAPPER_SCHEMA = "http://schema.datacite.org/oai/oai-1.0/oai.xsd"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"

ElementRenderer = Callable[[dict[str, Any], RenderContext], etree._Element]


@dataclass(frozen=True)
class OaiFormat:
    """One OAI-PMH metadata format as ListMetadataFormats announces it."""

    prefix: str
    namespace: str
    schema: str
    element: ElementRenderer  # record, ctx -> the element to put inside <metadata>
    aliases: tuple[str, ...] = ()
    compliant: bool = True  # False for bare DataCite, which the spec calls "not OAI-PMH 2.0 compliant"


def _wrapped(kernel: Any) -> ElementRenderer:
    def element(record: dict[str, Any], ctx: RenderContext) -> etree._Element:
        """DataCite `<resource>` inside the `oai_datacite` wrapper (reference §12.2)."""
        root = etree.Element(f"{{{WRAPPER_NS}}}oai_datacite", {f"{{{_XSI}}}schemaLocation": f"{WRAPPER_NS} {WRAPPER_SCHEMA}"},
                             nsmap={None: WRAPPER_NS, "xsi": _XSI})
        sub(root, f"{{{WRAPPER_NS}}}schemaVersion", kernel.VERSION)
        sub(root, f"{{{WRAPPER_NS}}}datacentreSymbol", ctx.datacentre_symbol)
        sub(root, f"{{{WRAPPER_NS}}}isReferenceQuality", "true")
        payload = sub(root, f"{{{WRAPPER_NS}}}payload")
        payload.append(kernel.resource_element(record, ctx))
        return root

    return element


_FORMATS = (
    OaiFormat("oai_registry", WRAPPER_NS, WRAPPER_SCHEMA, _wrapped(datacite), ("oai_datacite",)),
    OaiFormat("oai_registry4", WRAPPER_NS, WRAPPER_SCHEMA, _wrapped(datacite), ("oai_datacite4",)),
    OaiFormat("oai_registry3", WRAPPER_NS, WRAPPER_SCHEMA, _wrapped(datacite3), ("oai_datacite3",)),
    OaiFormat("registry", datacite.NS, datacite.SCHEMA, datacite.resource_element, ("datacite", "datacite4"),
              compliant=False),
    OaiFormat("registry3", datacite3.NS, datacite3.SCHEMA, datacite3.resource_element, ("datacite3",),
              compliant=False),
    OaiFormat("oai_dc", dublincore.NS, dublincore.SCHEMA, dublincore.dc_element),
    OaiFormat("marc21", marc.NS, marc.SCHEMA, marc.marc_element, ("marcxml",)),
)

# Every prefix and alias -> its format; ListMetadataFormats lists each of OAI_FORMATS with its aliases.
OAI_FORMATS: dict[str, OaiFormat] = {fmt.prefix: fmt for fmt in _FORMATS}
OAI_PREFIXES: dict[str, OaiFormat] = {name: fmt for fmt in _FORMATS for name in (fmt.prefix, *fmt.aliases)}


def oai_format(prefix: str) -> OaiFormat | None:
    """The format of a metadataPrefix or one of the reference's alias prefixes; None if unknown."""
    return OAI_PREFIXES.get(prefix)
