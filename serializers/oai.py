"""OAI-PMH metadata formats: what one is, and the DataCite wrapper; the list of them is the registry's
(`serializers.OAI_FORMATS`), built from the same renderers as the other formats."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lxml import etree

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
    aliases: tuple[str, ...] = ()  # the reference system's prefixes for the same format


def wrapped(kernel: Any) -> ElementRenderer:
    """The element renderer putting a DataCite kernel module's `<resource>` in the `oai_datacite` wrapper."""
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
