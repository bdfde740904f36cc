"""The `q` parser: query_string forms -> the backend-neutral tree, and 400s that name the problem."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from repository.errors import BadRequest
from repository.search.query import (
    Bool,
    Exists,
    MatchAll,
    MatchNone,
    Range,
    Regex,
    Term,
    Text,
    Wildcard,
    parse_query,
    resolve_field,
)


def d(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(("q", "tree"), [
    ("", MatchAll()),
    ("   ", MatchAll()),
    ("*", MatchAll()),
    ("doi:10.5281*zenodo.123", Wildcard("doi", "10.5281*zenodo.123")),
    ("conceptdoi:10.5281/zenodo.1", Term("conceptdoi", "10.5281/zenodo.1")),
    ("DOI:10.5281/ZENODO.1".replace("DOI", "doi"), Term("doi", "10.5281/zenodo.1")),
    ("10.5281/zenodo.123", Bool(should=(Term("doi", "10.5281/zenodo.123"), Term("conceptdoi", "10.5281/zenodo.123")))),
    ("doi:10.5281/zenodo.123", Term("doi", "10.5281/zenodo.123")),
    ("conceptrecid:12", Term("conceptrecid", 12)),
    ('keywords:("a-b")', Term("keywords", "a-b")),
    ("keywords:A-b", Term("keywords", "A-b")),  # keywords keep their case
    ("title:Ocean", Text("title", "Ocean")),
    ('title:"deep ocean"', Text("title.exact", "deep ocean")),  # a quoted phrase: the unstemmed companion
    ("title:oce*", Wildcard("title", "oce*")),
    ("title:OC?an", Wildcard("title", "oc?an")),
    ("filename:a\\*b", Term("filename", "a*b")),  # an escaped star is literal
    ("filename:a\\*b*", Wildcard("filename", "a\\*b*")),
    ("title:/oc.an/", Regex("title", "oc.an")),
    ("_exists_:doi", Exists("doi")),
    ("doi:*", Exists("doi")),
    ("_exists_:_files.key", Exists("filename")),
    ("is_last:true", Term("relations.version.is_last", True)),
    ("metadata.title:x", Text("title", "x")),
    ("_stats.views:3", Term("stats.views", 3)),
    ("size:[10 TO 20}", Range("size", gte=10, lt=20)),
    ("size:>=10", Range("size", gte=10)),
    ("size:<10", Range("size", lt=10)),
    ("size:>10", Range("size", gt=10)),
    ("size:[* TO 5]", Range("size", lte=5)),
    ("publication_date:[2020 TO 2021]", Range("publication_date", gte=d(2020, 1, 1), lt=d(2022, 1, 1))),
    ("publication_date:{2020 TO 2021}", Range("publication_date", gte=d(2021, 1, 1), lt=d(2021, 1, 1))),
    ("publication_date:2020-02", Range("publication_date", gte=d(2020, 2, 1), lt=d(2020, 3, 1))),
    ("created:>2020-02-03", Range("created", gte=d(2020, 2, 4))),
    ("created:[2020-02-03 TO 2020-02-03]", Range("created", gte=d(2020, 2, 3), lt=d(2020, 2, 4))),
    ("created:<=2020-02-03T10\\:00\\:00+02\\:00", Range("created", lt=d(2020, 2, 3, 8, 0, 1))),
    ('title:""', MatchNone()),
    ("a AND b", Bool(must=(parse_query("a"), parse_query("b")))),
    ("a OR b", Bool(should=(parse_query("a"), parse_query("b")))),
    ("a b", Bool(should=(parse_query("a"), parse_query("b")))),  # default operator OR
    ("a +b -c", Bool(must=(parse_query("b"),), should=(parse_query("a"),), must_not=(parse_query("c"),))),
    ("NOT a", Bool(must=(MatchAll(),), must_not=(parse_query("a"),))),
    ("-title:a", Bool(must=(MatchAll(),), must_not=(Text("title", "a"),))),
    ("title:(a OR b)", Bool(should=(Text("title", "a"), Text("title", "b")))),
    ("title:a^2", Text("title", "a")),
    ("title:a~1", Text("title", "a")),
])
def test_forms(q, tree):
    assert parse_query(q) == tree


def test_bare_words_search_text_and_keyword_fields():
    tree = parse_query("sensors")
    assert isinstance(tree, Bool) and Text("title", "sensors") in tree.should
    assert Text("description", "sensors") in tree.should and Term("keywords", "sensors") in tree.should
    number = parse_query("1234")
    assert Term("recid", 1234) in number.should and Term("conceptrecid", 1234) in number.should


def test_now_is_a_date():
    tree = parse_query("created:[2020 TO now]")
    assert tree.gte == d(2020, 1, 1) and tree.lt > datetime.now(UTC)


def test_field_globs_expand():
    assert {f.name for f in resolve_field("journal.*")} == {"journal.title", "journal.volume", "journal.issue",
                                                            "journal.pages", "journal.year"}


@pytest.mark.parametrize(("q", "words"), [
    ("title:(ocean", "syntax"),
    ("title:", "syntax"),
    ("a AND", "syntax"),
    ('"unclosed', "syntax"),
    ("nosuchfield:x", 'Unknown search field "nosuchfield"'),
    ("size:big", '"size" takes a whole number'),
    ("is_last:maybe", "true or false"),
    ("title:[a TO b]", "Ranges work on date and number fields only"),
    ("[1 TO 2]", "A range needs a field"),
    ("publication_date:2020-13", "Invalid date"),
    ("publication_date:yesterday", "Invalid date"),
    ("size:1*", "Wildcards work on text and keyword fields only"),
    ("locations.point:1", "bounds parameter"),
    ("title:(doi:x)", "cannot be nested"),
    ("x" * 5000, "too long"),
    ("title:/[/", "Invalid regular expression"),
    ("/(/", "Invalid regular expression"),
    ("title:x^.pdf", "check operators"),
])
def test_errors_name_the_problem(q, words):
    with pytest.raises(BadRequest) as err:
        parse_query(q)
    assert err.value.status == 400 and words in err.value.message
    assert err.value.errors == [{"field": "q", "message": err.value.message}]
