"""File previews in the frame of a record's page (repository/pages/record_previews.py, repository/files/previews.py):
TSV tables, files named as tables that are not text, text, Markdown rendered and sanitised, JSON pretty and folded,
ZIP and tar listings read from the archive without extracting it, each within its size bounds."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import html5lib
import orjson
import pytest
from helpers.factories import make_deposit, publish, upload

from repository.files import previews


def _with_files(client, auth, files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth)
    for name, content in files.items():
        upload(client, auth, dep, name=name, content=content)
    return publish(client, auth, dep)


def _preview(client, recid: int, key: str):  # type: ignore[no-untyped-def]
    response = client.get(f"/records/{recid}/preview/{key}")
    assert response.status_code == 200, (key, response.status_code)
    assert response.headers["X-Frame-Options"] == "SAMEORIGIN" and response.mimetype == "text/html"
    return response.get_data(as_text=True)


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/readings.csv", "a,b\n" * 1000)
        archive.writestr("data/", "")
        archive.writestr("../escape.txt", "never written anywhere")
    return buffer.getvalue()


def _tar(mode: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, content in (("code/main.py", b"print(1)\n"), ("README", b"x" * 2048)):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def test_previews_of_text_markdown_json_and_archives(client, auth, app):
    markdown = (b"# Read me\n\nSome *emphasis* and a [link](https://example.org) and "
                b"[bad](javascript:alert(1)).\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    document = orjson.dumps({"name": "sensor <A>", "values": [1, 2.5, None, True], "nested": {"deep": {"x": "y"}}})
    files = {"notes.txt": b"Line one\nLine two < three\n", "README.md": markdown, "meta.json": document,
             "broken.json": b'{"unclosed": ', "bundle.zip": _zip(), "code.tar.gz": _tar("w:gz"),
             "plain.tar": _tar("w"), "fake.zip": b"not a zip at all"}  # fmt: skip
    recid = _with_files(client, auth, files)["id"]
    page = client.get(f"/records/{recid}").get_data(as_text=True)
    for key in files:
        assert f'data-preview="{key}"' in page

    text = _preview(client, recid, "notes.txt")
    assert "Line one\nLine two &lt; three" in text

    rendered = _preview(client, recid, "README.md")
    tree = html5lib.parse(rendered, namespaceHTMLElements=False)
    body = next(d for d in tree.iter("div") if "preview-markdown" in (d.get("class") or ""))
    assert body.find("h1").text == "Read me" and body.find(".//em").text == "emphasis"
    links = {a.text: a.get("href") for a in body.iter("a")}
    assert links == {"link": "https://example.org"}  # no javascript: address
    assert body.find(".//table") is not None
    assert "<script>" not in rendered and "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered  # shown, not run

    folded = _preview(client, recid, "meta.json")
    assert '<span class="json-key">&#34;name&#34;</span>: <span class="json-string">&#34;sensor &lt;A&gt;&#34;</span>' in folded
    assert "4 items" in folded and '<span class="json-null">null</span>' in folded and "<details open>" in folded
    assert "<details><summary>" in folded  # the third level starts folded
    assert '{"unclosed": ' in _preview(client, recid, "broken.json").replace("&#34;", '"')

    listing = _preview(client, recid, "bundle.zip")
    assert "data/readings.csv" in listing and "4.0 kB" in listing and "folder" in listing and "../escape.txt" in listing
    for key in ("code.tar.gz", "plain.tar"):
        listed = _preview(client, recid, key)
        assert "code/main.py" in listed and "README" in listed and "2.0 kB" in listed
    assert "cannot be read as an archive" in _preview(client, recid, "fake.zip")
    # Nothing was extracted: no file of the archives appeared anywhere under the instance folder.
    written = [p.name for p in Path(app.extensions["repository"].settings.INSTANCE_PATH).rglob("*")]
    assert "escape.txt" not in written and "main.py" not in written and "readings.csv" not in written


@pytest.mark.slow
def test_tables_separated_by_tabs_and_tables_that_are_not_text(client, auth):
    tsv = b"site\tdepth\n" + b"".join(b"S%d\t%d\n" % (i, i) for i in range(60))
    recid = _with_files(client, auth, {"depths.tsv": tsv, "image.csv": b"\x89PNG\r\n\x1a\n\x00\x00binary",
                                       "latin.csv": "a\nJos\xe9\n".encode("latin-1")})["id"]  # fmt: skip
    table = _preview(client, recid, "depths.tsv")
    tree = html5lib.parse(table, namespaceHTMLElements=False)
    assert [th.text.strip() for th in tree.iter("th")] == ["site", "depth"] and "Rows 1–50 of 60" in table
    binary = _preview(client, recid, "image.csv")
    assert "This file is not text, although its name says it is a table" in binary and "<table" not in binary
    assert "not text" in _preview(client, recid, "latin.csv")


def test_text_previews_are_bounded(client, auth):
    big = b"0123456789abcde\n" * (previews.TEXT_BYTES // 16 + 100)
    recid = _with_files(client, auth, {"big.log": big, "data.txt": b"\x00\x01\x02binary"})["id"]
    shown = _preview(client, recid, "big.log")
    assert "The preview shows the beginning of the file" in shown
    assert shown.count("0123456789abcde") == previews.TEXT_BYTES // 16
    assert "This file is not text" in _preview(client, recid, "data.txt")


@pytest.mark.parametrize(("head", "text"), [
    (b"plain words\n", True), ("caf\u00e9 \u00e0 la carte".encode()[:-1] + b"\xc3", True),  # a character cut at the end
    (b"\x00abc", False), (b"abc\xff\xfe", False), (b"\x1b\x1b\x1b\x1b" + b"a" * 10, False),
])  # fmt: skip
def test_what_counts_as_text(head: bytes, text: bool) -> None:
    assert previews.looks_like_text(head) is text


def test_json_shows_a_bounded_number_of_values() -> None:
    html = previews.json_html(orjson.dumps(list(range(previews.JSON_NODES + 50))))
    assert html is not None and "more not shown" in html and f">{previews.JSON_NODES - 2}<" in html


def test_kinds_by_name() -> None:
    assert [previews.kind_of(k) for k in ("a.CSV", "b.tsv", "c.md", "d.json", "e.zip", "f.tar.gz", "README",
                                           "g.py", "h.bin", "i.pdf")] == [
        "table", "table", "markdown", "json", "zip", "tar", "text", "text", "", "pdf"]  # fmt: skip
