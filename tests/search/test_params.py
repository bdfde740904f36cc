"""Search arguments -> SearchRequest: defaults, filters, and the 400s of docs/reference-behaviour.md#search-parameters."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from werkzeug.datastructures import MultiDict

from repository.errors import BadRequest
from repository.search.params import BOUNDS_FORMAT, page_links, parse_search_args
from repository.search.query import GeoBox, MatchAll, Range, Term, Terms


def parse(**args):
    return parse_search_args(MultiDict(args), cursor_key=b"k")


def error(**args) -> BadRequest:
    with pytest.raises(BadRequest) as err:
        parse(**args)
    assert err.value.status == 400
    return err.value


def test_defaults():
    req = parse()
    assert (req.q, req.query, req.sort, req.descending, req.offset, req.size) == ("", MatchAll(), "mostrecent",
                                                                                  True, 0, 10)
    assert req.filters == (Term("relations.version.is_last", True),)
    assert req.post_filters == () and req.facets == ("access_right", "type", "file_type", "keywords")
    assert parse(q="x").sort == "bestmatch"


@pytest.mark.parametrize(("sort", "name", "descending"), [
    ("mostrecent", "mostrecent", True), ("-mostrecent", "mostrecent", False), ("bestmatch", "bestmatch", True),
    ("-bestmatch", "bestmatch", False), ("publication_date", "publication_date", False),
    ("-publication_date", "publication_date", True), ("-version", "version", True), ("journal", "journal", False),
    ("mostviewed", "mostviewed", True), ("conference_session", "conference_session", False),
])
def test_sort(sort, name, descending):
    req = parse(sort=sort)
    assert (req.sort, req.descending, req.sort_arg) == (name, descending, sort)


def test_unknown_sort_is_a_400():
    err = error(sort="popular")
    assert err.errors[0]["field"] == "sort" and "popular" in err.message


@pytest.mark.parametrize(("args", "field", "message"), [
    ({"page": "0"}, "page", "Must be at least 1."),
    ({"page": "x"}, "page", "Not a valid integer."),
    ({"size": "0"}, "size", "Must be at least 1."),
    ({"size": "-3"}, "size", "Must be at least 1."),
    ({"page": "2", "from": "3"}, "from", "Cannot be combined with page."),
])
def test_pagination_errors(args, field, message):
    err = error(**args)
    assert err.message == "Invalid pagination parameters."
    assert err.errors == [{"field": field, "message": message}]


def test_window():
    assert parse(page="1000", size="10").offset == 9990
    assert parse(size="10000").size == 10000
    for args in ({"page": "1001"}, {"size": "10001"}, {"page": "2", "size": "5001"}, {"from": "9992"}):
        assert error(**args).message == "Maximum number of 10000 results have been reached."
    assert parse(**{"from": "11"}).offset == 10


def test_cursor_round_trip_and_tampering():
    req = parse(q="ocean", sort="-mostrecent", size="5")
    cursor = req.cursor_for(["abc1"], 20_000)  # beyond the window: cursors have no limit
    again = parse(q="ocean", sort="-mostrecent", size="5", cursor=cursor)
    assert (again.after, again.offset) == (("abc1",), 20_000)
    assert parse(q="ocean", sort="-mostrecent", size="50", cursor=cursor).after == ("abc1",)  # size may change
    assert error(q="ocean", sort="-mostrecent", cursor=req.cursor_for(["xyz"], 5)).errors[0]["field"] == "cursor"
    assert error(q="ocean", sort="-mostrecent", cursor=req.cursor_for(["ab"], -1)).errors[0]["field"] == "cursor"
    scored = parse(q="ocean")
    assert parse(q="ocean", cursor=scored.cursor_for([1.5, 7], 10)).after == (1.5, 7)
    assert error(q="ocean", cursor=scored.cursor_for(["1.5", 7], 10)).errors[0]["field"] == "cursor"
    assert error(q="ocean", sort="-mostrecent", size="10001", cursor=cursor).status == 400  # pages stay bounded
    assert error(q="ocean", sort="-mostrecent", cursor=cursor[:-1] + "0").errors[0]["field"] == "cursor"
    assert error(q="ocean", sort="-mostrecent", cursor="garbage").errors[0]["field"] == "cursor"
    assert error(q="other", sort="-mostrecent", cursor=cursor).errors[0]["field"] == "cursor"
    assert error(q="ocean", sort="mostrecent", cursor=cursor).errors[0]["field"] == "cursor"
    with pytest.raises(BadRequest):  # signed with another key
        parse_search_args(MultiDict({"q": "ocean", "sort": "-mostrecent", "cursor": cursor}), cursor_key=b"other")


def test_link_args_carry_every_parameter():
    req = parse_search_args(MultiDict([("q", "x"), ("type", "dataset"), ("type", "image"), ("page", "2"),
                                       ("size", "5"), ("access_token", "secret")]))
    assert req.link_args(page=3) == [("q", "x"), ("size", "5"), ("type", "dataset"), ("type", "image"),
                                     ("page", "3")]
    assert req.link_args(cursor="C")[-1] == ("cursor", "C")
    assert ("access_token", "secret") not in req.link_args()


@pytest.mark.parametrize(("value", "latest_only"), [(None, True), ("", False), ("1", False), ("True", False),
                                                    ("0", True), ("false", True), ("yes", True)])
def test_all_versions(value, latest_only):
    req = parse(**({} if value is None else {"all_versions": value}))
    assert (Term("relations.version.is_last", True) in req.filters) == latest_only


def test_filters_and_post_filters():
    req = parse_search_args(MultiDict([("communities", "a"), ("communities", "b"), ("type", "publication"),
                                       ("subtype", "article"), ("access_right", "open"), ("file_type", "pdf"),
                                       ("keywords", "k"), ("all_versions", "1")]))
    assert req.filters == (Terms("communities", ("a", "b")),)
    assert req.post_filters == (Terms("resource_type.type", ("publication",)),
                                Terms("resource_type.subtype", ("article",)), Terms("access_right", ("open",)),
                                Terms("filetype", ("pdf",)), Terms("keywords", ("k",)))


def test_publication_date_ranges():
    def only(value):
        return parse(publication_date=value, all_versions="1").filters[0]
    utc = UTC
    assert only("2019--2020") == Range("publication_date", gte=datetime(2019, 1, 1, tzinfo=utc),
                                       lt=datetime(2021, 1, 1, tzinfo=utc))
    assert only(">2019--") == Range("publication_date", gte=datetime(2020, 1, 1, tzinfo=utc))
    assert only("--<2020-06") == Range("publication_date", lt=datetime(2020, 6, 1, tzinfo=utc))
    for bad in ("2019", "2019--2020--2021", "--", "abc--2020", "2020-13--"):
        assert error(publication_date=bad).errors == [{"field": "publication_date", "message": "Invalid range format."}]


def test_bounds():
    assert parse(bounds="143.37158,-38.99357,146.90918,-37.35269", all_versions="1").filters == (
        GeoBox("locations.point", 143.37158, -38.99357, 146.90918, -37.35269),)
    assert parse(bounds="170,0,-170,10", all_versions="1").filters[0].min_lon == 170  # crosses the antimeridian


@pytest.mark.parametrize(("bounds", "message"), [
    ("1,2,3", BOUNDS_FORMAT),
    ("1,2,3,4,5", BOUNDS_FORMAT),
    ("a,2,3,4", "Invalid number in bounds."),
    ("1,-91,3,4", "Latitude must be between -90 and 90."),
    ("1,2,3,91", "Latitude must be between -90 and 90."),
    ("-181,2,3,4", "Longitude must be between -180 and 180."),
    ("1,2,181,4", "Longitude must be between -180 and 180."),
    ("1,4,3,2", "Top-right latitude must be greater than bottom-left latitude."),
    ("1,2,NaN,4", 'Invalid number: "NaN" is not a permitted value.'),
    ("1,2,3,inf", 'Invalid number: "inf" is not a permitted value.'),
])
def test_bounds_errors(bounds, message):
    err = error(bounds=bounds)
    assert err.message == message and err.errors == [{"field": "bounds", "message": message}]


def test_custom():
    assert parse(custom="[dwc:family]:[Felidae]", all_versions="1").filters == (Term("custom", "dwc:family:felidae"),)
    assert parse(custom="[obo:RO_0002453]:[Cat:Flea]", all_versions="1").filters == (
        Term("custom", "obo:ro_0002453:cat:flea"),)
    assert error(custom="dwc:family:Felidae").message == "The parameter should have the format: custom=[term]:[value]."
    assert error(custom="[dwc:family]:[]").errors[0]["field"] == "custom"
    assert error(custom="[x:y]:[z]").message == 'The "x:y" term is not supported.'


def test_facets():
    assert parse(facets="communities, publication_date").facets == ("communities", "publication_date")
    assert error(facets="access_right,nope").errors[0]["field"] == "facets"


def test_bad_q_names_q():
    assert error(q="title:(").errors[0]["field"] == "q"


def test_page_links_use_pages_inside_the_window_and_the_cursor_beyond():
    first = parse(q="x", size="10")
    assert page_links(first, None) == {"self": [("q", "x"), ("size", "10")]}
    assert page_links(first, "C")["next"] == [("q", "x"), ("size", "10"), ("page", "2")]
    middle = parse(q="x", size="10", page="5")
    links = page_links(middle, "C")
    assert links["prev"][-1] == ("page", "4") and links["next"][-1] == ("page", "6")
    last_in_window = parse(q="x", size="10", page="1000")
    assert page_links(last_in_window, "C")["next"] == [("q", "x"), ("size", "10"), ("cursor", "C")]
    walking = parse(q="x", size="10", cursor=first.cursor_for([1.0, 3], 10))
    assert page_links(walking, "D") == {"self": list(walking.args),
                                        "next": [("q", "x"), ("size", "10"), ("cursor", "D")]}
    assert "next" not in page_links(walking, None)
    offset = parse(q="x", size="10", **{"from": "21"})
    assert page_links(offset, "C")["next"] == [("q", "x"), ("size", "10"), ("page", "4")]
