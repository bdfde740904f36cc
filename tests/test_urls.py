"""Every URL the service hands out comes from `repository/urls.py`: no other module of `repository/` or
`serializers/` joins a route's path by hand (read from the source with `ast`, as tests/test_layering.py does), and no
template under `repository/templates/` spells one out (read with Jinja's lexer): the pages call the link builder as
`{{ urls.record_html('', record.id) }}`.

A path is hand-built when an f-string or a `+` puts one of the service's route prefixes together with something
else. Route declarations (decorators) and plain constants (docstrings, the robots rules) are not URLs handed out.
In a template, a path is spelled out when an attribute's value (`href`, `action`, `src`, `data-...`) or a string in
a Jinja expression begins with one of the routes of the site's pages; static assets come from `asset()`. The pages'
scripts (`repository/static/`) hold no route either."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest

from repository import urls

ROOT = Path(__file__).resolve().parents[1]
LINK_BUILDER = ROOT / "repository" / "urls.py"
# The beginnings of the service's routes, and the DOI resolver.
ROUTE_PREFIXES = ("/api/", "/records/", "/deposit", "/communities/", "/badge/", "/oai2d", "/sitemap", "/search",
                  "doi.org/")
TEMPLATES = ROOT / "repository" / "templates"
# ... and of the pages' routes, which templates link to.
PAGE_PREFIXES = (*ROUTE_PREFIXES, "/communities", "/account", "/login", "/logout", "/signup")
# The beginning of an attribute's value in a template's text (up to its end or the next `{{`).
ATTRIBUTE = re.compile(r"""[\w:-]+=(["'])([^"']*)""")


def hand_built(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, literal part) of each f-string or `+` in `tree` whose literal parts name a route, decorators left out."""
    declared = {id(node) for owner in ast.walk(tree)
                if isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                for decorator in owner.decorator_list for node in ast.walk(decorator)}  # fmt: skip
    for node in ast.walk(tree):
        if id(node) in declared:
            continue
        if isinstance(node, ast.JoinedStr):
            parts = node.values
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            parts = [node.left, node.right]
        else:
            continue
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str) and any(
                    prefix in part.value for prefix in ROUTE_PREFIXES):
                yield node.lineno, part.value


@pytest.mark.slow  # 0.4 s and more of work
def test_no_url_is_built_outside_the_link_builder() -> None:
    found = []
    for package in ("repository", "serializers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == LINK_BUILDER or "migrations" in path.parts:
                continue
            source = path.read_text(encoding="utf-8")
            if not any(prefix in source for prefix in ROUTE_PREFIXES):
                continue  # no route named at all: nothing to parse
            found += [f"{path.relative_to(ROOT)}:{line}: {text!r}"
                      for line, text in hand_built(ast.parse(source, str(path)))]
    assert found == []


def _is_route(value: str, home: bool) -> bool:
    """Whether a value begins with a route of the site (`home`: the front page `/` alone counts too)."""
    return value.startswith(PAGE_PREFIXES) or "doi.org/" in value or (home and value == "/")


def spelled_out(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each route path a template spells out: an attribute value, or a string in a Jinja expression."""
    for line, kind, value in jinja2.Environment().lex(source):
        if kind == "data":
            for match in ATTRIBUTE.finditer(value):
                if _is_route(match.group(2), home=True):
                    yield line + value[:match.start()].count("\n"), match.group(0)
        elif kind == "string" and _is_route(value[1:-1], home=False):
            yield line, value


def test_no_template_spells_out_a_route() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}: {text}"
             for path in sorted(TEMPLATES.rglob("*.html"))
             for line, text in spelled_out(path.read_text(encoding="utf-8"))]
    assert found == []


def test_no_script_spells_out_a_route() -> None:
    """The pages' scripts take their addresses from the page (a link, a form, a `data-` attribute)."""
    literal = re.compile(r"""["'`](/[^"'`]*)""")
    found = [f"{path.relative_to(ROOT)}:{number}: {match.group(1)}"
             for path in sorted((ROOT / "repository" / "static").rglob("*.js"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for match in literal.finditer(line) if _is_route(match.group(1), home=False)]
    assert found == []


@pytest.mark.parametrize(("source", "expected"), [
    ('<a href="/records/{{ record.id }}">', [(1, 'href="/records/')]),
    ('\n<form method="post" action="/deposit/{{ dep.id }}/edit">', [(2, 'action="/deposit/')]),
    ('<a href="/">Home</a> <a href="/search?sort=mostrecent">', [(1, 'href="/'), (1, 'href="/search?sort=mostrecent')]),
    ("<div data-refresh='/deposit/{{ dep.id }}/files'>", [(1, "data-refresh='/deposit/")]),
    ('<a href="https://doi.org/{{ identifier }}">', [(1, 'href="https://doi.org/')]),
    ("<a href=\"{{ '/communities/' ~ c.id ~ '/' }}\">", [(1, "'/communities/'")]),
    ('<a href="{{ urls.record_html(\'\', record.id) }}">', []),
    ('<link rel="stylesheet" href="{{ asset(\'site.css\') }}">', []),
    ("<a href=\"?status={{ value }}\">{{ x | replace('/', '%2F') }}", []),
    ("<p>It becomes the address /communities/&lt;identifier&gt;/.</p>", []),
    ("{# <script src=\"/records/x.js\"> #}", []),
])
def test_spelled_out_finds_what_it_should(source: str, expected: list[tuple[int, str]]) -> None:
    assert list(spelled_out(source)) == expected


@pytest.mark.parametrize(("source", "expected"), [
    ('u = f"{base}/api/records/{recid}"', [(1, "/api/records/")]),
    ('u = base + "/records/"', [(1, "/records/")]),
    ('u = f"https://doi.org/{doi}"', [(1, "https://doi.org/")]),
    ('@bp.get(f"/sitemap-<{MAX}:number>.xml")\ndef f(): pass', []),
    ('"""See /api/records/."""', []),
    ('u = f"{base}/healthz"', []),
])
def test_hand_built_finds_what_it_should(source: str, expected: list[tuple[int, str]]) -> None:
    assert list(hand_built(ast.parse(source))) == expected


def test_the_links_of_a_record_and_its_files() -> None:
    base = "https://repo.example"
    assert urls.record_api(base, 7) == "https://repo.example/api/records/7"
    assert urls.record_latest_api(base, 7) == "https://repo.example/api/records/7/versions/latest"
    assert urls.record_archive(base, 7, "?format=bagit") == "https://repo.example/api/records/7/files-archive?format=bagit"
    assert urls.bucket_object(base, "b1", "a b/c.csv") == "https://repo.example/api/files/b1/a%20b/c.csv"
    assert urls.deposit_file_api(base, 7, "f1") == "https://repo.example/api/deposit/depositions/7/files/f1"
    assert urls.license_api(base, "cc/by") == "https://repo.example/api/licenses/cc%2Fby"
    assert urls.community_html("", "bog") == "/communities/bog/"
    assert urls.community_id_url(base, "bog") == "https://repo.example/communities/bog"
    assert urls.community_request_api(base, "bog", 3) == "https://repo.example/api/communities/bog/requests/3"
    assert urls.badge(base, "10.5281/x.1") == "https://repo.example/badge/doi/10.5281/x.1.svg"
    assert urls.oai(base) == "https://repo.example/oai2d"
    assert urls.sitemap(base) == "https://repo.example/sitemap.xml"
    assert urls.sitemap(base, "communities-0") == "https://repo.example/sitemap-communities-0.xml"
    assert urls.doi("10.5281/x.1") == "https://doi.org/10.5281/x.1"


KEYS = ["data.csv", "a b/c (1).csv", "100%+x?&y=z#.txt", "ünï/cödé's.tsv"]


@pytest.mark.parametrize("key", KEYS)
def test_the_page_links_read_as_the_templates_wrote_them(key: str) -> None:
    """The links the templates joined by hand with Jinja's filters, as the link builder gives them."""
    def jinja(source: str) -> str:
        return jinja2.Environment(autoescape=True).from_string(source).render(key=key, id=7)

    assert urls.record_preview_html("", 7, key) == jinja("/records/{{ id }}/preview/{{ key | urlencode }}")
    assert urls.deposit_file_action_html("", 7, key, "rename") == jinja(
        "/deposit/{{ id }}/files/{{ key | urlencode | replace('/', '%2F') }}/rename")
    assert urls.record_search_html("", {"keywords": key}) == jinja("/search?{{ {'keywords': key} | urlencode }}")
    assert urls.sign_in_oidc_html("", key) == jinja("/login/oidc/?next={{ key | urlencode }}")
    assert urls.sign_in_html("", urls.access_request_html("", 7)) == "/login/?next=/records/7/access/request"
    assert urls.sign_in_html("") == "/login/" and urls.sign_in_oidc_html("", "") == "/login/oidc/"


def test_the_links_of_the_pages() -> None:
    assert urls.record_search_html("") == "/search"
    assert urls.record_search_html("", {"sort": "mostrecent"}) == "/search?sort=mostrecent"
    assert urls.oai_request("", "ListRecords", metadataPrefix="oai_dc", set="user-bog") == \
        "/oai2d?verb=ListRecords&metadataPrefix=oai_dc&set=user-bog"
    assert urls.oai_request("", "Identify") == "/oai2d?verb=Identify"
    assert urls.community_edit_html("", "bog") == "/communities/bog/edit"
    assert urls.community_decision_html("", "bog", 3, "accept") == "/communities/bog/curate/3/accept"
    assert urls.deposit_action_html("", 7, "newversion") == "/deposit/7/newversion"
    assert urls.deposit_files_order_html("", 7) == "/deposit/7/files/order"
    assert urls.applications_html("") == "/account/settings/applications/"
    assert urls.openapi("") == "/api/openapi.json"
