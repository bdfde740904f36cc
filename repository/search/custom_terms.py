"""Custom metadata terms: the keys a deposit's `custom` object may use and the `custom` search filter knows.

Two kinds, as in the reference system: Darwin Core keywords (`dwc:genus: ["Felis"]`, a list of strings) and OBO
Relation Ontology relationships (`obo:RO_0002453: [{"subject": ["Felis catus"], "object": ["Ctenocephalides"]}]`,
found by the filter as `[obo:RO_0002453]:[Felis catus:Ctenocephalides]`).
"""

from __future__ import annotations

KEYWORD_TERMS: frozenset[str] = frozenset({
    "dwc:kingdom", "dwc:phylum", "dwc:class", "dwc:order", "dwc:family", "dwc:genus", "dwc:specificEpithet",
    "dwc:scientificName", "dwc:scientificNameAuthorship", "dwc:taxonRank", "dwc:basisOfRecord",
    "dwc:catalogNumber", "dwc:collectionCode", "dwc:country", "dwc:locality", "dwc:recordedBy", "dwc:eventDate",
    "dwc:typeStatus",
})  # fmt: skip
RELATIONSHIP_TERMS: frozenset[str] = frozenset({
    "obo:RO_0002453", "obo:RO_0002454", "obo:RO_0002455", "obo:RO_0002456", "obo:RO_0002444",
    "obo:RO_0002445", "obo:RO_0002470", "obo:RO_0002471", "obo:RO_0002556", "obo:RO_0002557",
})  # fmt: skip
CUSTOM_TERMS: frozenset[str] = KEYWORD_TERMS | RELATIONSHIP_TERMS
