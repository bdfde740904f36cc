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
XSI = "http://www.w3.org/2001/XMLSchema-instance"
# The OAI-PMH envelope's namespace and its root's declarations: a record's `<metadata>` is serialized as it is
# inside that root (`metadata_body`), so it can be stored and put in any envelope as bytes.
ENVELOPE_NS = "http://www.openarchives.org/OAI/2.0/"
_ENVELOPE_NSMAP = {None: ENVELOPE_NS, "xsi": XSI}

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
        """DataCite `<resource>` inside the `oai_datacite` wrapper (docs/reference-behaviour.md#oai-metadata-formats)."""
        root = etree.Element(f"{{{WRAPPER_NS}}}oai_datacite", {f"{{{XSI}}}schemaLocation": f"{WRAPPER_NS} {WRAPPER_SCHEMA}"},
                             nsmap={None: WRAPPER_NS, "xsi": XSI})
        sub(root, f"{{{WRAPPER_NS}}}schemaVersion", kernel.VERSION)
        sub(root, f"{{{WRAPPER_NS}}}datacentreSymbol", ctx.datacentre_symbol)
        sub(root, f"{{{WRAPPER_NS}}}isReferenceQuality", "true")
        payload = sub(root, f"{{{WRAPPER_NS}}}payload")
        payload.append(kernel.resource_element(record, ctx))
        return root

    return element


def metadata_body(element: etree._Element) -> bytes:
    """`element` serialized as it is inside an envelope's `<metadata>`: namespaces the envelope's root declares
    (xsi) are not declared again, exactly as when the element is appended to the envelope itself."""
    root = etree.Element(f"{{{ENVELOPE_NS}}}OAI-PMH", nsmap=_ENVELOPE_NSMAP)
    etree.SubElement(root, f"{{{ENVELOPE_NS}}}metadata").append(element)
    text = etree.tostring(root, encoding="UTF-8")
    return text[text.index(b"<metadata>") + len(b"<metadata>") : text.rindex(b"</metadata>")]


def rendition_name(fmt: OaiFormat) -> str:
    """The format's name in the renditions table."""
    return f"oai:{fmt.prefix}"


def metadata_renderer(fmt: OaiFormat) -> Callable[[dict[str, Any], RenderContext], bytes]:
    """record, ctx -> the body of its `<metadata>` in `fmt`."""

    def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
        return metadata_body(fmt.element(record, ctx))

    return render
