"""Driving the web pages the way a browser does: read a form's CSRF token, sign up and confirm through the mail,
sign in. Every form post carries the token and a Referer of this site (Flask-WTF checks it over HTTPS)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from flask import Flask
from flask.testing import FlaskClient

from helpers.mailbox import last_link

ORIGIN = "https://localhost"
_CSRF = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="csrf_token"')


def csrf_from(html: str | bytes) -> str:
    """The CSRF token of the first form in a page."""
    text = html.decode() if isinstance(html, bytes) else html
    found = _CSRF.search(text)
    if found is None:
        raise AssertionError("no csrf_token field in the page")
    return found.group(1) or found.group(2)


def referer(path: str = "/") -> dict[str, str]:
    """The Referer header a browser sends from a page of this site."""
    return {"Referer": ORIGIN + path}


def post_form(client: FlaskClient, path: str, data: dict[str, Any], page: str | None = None,
              **kwargs: Any) -> Any:
    """GET `page` (default: `path`) for its CSRF token, then POST `data` to `path` with it, as a browser would."""
    shown = client.get(page or path)
    form = {"csrf_token": csrf_from(shown.get_data())} | data
    return client.post(path, data=form, headers=referer(page or path), **kwargs)


def sign_up(client: FlaskClient, email: str, password: str) -> Any:
    """Submit the sign-up form; the response (a redirect to a page saying to check the mail)."""
    return post_form(client, "/signup/", {"email": email, "password": password, "password_again": password})


def sign_up_and_confirm(client: FlaskClient, app: Flask, email: str, password: str) -> None:
    """Sign up with `email`, open the confirmation link of the mail it sends and press its button (the link's page
    posts back to it); the client is then signed out (confirming does not sign in)."""
    answer = sign_up(client, email, password)
    assert answer.status_code in (302, 303), answer.status_code
    confirmed = post_form(client, last_link(app, email, "/account/confirm/"), {})
    assert confirmed.status_code in (200, 302, 303), confirmed.status_code


def sign_in(client: FlaskClient, email: str, password: str, next_url: str | None = None) -> Any:
    """Submit the sign-in form (with `next=` when given); the response (302 on success, 200 with the form again
    when refused)."""
    path = "/login/" + ("?" + urlencode({"next": next_url}) if next_url is not None else "")
    return post_form(client, path, {"email": email, "password": password})


def sign_out(client: FlaskClient) -> Any:
    return post_form(client, "/logout/", {})


def signed_in(client: FlaskClient, app: Flask, email: str, password: str) -> None:
    """Sign up, confirm and sign in as `email` in `client`'s cookie jar."""
    sign_up_and_confirm(client, app, email, password)
    assert sign_in(client, email, password).status_code in (302, 303)


def session_headers(client: FlaskClient, page: str = "/deposit") -> dict[str, str]:
    """What a page's own API calls carry in the browser: the CSRF token of the page and a Referer of this site."""
    return {"X-CSRFToken": csrf_from(client.get(page).get_data()), **referer(page)}
