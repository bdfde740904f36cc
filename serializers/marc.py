"""MARC21 slim XML (docs/reference-behaviour.md#marc21): a pymarc record written out with lxml."""

from __future__ import annotations

from typing import Any

from lxml import etree
from pymarc import Field, Indicators, Record, Subfield

from .context import RenderContext
from .text import alternate_identifiers, cleaned, language_marc, license_info, related_identifiers, sub
from .vocabulary import type_info

NS = "http://www.loc.gov/MARC21/slim"
SCHEMA = "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"

# DataCite contributor types -> MARC relator codes (https://www.loc.gov/marc/relators/)
_RELATORS = {
    "ContactPerson": "prc", "DataCollector": "com", "DataCurator": "cur", "DataManager": "dtm",
    "Distributor": "dst", "Editor": "edt", "Funder": "fnd", "HostingInstitution": "his", "Producer": "pro",
    "ProjectLeader": "pdr", "ProjectManager": "pdr", "ProjectMember": "ctb", "RegistrationAgency": "ctb",
    "RegistrationAuthority": "ctb", "RelatedPerson": "asn", "Researcher": "res", "ResearchGroup": "res",
    "RightsHolder": "cph", "Supervisor": "dgs", "Sponsor": "spn", "WorkPackageLeader": "pdr", "Other": "oth",
}


def _field(tag: str, ind: str, *pairs: tuple[str, Any]) -> Field | None:
    """A data field from (code, value) pairs, skipping empty values; None when nothing is left."""
    subfields = [Subfield(code, str(value)) for code, value in pairs if value not in (None, "")]
    if not subfields:
        return None
    return Field(tag=tag, indicators=Indicators(ind[0], ind[1]), subfields=subfields)


def _person(tag: str, person: dict[str, Any], relator: str = "") -> Field | None:
    return _field(
        tag, "  ",
        ("a", person.get("name")),
        ("u", person.get("affiliation")),
        ("0", f"(orcid){person['orcid']}" if person.get("orcid") else None),
        ("0", f"(gnd){person['gnd']}" if person.get("gnd") else None),
        ("4", relator),
    )


def _people(md: dict[str, Any]) -> list[Field | None]:
    creators = md.get("creators", [])
    fields = [_person("100", creators[0])] if creators else []
    fields += [_person("700", c) for c in creators[1:]]
    fields += [_person("700", c, _RELATORS.get(c.get("type", ""), "oth")) for c in md.get("contributors", [])]
    fields += [_person("700", s, "ths") for s in (md.get("thesis") or {}).get("supervisors", [])]
    return fields


def _identifiers(record: dict[str, Any], md: dict[str, Any]) -> list[Field | None]:
    fields = [_field("024", "7 ", ("a", record.get("doi")), ("2", "doi"))]
    for alt in alternate_identifiers(md):
        fields.append(_field("024", "7 ", ("a", alt["identifier"]), ("2", alt.get("scheme")),
                             ("q", "alternateidentifier")))
    return fields


def _publication(md: dict[str, Any]) -> list[Field | None]:
    imprint, part_of = md.get("imprint") or {}, md.get("part_of") or {}
    if imprint and not part_of:
        f260 = _field("260", "  ", ("a", imprint.get("place")), ("b", imprint.get("publisher")),
                      ("c", md.get("publication_date")))
    else:
        f260 = _field("260", "  ", ("c", md.get("publication_date")))
    thesis = md.get("thesis") or {}
    return [
        _field("245", "00", ("a", md.get("title"))),
        _field("250", "  ", ("a", md.get("version"))),
        f260,
        _field("500", "  ", ("a", md.get("notes"))),
        _field("502", "  ", ("c", thesis.get("university"))),
        _field("506", "1 ", ("a", md.get("access_conditions"))),
        _field("520", "  ", ("a", md.get("description"))),
        _field("567", "  ", ("a", md.get("method"))),
    ]


def _rights(md: dict[str, Any], ctx: RenderContext) -> list[Field | None]:
    lic = license_info((md.get("license") or {}).get("id"), ctx.licenses)
    fields = [_field("536", "  ", ("a", g.get("title")), ("c", g.get("code")), ("f", g.get("program")))
              for g in md.get("grants", [])]
    if lic:
        fields.append(_field("540", "  ", ("a", lic["title"] or lic["id"]), ("u", lic["url"])))
    fields.append(_field("542", "  ", ("l", md.get("access_right"))))
    if lic:
        # The reference wrote "cc-by" here whatever the license was; this is the record's own id.
        fields.append(_field("650", "17", ("a", lic["id"]), ("2", "opendefinition.org")))
    for subject in md.get("subjects", []):
        fields.append(_field("650", " 7", ("a", subject.get("term")),
                             ("0", f"({subject.get('scheme', '')}){subject.get('identifier', '')}")))
    fields += [_field("653", "  ", ("a", kw)) for kw in md.get("keywords", [])]
    return fields


def _relations(record: dict[str, Any], md: dict[str, Any], ctx: RenderContext) -> list[Field | None]:
    meeting, part_of, imprint = md.get("meeting") or {}, md.get("part_of") or {}, md.get("imprint") or {}
    fields = [_field("711", "2 ", ("a", meeting.get("title")), ("c", meeting.get("place")),
                     ("d", meeting.get("dates")), ("g", meeting.get("acronym")), ("n", meeting.get("session")),
                     ("p", meeting.get("session_part")))]
    fields += [_field("773", "0 ", ("a", rel["identifier"]), ("i", rel["relation"]), ("n", rel.get("scheme")))
               for rel in related_identifiers(md)]
    if part_of:
        fields.append(_field("773", "0 ", ("a", imprint.get("place")), ("b", imprint.get("publisher")),
                             ("t", part_of.get("title")), ("g", part_of.get("pages")), ("z", imprint.get("isbn"))))
    elif imprint.get("isbn"):
        fields.append(_field("020", "  ", ("a", imprint["isbn"])))
    if md.get("access_right") == "open":
        fields += [_field("856", "40", ("u", f["links"]["self"]), ("s", f.get("size")), ("z", f.get("checksum")))
                   for f in record.get("files", [])]
    if meeting.get("url"):
        fields.append(_field("856", "42", ("u", meeting["url"]), ("y", "Conference website")))
    sets = [f"user-{c['id']}" for c in md.get("communities", [])]
    fields.append(_field("909", "co", ("o", ctx.oai_identifier(record["id"])), *(("p", s) for s in sets)))
    journal = md.get("journal") or {}
    fields.append(_field("909", "c4", ("p", journal.get("title")), ("v", journal.get("volume")),
                         ("n", journal.get("issue")), ("c", journal.get("pages")), ("y", journal.get("year"))))
    return fields


def marc_record(record: dict[str, Any], ctx: RenderContext) -> Record:
    """The record as a pymarc Record (strings already XML-safe)."""
    record = cleaned(record)
    md = record.get("metadata", {})
    info = type_info(md)
    marc = Record(leader=f"00000n{info.marc_leader}m a2200000 u 4500")
    marc.add_field(Field(tag="001", data=str(record["id"])))
    updated = "".join(ch for ch in record.get("updated", "")[:19] if ch.isdigit())
    if updated:
        marc.add_field(Field(tag="005", data=f"{updated}.0"))
    rtype = md.get("resource_type") or {}
    fields = [
        *_identifiers(record, md),
        _field("041", "  ", ("a", language_marc(md.get("language")))),
        *_people(md),
        *_publication(md),
        *_rights(md, ctx),
        *_relations(record, md, ctx),
        _field("942", "  ", ("a", md.get("embargo_date"))),
        _field("980", "  ", ("a", rtype.get("type")), ("b", rtype.get("subtype"))),
        *(_field("980", "  ", ("a", f"user-{c['id']}")) for c in md.get("communities", [])),
        *(_field("999", "c5", ("x", ref)) for ref in md.get("references", [])),
    ]
    # A stable sort by tag keeps repeated fields in record order (pymarc's add_ordered_field is quadratic).
    marc.add_field(*sorted((f for f in fields if f is not None), key=lambda f: f.tag))
    return marc


def marc_element(record: dict[str, Any], ctx: RenderContext, *, schema_location: bool = True) -> etree._Element:
    """`<marc:record>` for one record."""
    marc = marc_record(record, ctx)
    attrib = {f"{{{_XSI}}}schemaLocation": f"{NS} {SCHEMA}"} if schema_location else {}
    root = etree.Element(f"{{{NS}}}record", attrib, nsmap={None: NS, "xsi": _XSI} if attrib else {None: NS})
    _write(root, marc)
    return root


def _write(root: etree._Element, marc: Record) -> None:
    sub(root, f"{{{NS}}}leader", str(marc.leader))
    for field in marc.fields:
        if field.is_control_field():
            sub(root, f"{{{NS}}}controlfield", field.data, tag=field.tag)
            continue
        data = sub(root, f"{{{NS}}}datafield", tag=field.tag, ind1=field.indicator1, ind2=field.indicator2)
        for sf in field.subfields:
            sub(data, f"{{{NS}}}subfield", sf.value, code=sf.code)


def render(record: dict[str, Any], ctx: RenderContext) -> bytes:
    """One record as `application/marcxml+xml`."""
    return etree.tostring(marc_element(record, ctx), xml_declaration=True, encoding="UTF-8", pretty_print=True)


def render_page(records: list[dict[str, Any]], ctx: RenderContext) -> bytes:
    """A search page as a MARCXML `<collection>`."""
    root = etree.Element(f"{{{NS}}}collection", {f"{{{_XSI}}}schemaLocation": f"{NS} {SCHEMA}"},
                         nsmap={None: NS, "xsi": _XSI})
    for record in records:
        root.append(marc_element(record, ctx, schema_location=False))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
