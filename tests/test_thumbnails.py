"""Thumbnails of image records: PNGs of the asked size, access as for files, 20 a minute."""

import io

from factories import make_deposit, publish, upload
from PIL import Image
from support import download, https_client

from app import create_app


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


def test_thumbnails_are_rate_limited(make_settings, make_token):
    client = https_client(create_app(make_settings(RATELIMIT_THUMBNAILS="2/minute")))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = image_record(client, auth)
    statuses = [download(client, f"/api/records/{dep['id']}/thumb50").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert client.get(f"/api/records/{dep['id']}").status_code == 200  # other endpoints are unaffected
