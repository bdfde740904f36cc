"""Branding (docs/operators/branding-and-pages.md#branding): an administrator changes the name, contact, colour and
footer links (the settings stay the defaults), a colour without 4.5:1 contrast against white is refused, a logo or
favicon that is not an image or is too large is refused with a clear error; every change is audited."""

from __future__ import annotations

import io

import pytest
from helpers.http import https_client
from helpers.pages import csrf_from, referer
from PIL import Image

from repository.accounts import audit
from repository.site.colours import contrast


def _png(size: tuple[int, int] = (40, 20)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (11, 87, 164)).save(out, "PNG")
    return out.getvalue()


def _post(client, path: str, data: dict, **kwargs):  # type: ignore[no-untyped-def]
    token = csrf_from(client.get("/admin/site/").get_data())
    return client.post(path, data={"csrf_token": token, **data}, headers=referer("/admin/site/"), **kwargs)


def _branding(**changes: str) -> dict[str, str]:
    return {"name": "Example University Repository", "contact": "help@example.edu", "colour": "#0b57a4",
            "footer_links": "", **changes}


def test_the_contrast_is_measured_as_wcag_says():
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0
    assert round(contrast("#767676", "#ffffff"), 2) == 4.54  # the lightest grey that passes AA
    assert contrast("#777777", "#ffffff") < 4.5


@pytest.mark.slow  # a whole walk through several requests: 0.4 s and more
def test_an_admin_brands_the_site_and_a_pale_colour_is_refused(app, client, root):
    guest = https_client(app)
    assert "Research Repository" in guest.get("/").get_data(as_text=True)
    pale = _post(client, "/admin/site/branding", _branding(colour="#6fa8dc"), follow_redirects=True)
    assert "#6fa8dc has a contrast of 2.5" in pale.get_data(as_text=True)
    assert "at least 4.5:1" in pale.get_data(as_text=True)
    links = "Library | https://library.example.edu\nStatus | https://status.example.edu"
    answer = _post(client, "/admin/site/branding", _branding(colour="#7A1F5C", footer_links=links))
    assert answer.status_code == 303
    front = guest.get("/").get_data(as_text=True)
    assert "<title>" in front and "| Example University Repository</title>" in front
    assert '<a href="https://library.example.edu">Library</a>' in front
    assert 'href="mailto:help@example.edu"' in front
    assert 'href="/site/brand.css?c=7a1f5c"' in front
    css = guest.get("/site/brand.css?c=7a1f5c")
    assert css.mimetype == "text/css" and "--accent:#7a1f5c" in css.get_data(as_text=True)
    assert "immutable" in css.headers["Cache-Control"]
    with app.extensions["repository"].db.read() as conn:
        (entry,), _ = audit.search(conn, action="site.branding")
    assert entry["detail"]["colour"] == {"before": "#0b57a4", "after": "#7a1f5c"}
    assert entry["detail"]["name"]["before"] == "Research Repository"


def test_bad_branding_values_are_refused_and_change_nothing(app, client, root):
    bad = client.patch("/api/admin/site/branding", json={"colour": "blue", "contact": "nope", "name": "",
                                                          "footer_links": "no bar here"}, headers=root)
    assert bad.status_code == 400
    assert {e["field"] for e in bad.get_json()["errors"]} == {"colour", "contact", "name", "footer_links"}
    assert client.patch("/api/admin/site/branding", json={"colour": 7}, headers=root).status_code == 400
    assert client.patch("/api/admin/site/branding", json={"footer_links": 7}, headers=root).status_code == 400
    shown = client.get("/api/admin/site/branding", headers=root).get_json()
    assert shown["colour"] == "#0b57a4" and shown["name"] == "Research Repository"
    good = client.patch("/api/admin/site/branding", json={"footer_links": [{"label": "Blog", "url": "/pages/blog"}]},
                        headers=root)
    assert good.status_code == 200 and good.get_json()["footer_links"] == [{"label": "Blog", "url": "/pages/blog"}]
    with app.extensions["repository"].db.read() as conn:
        assert [e["action"] for e in audit.search(conn, action="site.")[0]] == ["site.branding"]


def test_a_logo_must_be_an_image_of_bounded_size(app, client, root):
    limit = app.extensions["repository"].settings.SITE_IMAGE_MAX_BYTES
    for data, message in ((b"<svg onload='alert(1)'/>", "is not an image in PNG, JPEG, GIF, WebP or ICO form"),
                          (b"GIF89a" + b"\0" * 100, "is not an image"),
                          (b"\x89PNG\r\n\x1a\n" + b"\0" * (limit + 10), f"at most {limit} are allowed"),
                          (_png((5000, 10)), "at most 4096 a side")):
        shown = _post(client, "/admin/site/logo", {"file": (io.BytesIO(data), "logo.png")},
                      content_type="multipart/form-data", follow_redirects=True).get_data(as_text=True)
        assert message in shown, message
        assert "The logo is saved" not in shown
    assert client.get("/api/admin/site/branding", headers=root).get_json()["images"] == {}
    saved = _post(client, "/admin/site/logo", {"file": (io.BytesIO(_png()), "logo.png")},
                  content_type="multipart/form-data", follow_redirects=True)
    assert "The logo is saved" in saved.get_data(as_text=True)
    address = client.get("/api/admin/site/branding", headers=root).get_json()["images"]["logo"]
    path = address.split("localhost", 1)[-1]
    guest = https_client(app)
    assert f'<img src="{path}"' in guest.get("/").get_data(as_text=True)
    image = guest.get(path)
    assert image.status_code == 200 and image.mimetype == "image/png" and image.data == _png()
    assert guest.get(path[:-4] + "0000").status_code == 404
    _post(client, "/admin/site/logo/remove", {})
    assert guest.get(path).status_code == 404
    with app.extensions["repository"].db.read() as conn:
        assert [e["action"] for e in audit.search(conn, action="site.logo")[0]] == ["site.logo.remove", "site.logo"]


def test_the_api_puts_and_removes_the_logo_and_the_favicon(app, client, root):
    guest = https_client(app)
    limit = app.extensions["repository"].settings.SITE_IMAGE_MAX_BYTES
    for data, message in ((b"", "Choose an image file"), (b"<svg onload='alert(1)'/>", "is not an image in PNG"),
                          (b"\x89PNG\r\n\x1a\n" + b"\0" * (limit + 10), f"at most {limit} are allowed")):
        refused = client.put("/api/admin/site/logo", data=data, headers={**root, "Content-Type": "image/png"})
        assert refused.status_code == 400 and message in refused.get_json()["message"], refused.get_json()
        assert refused.get_json()["errors"][0]["field"] == "file"
    assert client.get("/api/admin/site/branding", headers=root).get_json()["images"] == {}
    assert guest.put("/api/admin/site/logo", data=_png()).status_code in (401, 403)
    saved = client.put("/api/admin/site/logo", data=_png(), headers=root)  # no Content-Type: the bytes decide
    assert saved.status_code == 200
    path = saved.get_json()["images"]["logo"].split("localhost", 1)[-1]
    assert f'<img src="{path}"' in guest.get("/").get_data(as_text=True)
    assert guest.get(path).data == _png()
    assert client.put("/api/admin/site/favicon", data=_png((32, 32)), headers=root).status_code == 200
    assert '<link rel="icon" href="/site/favicon/' in guest.get("/").get_data(as_text=True)
    assert client.delete("/api/admin/site/logo", headers=root).status_code == 204
    assert guest.get(path).status_code == 404 and "<img src=" not in guest.get("/").get_data(as_text=True)
    with app.extensions["repository"].db.read() as conn:
        assert [e["action"] for e in audit.search(conn, action="site.logo")[0]] == ["site.logo.remove", "site.logo"]


def test_a_favicon_replaces_the_default(app, client, root):
    guest = https_client(app)
    assert 'type="image/svg+xml"' in guest.get("/").get_data(as_text=True)
    _post(client, "/admin/site/favicon", {"file": (io.BytesIO(_png((32, 32))), "favicon.png")},
          content_type="multipart/form-data")
    page = guest.get("/").get_data(as_text=True)
    assert '<link rel="icon" href="/site/favicon/' in page


def test_a_moderator_cannot_brand_the_site(app, client):
    from helpers.pages import signed_in

    from repository.accounts import admin
    from repository.accounts.audit import Actor
    from repository.accounts.tokens import get_user_by_email

    signed_in(client, app, "mod@example.org", "correct horse battery")
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, "mod@example.org")
        assert user is not None
        admin.set_role(conn, Actor.operator(), user["id"], "moderator")
    assert client.get("/admin/site/").status_code == 403
    with app.extensions["repository"].db.read() as conn:
        assert audit.search(conn, action="admin.refused")[1] == 1
