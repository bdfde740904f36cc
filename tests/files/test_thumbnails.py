"""Thumbnails of image records: PNGs of the asked size, access as for files, 20 a minute."""

import io
import os

import pytest
from helpers.factories import make_deposit, publish, upload
from helpers.http import download, https_client
from PIL import Image

from app import create_app
from repository.files import thumbnails


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


def image_record(client, auth, **overrides):  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, upload_type="image", image_type="photo", **overrides)
    upload(client, auth, dep, name="photo.png", content=png(800, 600))
    return publish(client, auth, dep)


def test_thumbnail_sizes(client, auth):
    dep = image_record(client, auth)
    record = client.get(f"/api/records/{dep['id']}").json
    assert record["links"]["thumb250"].endswith(f"/api/records/{dep['id']}/thumb250")
    response = download(client, record["links"]["thumbs"]["100"].replace("https://localhost", ""))
    assert response.status_code == 200 and response.mimetype == "image/png"
    assert Image.open(io.BytesIO(response.data)).size == (100, 75)
    assert client.get(f"/api/records/{dep['id']}/thumb123").status_code == 404


def test_thumbnails_follow_file_access(client, auth):
    dep = image_record(client, auth, access_right="closed")
    assert client.get(f"/api/records/{dep['id']}/thumb50").status_code == 404
    assert download(client, f"/api/records/{dep['id']}/thumb50", headers=auth).status_code == 200


@pytest.mark.slow  # 0.4 s and more of work
def test_thumbnails_are_rate_limited(make_settings, make_token):
    client = https_client(create_app(make_settings(RATELIMIT_THUMBNAILS="2/minute")))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = image_record(client, auth)
    statuses = [download(client, f"/api/records/{dep['id']}/thumb50").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert client.get(f"/api/records/{dep['id']}").status_code == 200  # other endpoints are unaffected


def jpeg(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("L", (width, height), 128).save(out, "JPEG", quality=50)
    return out.getvalue()


@pytest.mark.slow
def test_open_thumbnails_are_public_and_the_others_private(client, auth):
    # Issue 14.11: a shared cache must never keep a thumbnail that not everyone may see.
    open_dep = image_record(client, auth)
    response = download(client, f"/api/records/{open_dep['id']}/thumb50")
    assert response.cache_control.public and response.cache_control.max_age == 86400
    assert not response.cache_control.private
    for overrides in (
        {"access_right": "closed"},
        {"access_right": "embargoed", "embargo_date": "2999-01-01"},
        {"access_right": "restricted", "access_conditions": "Ask the author."},
    ):
        dep = image_record(client, auth, **overrides)
        response = download(client, f"/api/records/{dep['id']}/thumb50", headers=auth)
        assert response.status_code == 200, overrides
        assert response.cache_control.private and response.cache_control.no_cache, overrides
        assert not response.cache_control.public and response.cache_control.max_age is None, overrides
        assert "Authorization" in response.vary, overrides
        assert client.get(f"/api/records/{dep['id']}/thumb50").status_code == 404


def test_an_image_past_the_pixel_bound_is_refused_before_decoding(make_settings, make_token):
    client = https_client(create_app(make_settings(THUMBNAIL_MAX_PIXELS=400 * 300)))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = image_record(client, auth)  # 800 x 600 pixels
    response = client.get(f"/api/records/{dep['id']}/thumb50")
    assert response.status_code == 422
    assert response.json["status"] == 422 and "too large for a preview" in response.json["message"]
    assert "800 x 600" in response.json["message"]


@pytest.mark.slow
def test_a_jpeg_counts_the_pixels_of_its_reduced_scale_decoding(make_settings, make_token):
    client = https_client(create_app(make_settings(THUMBNAIL_MAX_PIXELS=1_000_000)))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = make_deposit(client, auth, upload_type="image", image_type="photo")
    upload(client, auth, dep, name="photo.jpg", content=jpeg(2400, 1600))  # 3.84 million pixels
    publish(client, auth, dep)
    small = download(client, f"/api/records/{dep['id']}/thumb100")  # decoded at 1/8: 300 x 200
    assert small.status_code == 200 and Image.open(io.BytesIO(small.data)).size == (100, 67)
    assert client.get(f"/api/records/{dep['id']}/thumb1200").status_code == 422  # full scale needed


@pytest.mark.slow
def test_thumbnails_made_at_once_are_bounded(make_settings, make_token, monkeypatch):
    settings = make_settings(THUMBNAIL_CONCURRENCY=1)
    client = https_client(create_app(settings))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = image_record(client, auth)
    monkeypatch.setattr(thumbnails, "SLOT_WAIT_SECONDS", 0.1)
    # Another process holds the machine's one decoding slot.
    with thumbnails.decoding_slot(os.path.join(settings.INSTANCE_PATH, "thumbnails"), 1):
        busy = client.get(f"/api/records/{dep['id']}/thumb250")
    assert busy.status_code == 503 and busy.json["status"] == 503
    assert int(busy.headers["Retry-After"]) > 0
    assert download(client, f"/api/records/{dep['id']}/thumb250").status_code == 200


def test_only_common_image_formats_are_decoded(client, auth):
    # Pillow tells a format by its content, whatever the name says: an EPS file is run through Ghostscript, and
    # dozens of rarely used decoders (here PPM) would read whatever is uploaded as photo.png.
    ppm = io.BytesIO()
    Image.new("RGB", (20, 10)).save(ppm, "PPM")
    eps = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n"
    for content in (ppm.getvalue(), eps):
        dep = make_deposit(client, auth, upload_type="image", image_type="photo")
        upload(client, auth, dep, name="photo.png", content=content)
        publish(client, auth, dep)
        response = client.get(f"/api/records/{dep['id']}/thumb50")
        assert response.status_code == 404 and "cannot be shown as a thumbnail" in response.json["message"]
