"""serializers.datacite_xml builds DataCite XML in place for speed: it must write exactly what the `datacite`
package's own `schema45.dump_etree` writes for the same JSON (the package stays the reference)."""

from __future__ import annotations

import pytest
from datacite import schema45
from lxml import etree
from reference_records import all_records

from serializers.datacite import NS, datacite_json
from serializers.datacite_xml import resource_tree


def _package_tree(data: dict) -> etree._Element:
    root = schema45.dump_etree(data)
    for elem in root.iter():  # the package leaves children un-namespaced in memory; serialized they are the same
        if isinstance(elem.tag, str) and not elem.tag.startswith("{"):
            elem.tag = f"{{{NS}}}{elem.tag}"
    return root


@pytest.mark.parametrize("name", sorted(all_records()))
def test_in_place_tree_equals_the_packages(records, ctx, name):
    data = datacite_json(records[name], ctx)
    ours = etree.tostring(resource_tree(data), encoding="UTF-8")
    theirs = etree.tostring(_package_tree(data), encoding="UTF-8")
    assert ours == theirs
