"""Names in formatted citations (serializers.citeproc_names, serializers.csl): compound given names are initialised
as CSL describes ("Seo-yeon" -> "S.-y."), particles stay whole, styles that keep given names whole keep them, and the
citation number of numbered styles is followed by a space. Pinned against the expected entry of each style."""

from __future__ import annotations

import pytest

from serializers import csl
from serializers.citeproc_names import initials, normalized, particle_parts
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


# Particles first: a non-dropping particle leads the name unless the style demotes it in inverted names (Chicago's
# default "display-and-sort", as the CSL test suite's name_NonDroppingParticleDefault: "Roe, Jane van"); a dropping
# particle follows the given name in inverted names and precedes the family name otherwise.
PARTICLES_FIRST = {
    **RECORD, "metadata": {**RECORD["metadata"], "creators": [
        {"name": "van der Berg, Jan"}, {"name": "Beethoven, Ludwig van"}, {"name": "de la Cruz, María José"}]},
}  # fmt: skip
EXPECTED_PARTICLES_FIRST = {
    "apa": "van der Berg, J., Beethoven, L. van, & de la Cruz, M. J. (2021). Soil moisture [Dataset]. Publisher. "
           "https://doi.org/10.5281/zenodo.7",
    "chicago-author-date": "Berg, Jan van der, Ludwig van Beethoven, and María José de la Cruz. 2021. "
                           "“Soil Moisture”. Publisher, March 4. https://doi.org/10.5281/zenodo.7.",
    "ieee": "[1] J. van der Berg, L. van Beethoven, and M. J. de la Cruz, “Soil moisture”. Publisher, Mar. 04, 2021. "
            "doi: 10.5281/zenodo.7.",
    "nature": "1. van der Berg, J., Beethoven, L. van & de la Cruz, M. J. Soil moisture. Publisher "
              "https://doi.org/10.5281/zenodo.7 (2021).",
    "harvard-cite-them-right": "van der Berg, J., Beethoven, L. van and de la Cruz, M.J. (2021) “Soil moisture”. "
                               "Publisher. Available at: https://doi.org/10.5281/zenodo.7.",
    "elsevier-vancouver": "[1] van der Berg J, Beethoven L van, de la Cruz MJ. Soil moisture 2021. "
                          "https://doi.org/10.5281/zenodo.7.",
    "american-chemical-society": "(1) van der Berg, J.; Beethoven, L. van; de la Cruz, M. J. Soil Moisture, 2021. "
                                 "https://doi.org/10.5281/zenodo.7.",
    "american-medical-association": "1. van der Berg J, Beethoven L van, de la Cruz MJ. Soil moisture. Published "
                                    "online March 4, 2021. doi:10.5281/zenodo.7",
}  # fmt: skip


def _context(style: str) -> RenderContext:
    return RenderContext(base_url="https://repo.example", doi_prefix="10.5281", datacentre_symbol="X",
                         publisher="Publisher", style=style, locale="en-US", licenses={}, host="repo.example")  # fmt: skip


@pytest.mark.parametrize("style", sorted(EXPECTED))
def test_tricky_names_in_each_style(style: str) -> None:
    assert csl.citations([RECORD], _context(style)) == [EXPECTED[style]]


@pytest.mark.parametrize("style", sorted(EXPECTED_PARTICLES_FIRST))
def test_particles_leading_the_list_in_each_style(style: str) -> None:
    assert csl.citations([PARTICLES_FIRST], _context(style)) == [EXPECTED_PARTICLES_FIRST[style]]


@pytest.mark.parametrize(("family", "given", "expected"), [
    ("van der Berg", "Jan", {"family": "Berg", "given": "Jan", "non-dropping-particle": "van der"}),
    ("Beethoven", "Ludwig van", {"family": "Beethoven", "given": "Ludwig", "dropping-particle": "van"}),
    ("Van Gogh", "Vincent", {"family": "Van Gogh", "given": "Vincent"}),  # capitalised: part of the family name
    ("hooks", "bell", {"family": "hooks", "given": "bell"}),  # not a particle; a lone word stays the name
    ("van", "Jan", {"family": "van", "given": "Jan"}),
    ("de la Fontaine", "Jean de", {"family": "Fontaine", "given": "Jean", "non-dropping-particle": "de la",
                                   "dropping-particle": "de"}),
])  # fmt: skip
def test_particles_split_from_the_name(family: str, given: str, expected: dict[str, str]) -> None:
    assert particle_parts(family, given) == expected


@pytest.mark.parametrize(("given", "mark", "hyphen", "expected"), [
    ("Seo-yeon", ". ", True, "S.-y."), ("Jean-Luc", ". ", True, "J.-L."), ("Jean-Luc", ". ", False, "J. L."),
    ("María José", ".", True, "M.J."), ("Ludwig van", ". ", True, "L. van"), ("J.-L.", ". ", True, "J.-L."),
    ("Ji-Hoon", "", True, "J-H"), ("Jean-Luc", ".", False, "J.L."), ("Seo-yeon", "", False, "Sy"),
])  # fmt: skip
def test_initials(given: str, mark: str, hyphen: bool, expected: str) -> None:
    assert initials(given, mark, hyphen) == expected


@pytest.mark.parametrize(("given", "mark", "expected"), [
    ("Seo-yeon", ". ", "Seo-yeon"), ("J.L.", ". ", "J. L."), ("J.L.", "", "JL"), ("J. Jane", ".", "J. Jane"),
])  # fmt: skip
def test_names_kept_whole_only_normalise_their_initials(given: str, mark: str, expected: str) -> None:
    assert normalized(given, mark) == expected
