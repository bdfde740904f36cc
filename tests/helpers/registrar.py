"""What the registrar tests share: a DOI and its landing URL, a small DataCite document, the stored receipt."""

from __future__ import annotations

from typing import Any

from lxml import etree

from repository.registrar import read_registration
from repository.storage import Database

DOI = "10.5072/repository.1"
URL = "https://repository.example.org/records/1"


def datacite_xml(doi: str = DOI, title: str = "A dataset") -> bytes:
    """A small DataCite kernel-4 document whose identifier is `doi`."""
    ns = "http://datacite.org/schema/kernel-4"
    root = etree.Element(f"{{{ns}}}resource", nsmap={None: ns})
    etree.SubElement(root, f"{{{ns}}}identifier", identifierType="DOI").text = doi
    creator = etree.SubElement(etree.SubElement(root, f"{{{ns}}}creators"), f"{{{ns}}}creator")
    etree.SubElement(creator, f"{{{ns}}}creatorName").text = "Doe, Jane"
    etree.SubElement(etree.SubElement(root, f"{{{ns}}}titles"), f"{{{ns}}}title").text = title
    etree.SubElement(root, f"{{{ns}}}publisher").text = "Research Repository"
    etree.SubElement(root, f"{{{ns}}}publicationYear").text = "2026"
    etree.SubElement(root, f"{{{ns}}}resourceType", resourceTypeGeneral="Dataset")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def receipt(db: Database, doi: str) -> dict[str, Any] | None:
    """The doi_registrations row of `doi`."""
    with db.read() as conn:
        return read_registration(conn, doi)
