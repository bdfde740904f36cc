"""Thumbnails on the real server (gunicorn, two worker processes): a huge image costs the workers no memory
(issue 14.6). Peak memory is read from /proc (VmHWM of each worker), a bound in MB, never a time."""

from __future__ import annotations

import io
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from helpers.http import peak_rss_kb, token_session, worker_pids
from PIL import Image

from repository.files.thumbnails import SIZES

pytestmark = pytest.mark.e2e


def blank_png(width: int, height: int) -> bytes:
    """A black RGB PNG of any size, made in a fraction of a second: one compressed band of rows, repeated."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = next(n for n in (100, 50, 20, 10, 5, 2, 1) if height % n == 0)
    band = b"\0" * ((1 + width * 3) * rows)  # each row: filter byte 0, then its pixels
    comp = zlib.compressobj(9)
    first = comp.compress(band) + comp.flush(zlib.Z_FULL_FLUSH)  # zlib header and the first band
    again = comp.compress(band) + comp.flush(zlib.Z_FULL_FLUSH)  # a full flush forgets the past: all bands alike
    last = comp.flush()[:-4]  # the final empty block, without the checksum of what `comp` saw
    adler = (((len(band) * (height // rows)) % 65521) << 16) | 1  # Adler-32 of that many zero bytes
    stream = first + again * (height // rows - 1) + last + struct.pack(">I", adler)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


def test_blank_png_is_a_valid_image():
    image = Image.open(io.BytesIO(blank_png(300, 200)))
    image.load()
    assert image.size == (300, 200) and image.getextrema() == ((0, 0), (0, 0), (0, 0))


@pytest.fixture(scope="module")
def session(live_server):
    http = token_session(live_server, "images@example.org")
    yield http
    http.close()


def image_record(live_server, session, name: str, content: bytes) -> int:
    base = live_server["url"]
    metadata = {"title": name, "upload_type": "image", "image_type": "figure", "description": "An image.",
                "creators": [{"name": "Doe, Jo"}]}  # fmt: skip
    dep = session.post(f"{base}/api/deposit/depositions", json={"metadata": metadata}).json()
    assert session.put(f"{dep['links']['bucket']}/{name}", data=content).status_code == 200
    assert session.post(dep["links"]["publish"]).status_code == 202
    return dep["id"]


def all_sizes_at_once(live_server, recid: int) -> dict[int, requests.Response]:
    """Ask for the six sizes at the same time, as a guest (a page showing every size would)."""

    def get(size: int) -> requests.Response:
        return requests.get(f"{live_server['url']}/api/records/{recid}/thumb{size}", verify=live_server["cert"],
                            headers={"Connection": "close"}, timeout=120)  # fmt: skip

    with ThreadPoolExecutor(len(SIZES)) as pool:
        return dict(zip(SIZES, pool.map(get, SIZES), strict=True))


def test_huge_png_costs_no_memory(live_server, session):
    # 14,000 x 14,000 pixels in a 570 KB file: decoding it took ~1 GB per thumbnail, 3 GB for the six sizes.
    recid = image_record(live_server, session, "huge.png", blank_png(14_000, 14_000))
    workers = worker_pids(live_server["pid"])
    before = {pid: peak_rss_kb(pid) for pid in workers}
    answers = all_sizes_at_once(live_server, recid)
    growth_mb = max(peak_rss_kb(pid) - before[pid] for pid in workers) / 1024
    print(f"\nsix thumbnails of a 14,000 x 14,000 PNG; largest peak-memory growth of a worker: {growth_mb:.1f} MB")
    assert {size: r.status_code for size, r in answers.items()} == dict.fromkeys(SIZES, 422)
    assert all("too large for a preview" in r.json()["message"] for r in answers.values())
    assert growth_mb < 40, f"a worker grew by {growth_mb:.0f} MB"


def test_large_jpeg_is_decoded_at_a_reduced_scale(live_server, session):
    # 8,000 x 8,000 is past the default bound of 40 million pixels at full scale, but a JPEG decodes at 1/2 to
    # 1/8 scale: the 1200 thumbnail decodes 4,000 x 4,000 and the small ones 1,000 x 1,000.
    out = io.BytesIO()
    Image.new("L", (8_000, 8_000), 128).save(out, "JPEG", quality=50)
    recid = image_record(live_server, session, "large.jpg", out.getvalue())
    workers = worker_pids(live_server["pid"])
    before = {pid: peak_rss_kb(pid) for pid in workers}
    answers = all_sizes_at_once(live_server, recid)
    for size, response in answers.items():
        if response.status_code == 503:  # every decoding slot was busy: the client retries as told
            assert int(response.headers["Retry-After"]) > 0
            answers[size] = requests.get(f"{live_server['url']}/api/records/{recid}/thumb{size}",
                                         verify=live_server["cert"], timeout=120)  # fmt: skip
    growth_mb = max(peak_rss_kb(pid) - before[pid] for pid in workers) / 1024
    print(f"\nsix thumbnails of an 8,000 x 8,000 JPEG; largest peak-memory growth of a worker: {growth_mb:.1f} MB")
    assert {size: r.status_code for size, r in answers.items()} == dict.fromkeys(SIZES, 200)
    assert Image.open(io.BytesIO(answers[1200].content)).size == (1200, 1200)
    assert growth_mb < 120, f"a worker grew by {growth_mb:.0f} MB"
