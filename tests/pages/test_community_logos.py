"""Community logos (repository/communities/logos.py, the community pages): the owner uploads an image on the edit
page; it is checked (size, type, pixels) and kept as a PNG thumbnail shown on the community's page and in the
list; anyone else is refused; bad files are refused with the reason beside the field and change nothing."""

from __future__ import annotations

import io

import pytest
from helpers.http import https_client
from helpers.pages import csrf_from, referer, sign_in, sign_up_and_confirm
from PIL import Image

from repository.communities import logos

PASSWORD = "correct horse battery"
BOUNDARY = "logo-form-boundary"


def _image(kind: str, size: tuple[int, int] = (800, 400)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (20, 120, 60)).save(buffer, kind)
    return buffer.getvalue()


def _signed_in(app, email: str):  # type: ignore[no-untyped-def]
    client = https_client(app)
    sign_up_and_confirm(client, app, email, PASSWORD)
    assert sign_in(client, email, PASSWORD).status_code in (302, 303)
    return client


@pytest.fixture
def owner(app):  # type: ignore[no-untyped-def]
    client = _signed_in(app, "logo-owner@example.org")
    page = client.get("/communities/new").get_data(as_text=True)
    made = client.post("/communities/new", data={"csrf_token": csrf_from(page), "identifier": "reefs",
                                                 "title": "Coral reefs", "description": "<p>Reefs.</p>"},
                       headers=referer("/communities/new"))  # fmt: skip
    assert made.status_code == 303
    return client


def _multipart(fields: dict) -> bytes:
    """A multipart/form-data body (boundary BOUNDARY) of `fields`, a file given as (stream, name). Built here as
    bytes: the test client spools a large body it builds to a temporary file it never closes."""
    body = b""
    for name, value in fields.items():
        if isinstance(value, tuple):
            body += (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"; filename="{value[1]}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n").encode() + value[0].read() + b"\r\n"
        else:
            body += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    return body + f"--{BOUNDARY}--\r\n".encode()


def _post(client, page: str, data: dict):  # type: ignore[no-untyped-def]
    token = csrf_from(client.get(page).get_data(as_text=True))
    return client.post("/communities/reefs/logo", data=_multipart({"csrf_token": token, **data}),
                       content_type=f"multipart/form-data; boundary={BOUNDARY}", headers=referer(page))  # fmt: skip


def _send(client, data: dict):  # type: ignore[no-untyped-def]
    return _post(client, "/communities/reefs/edit", data)


def test_the_owner_uploads_replaces_and_removes_a_logo(client, owner):
    assert client.get("/communities/reefs/logo").status_code == 404
    sent = _send(owner, {"logo": (io.BytesIO(_image("JPEG")), "reef.jpg")})
    assert sent.status_code == 303 and sent.headers["Location"] == "/communities/reefs/edit"
    got = client.get("/communities/reefs/logo")
    assert got.status_code == 200 and got.mimetype == "image/png" and got.headers["X-Content-Type-Options"] == "nosniff"
    with Image.open(io.BytesIO(got.data)) as shown:
        assert shown.format == "PNG" and shown.size == (240, 120)  # a thumbnail, its proportions kept
    again = client.get("/communities/reefs/logo", headers={"If-None-Match": got.headers["ETag"]})
    assert again.status_code == 304
    page = client.get("/communities/reefs/").get_data(as_text=True)
    assert '<img class="community-logo" src="/communities/reefs/logo?v=' in page
    assert '<img class="community-logo-small" src="/communities/reefs/logo?v=' in client.get("/communities/").get_data(as_text=True)
    assert _send(owner, {"logo": (io.BytesIO(_image("PNG", (100, 200))), "tall.png")}).status_code == 303
    with Image.open(io.BytesIO(client.get("/communities/reefs/logo").data)) as shown:
        assert shown.size == (100, 200)  # smaller than the bound: kept as it is
    assert _send(owner, {"remove": "1"}).status_code == 303
    assert client.get("/communities/reefs/logo").status_code == 404
    assert "community-logo" not in client.get("/communities/reefs/").get_data(as_text=True)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "Choose an image file."),
    (b"%PDF-1.4 not an image", "This file is not an image of a kind logos may be"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "This file is not an image of a kind logos may be"),
    (b"x" * (logos.MAX_BYTES + 10), "The image is larger than 2 MiB."),  # refused beside the field, not a 413
])  # fmt: skip
def test_bad_files_are_refused_beside_the_field(client, owner, content, message):
    assert _send(owner, {"logo": (io.BytesIO(_image("PNG")), "ok.png")}).status_code == 303
    before = client.get("/communities/reefs/logo").data
    refused = _send(owner, {"logo": (io.BytesIO(content), "bad.png")})
    assert refused.status_code == 400 and refused.mimetype == "text/html"
    page = refused.get_data(as_text=True)
    assert 'id="logo-error"' in page and message in page and 'aria-invalid="true"' in page
    assert client.get("/communities/reefs/logo").data == before  # nothing changed


@pytest.mark.slow
def test_other_formats_and_too_many_pixels():
    assert logos.thumbnail(_image("GIF"))[:8] == b"\x89PNG\r\n\x1a\n"
    assert logos.thumbnail(_image("WEBP"))[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(logos.ValidationError) as refused:
        logos.thumbnail(_image("BMP"))
    assert "Use a PNG, JPEG, GIF or WebP image (this is BMP)" in str(refused.value.errors)
    with pytest.raises(logos.ValidationError) as refused:
        logos.thumbnail(_image("PNG", (6000, 5000)))  # small as a file, 30 million pixels
    assert "more than 25,000,000 pixels" in str(refused.value.errors)


def test_only_the_owner_changes_the_logo(app, client, owner):
    stranger = _signed_in(app, "stranger@example.org")
    refused = _post(stranger, "/communities/", {"logo": (io.BytesIO(_image("PNG")), "x.png")})
    assert refused.status_code == 403
    assert client.get("/communities/reefs/logo").status_code == 404
    guest = client.post("/communities/reefs/logo", data={"remove": "1"})
    assert guest.status_code in (302, 303, 400)  # to sign-in, or refused without a form token
    assert client.get("/communities/nowhere/logo").status_code == 404
    assert client.get("/communities/NO%20WAY/logo").status_code == 404


def test_a_body_far_larger_than_a_logo_is_a_413_page(client, owner):
    # Refused from its Content-Length, before a byte of it is read.
    refused = owner.post("/communities/reefs/logo", data=b"x" * (logos.MAX_BYTES + 200_000),
                         content_type="multipart/form-data; boundary=b", headers=referer("/communities/reefs/edit"))
    assert refused.status_code == 413 and refused.mimetype == "text/html"
