"""Bodies of page posts are bounded before anything reads them: a guest's post to a page that needs sign-in is
refused (413 page) from its Content-Length alone, beyond what any form of ours takes, so nothing of it is spooled
to the temporary directory; the guest forms (sign-in, sign-up, reset, access requests) take the same small bound;
a signed-in user's forms take MAX_JSON_BYTES, and only the deposit form's file area takes more."""

from __future__ import annotations

import io

import pytest
from helpers.http import https_client
from helpers.pages import referer, sign_in, sign_up_and_confirm

from repository.pages.accounts import FORM_BYTES

PASSWORD = "correct horse battery"
BIG = 8 * 1024 * 1024


class CountingBody(io.BytesIO):
    """A body of `size` bytes that counts how much of it the server read."""

    def __init__(self, size: int) -> None:
        super().__init__(b"z" * size)
        self.read_bytes = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.read_bytes += len(data)
        return data

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def post_body(client, path: str, size: int, content_type: str = "multipart/form-data; boundary=x"):  # type: ignore[no-untyped-def]
    body = CountingBody(size)
    answer = client.post(path, input_stream=body, headers={"Content-Length": str(size), **referer(path)},
                         content_type=content_type)
    return answer, body.read_bytes


@pytest.mark.parametrize("path", ["/deposit/new", "/deposit/1", "/deposit/1/files", "/deposit/1/files/order",
                                  "/communities/new", "/account/settings/applications/",
                                  "/account/requests/1/1/accept"])
def test_a_guest_post_to_a_page_that_needs_sign_in_is_refused_unread(client, path):
    answer, read = post_body(client, path, BIG)
    assert answer.status_code == 413 and answer.mimetype == "text/html"
    assert read == 0  # refused from its length: not a byte spooled


@pytest.mark.parametrize("path", ["/login/", "/signup/", "/account/reset/", "/records/1/access/request",
                                  "/records/1/access/confirm/abc", "/account/confirm/abc"])
def test_guest_forms_take_a_small_body(client, path):
    answer, read = post_body(client, path, FORM_BYTES + 1, "application/x-www-form-urlencoded")
    assert answer.status_code == 413 and answer.mimetype == "text/html" and read == 0


def test_a_signed_in_users_forms_are_bounded_too(app):
    browser = https_client(app)
    sign_up_and_confirm(browser, app, "owner@example.org", PASSWORD)
    assert sign_in(browser, "owner@example.org", PASSWORD).status_code == 303
    limit = app.extensions["repository"].settings.MAX_JSON_BYTES
    answer, read = post_body(browser, "/deposit/new", limit + 1, "application/x-www-form-urlencoded")
    assert answer.status_code == 413 and read == 0
    answer, read = post_body(browser, "/communities/new", limit + 1, "application/x-www-form-urlencoded")
    assert answer.status_code == 413 and read == 0
