"""Banners (docs/operators/branding-and-pages.md#banners): a maintenance notice shows on every page from its start
to its end, moved through by the test clock; bad times are refused; adding and removing are audited."""

from __future__ import annotations

from datetime import timedelta

from helpers.http import https_client
from helpers.pages import post_form

from repository.accounts import audit

NOTICE = "Maintenance on Saturday from 08:00 to 10:00 UTC: uploads are paused."


def _shown(client) -> bool:  # type: ignore[no-untyped-def]
    return NOTICE in client.get("/").get_data(as_text=True)


def test_a_banner_shows_from_its_start_to_its_end(app, client, root, clock):
    start = clock() + timedelta(hours=1)
    answer = post_form(client, "/admin/banners/", {"message": NOTICE, "starts": start.strftime("%Y-%m-%dT%H:%M"),
                                                   "ends": (start + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")})
    assert answer.status_code == 303
    guest = https_client(app)
    assert not _shown(guest)
    assert "Scheduled" in client.get("/admin/banners/").get_data(as_text=True)
    clock.advance(3600)
    assert _shown(guest)
    assert '<p class="site-banner" role="status">' in guest.get("/search").get_data(as_text=True)
    clock.advance(2 * 3600)
    assert not _shown(guest)
    banners = client.get("/api/admin/site/banners", headers=root).get_json()["hits"]
    assert [b["state"] for b in banners] == ["ended"]
    post_form(client, f"/admin/banners/{banners[0]['id']}/remove", {}, page="/admin/banners/")
    assert client.get("/api/admin/site/banners", headers=root).get_json()["hits"] == []
    with app.extensions["repository"].db.read() as conn:
        actions = [e["action"] for e in audit.search(conn, action="site.banner")[0]]
    assert actions == ["site.banner.remove", "site.banner.add"]


def test_the_api_adds_banners_and_refuses_bad_times(app, client, root, clock):
    added = client.post("/api/admin/site/banners", json={"message": NOTICE}, headers=root)
    assert added.status_code == 201 and added.get_json()["state"] == "showing"
    assert _shown(https_client(app))
    for body, field in (({"message": ""}, "message"), ({"message": "x", "starts": "tomorrow"}, "starts"),
                        ({"message": "x", "starts": "2030-01-02T00:00", "ends": "2030-01-01T00:00"}, "ends"),
                        ({"message": "x", "ends": 5}, "ends"), ({"message": ["x"]}, "message"),
                        ({"message": "x", "starts": "0001-01-01T00:00+14:00"}, "starts")):
        bad = client.post("/api/admin/site/banners", json=body, headers=root)
        assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == field, body
    with_offset = client.post("/api/admin/site/banners", json={"message": "later", "starts": "2030-01-01T10:00+02:00"},
                              headers=root)
    assert with_offset.get_json()["starts"] == "2030-01-01T08:00:00+00:00"
    assert with_offset.get_json()["state"] == "scheduled"
    assert client.delete("/api/admin/site/banners/999", headers=root).status_code == 404
