"""Trees built in place for speed must equal what the libraries build for the same data (they stay the reference):
serializers.datacite_xml against the `datacite` package's `schema45.dump_etree`, and serializers.dublincore
against dcxml's `simpledc.dump_etree`."""

from __future__ import annotations

import pytest
from datacite import schema45
from dcxml import simpledc
from lxml import etree
from reference_records import all_records

from serializers import dublincore
from serializers.datacite import NS, datacite_json
from serializers.datacite_xml import resource_tree
from serializers.text import cleaned


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


@pytest.mark.parametrize("name", sorted(all_records()))
def test_in_place_dublin_core_equals_dcxml(records, ctx, name):
    """serializers.dublincore builds `<oai_dc:dc>` in place too: the same as dcxml's `simpledc.dump_etree`."""
    data = {key: [v for v in values if v] for key, values in dublincore.dc_json(cleaned(records[name]), ctx).items()}
    theirs = simpledc.dump_etree(data, nsmap=dublincore._NSMAP)
    assert etree.tostring(dublincore.dc_element(records[name], ctx)) == etree.tostring(theirs)
