"""Names in formatted citations (serializers.citeproc_names, serializers.csl): compound given names are initialised
as CSL describes ("Seo-yeon" -> "S.-y."), particles stay whole, styles that keep given names whole keep them, and the
citation number of numbered styles is followed by a space. Pinned against the expected entry of each style."""

from __future__ import annotations

import pytest

from serializers import csl
from serializers.citeproc_names import initials, normalized
from serializers.context import RenderContext

RECORD = {
    "id": 7, "doi": "10.5281/zenodo.7", "links": {},
    "metadata": {"title": "Soil moisture", "publication_date": "2021-03-04",
                 "resource_type": {"type": "dataset", "title": "Dataset"},
                 "creators": [{"name": "Lim, Seo-yeon"}, {"name": "van der Berg, Jan"},
                              {"name": "de la Cruz, María José"}, {"name": "Dupont, Jean-Luc"}]},
}  # fmt: skip
EXPECTED = {
    "apa": "Lim, S.-y., van der Berg, J., de la Cruz, M. J., & Dupont, J.-L. (2021). Soil moisture [Dataset]. "
           "Publisher. https://doi.org/10.5281/zenodo.7",
    "chicago-author-date": "Lim, Seo-yeon, Jan van der Berg, María José de la Cruz, and Jean-Luc Dupont. 2021. "
                           "“Soil Moisture”. Publisher, March 4. https://doi.org/10.5281/zenodo.7.",
    "ieee": "[1] S.-y. Lim, J. van der Berg, M. J. de la Cruz, and J.-L. Dupont, “Soil moisture”. Publisher, "
            "Mar. 04, 2021. doi: 10.5281/zenodo.7.",
    "nature": "1. Lim, S.-y., van der Berg, J., de la Cruz, M. J. & Dupont, J.-L. Soil moisture. Publisher "
              "https://doi.org/10.5281/zenodo.7 (2021).",
    "harvard-cite-them-right": "Lim, S.-y. et al. (2021) “Soil moisture”. Publisher. Available at: "
                               "https://doi.org/10.5281/zenodo.7.",
    "elsevier-vancouver": "[1] Lim S-y, van der Berg J, de la Cruz MJ, Dupont J-L. Soil moisture 2021. "
                          "https://doi.org/10.5281/zenodo.7.",
    "modern-language-association": "Lim, Seo-yeon, et al. “Soil Moisture”. Publisher, 4 Mar. 2021, "
                                   "https://doi.org/10.5281/zenodo.7.",
}  # fmt: skip


@pytest.mark.parametrize("style", sorted(EXPECTED))
def test_tricky_names_in_each_style(style: str) -> None:
    ctx = RenderContext(base_url="https://repo.example", doi_prefix="10.5281", datacentre_symbol="X",
                        publisher="Publisher", style=style, locale="en-US", licenses={}, host="repo.example")  # fmt: skip
    assert csl.citations([RECORD], ctx) == [EXPECTED[style]]


@pytest.mark.parametrize(("given", "mark", "hyphen", "expected"), [
    ("Seo-yeon", ". ", True, "S.-y."), ("Jean-Luc", ". ", True, "J.-L."), ("Jean-Luc", ". ", False, "J. L."),
    ("María José", ".", True, "M.J."), ("Ludwig van", ". ", True, "L. van"), ("J.-L.", ". ", True, "J.-L."),
    ("Ji-Hoon", "", True, "J-H"),
])  # fmt: skip
def test_initials(given: str, mark: str, hyphen: bool, expected: str) -> None:
    assert initials(given, mark, hyphen) == expected


@pytest.mark.parametrize(("given", "mark", "expected"), [
    ("Seo-yeon", ". ", "Seo-yeon"), ("J.L.", ". ", "J. L."), ("J.L.", "", "JL"), ("J. Jane", ".", "J. Jane"),
])  # fmt: skip
def test_names_kept_whole_only_normalise_their_initials(given: str, mark: str, expected: str) -> None:
    assert normalized(given, mark) == expected
