"""Branding (docs/operators/branding-and-pages.md#branding): the site's name, contact address, primary colour and
footer links, each the setting's default until an administrator changes it (then a row of `site_settings`), and the
logo and favicon (`site_images`), checked to be images of bounded size. A primary colour with less than 4.5:1
contrast against white is refused (repository.site.colours)."""

from __future__ import annotations

import hashlib
import io
import json
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

from PIL import Image, UnidentifiedImageError
from sqlalchemy import Connection, delete, insert, select

from repository.accounts import audit
from repository.accounts.audit import Actor
from repository.accounts.signup import email_problem
from repository.config import Settings
from repository.errors import ValidationError, field_error
from repository.site.colours import AA_TEXT, contrast, darker
from repository.storage.tables.site import site_images, site_settings
from repository.timeutil import utcnow

MAX_NAME = 100
MAX_LINKS = 10
MAX_LABEL = 60
MAX_URL = 500
IMAGES = ("logo", "favicon")
# What a logo or favicon may be: formats every browser shows. SVG is left out: it can carry scripts.
IMAGE_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp",
                 "ICO": "image/x-icon"}  # fmt: skip
MAX_PIXELS = 4096


@dataclass(frozen=True)
class Branding:
    """What the pages show of the institution."""

    name: str
    contact: str
    colour: str
    footer_links: list[dict[str, str]] = field(default_factory=list)  # [{"label", "url"}]
    images: dict[str, str] = field(default_factory=dict)  # name -> digest, for the images uploaded


def defaults(settings: Settings) -> Branding:
    return Branding(settings.REPOSITORY_NAME, settings.SITE_CONTACT_EMAIL, settings.SITE_PRIMARY_COLOUR)


def current(conn: Connection, settings: Settings) -> Branding:
    """The branding as the pages show it: the administrator's values over the settings' defaults."""
    stored = {row.key: json.loads(row.value) for row in conn.execute(select(site_settings))}
    images = {row.name: row.digest for row in conn.execute(select(site_images.c.name, site_images.c.digest))}
    return Branding(**{**asdict(defaults(settings)), **stored, "images": images})


def _footer_links(text: str) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """`Label | https://address` lines; (links, errors)."""
    links, errors = [], []
    for number, line in enumerate((ln for ln in text.splitlines() if ln.strip()), start=1):
        label, sep, url = (part.strip() for part in line.partition("|"))
        if not sep or not label or not url.startswith(("https://", "http://", "mailto:", "/")):
            errors.append(field_error("footer_links", f"Line {number}: write `Label | https://address`."))
        elif len(label) > MAX_LABEL or len(url) > MAX_URL:
            errors.append(field_error("footer_links", f"Line {number}: a label has at most {MAX_LABEL} characters, "
                                                      f"an address {MAX_URL}."))
        else:
            links.append({"label": label, "url": url})
    if len(links) > MAX_LINKS:
        errors.append(field_error("footer_links", f"At most {MAX_LINKS} footer links."))
    return links, errors


def links_text(links: list[dict[str, str]]) -> str:
    """The footer links as the form shows them, one `Label | address` a line."""
    return "\n".join(f"{link['label']} | {link['url']}" for link in links)


def parse(values: dict[str, Any]) -> dict[str, Any]:
    """The branding fields of a form or JSON body (`name`, `contact`, `colour`, `footer_links` as text or a list
    of {label, url}), checked; ValidationError listing every problem. Fields not given are left out."""
    errors: list[dict[str, Any]] = []
    parsed: dict[str, Any] = {}
    for key in ("name", "contact", "colour"):
        if key in values and not isinstance(values[key], str):
            errors.append(field_error(key, "Give a string."))
    if isinstance(values.get("name"), str):
        name = " ".join(values["name"].split())
        if not name or len(name) > MAX_NAME:
            errors.append(field_error("name", f"Give the site's name, at most {MAX_NAME} characters."))
        parsed["name"] = name
    if isinstance(values.get("contact"), str):
        contact = values["contact"].strip().lower()
        problem = email_problem(contact) if contact else None
        if problem:
            errors.append(field_error("contact", problem))
        parsed["contact"] = contact
    if isinstance(values.get("colour"), str):
        colour = values["colour"].strip().lower()
        if len(colour) != 7 or colour[0] != "#" or any(c not in "0123456789abcdef" for c in colour[1:]):
            errors.append(field_error("colour", "Give the colour as #rrggbb, for example #0b57a4."))
        elif (ratio := contrast(colour, "#ffffff")) < AA_TEXT:
            errors.append(field_error("colour", f"{colour} has a contrast of {ratio:.2f}:1 against white; links and "
                                                f"buttons need at least {AA_TEXT}:1 (WCAG AA). Choose a darker "
                                                "colour."))
        parsed["colour"] = colour
    if "footer_links" in values:
        raw = values["footer_links"]
        if isinstance(raw, list) and all(isinstance(i, dict) for i in raw):
            raw = "\n".join(f"{i.get('label', '')} | {i.get('url', '')}" for i in raw)
        if not isinstance(raw, str):
            errors.append(field_error("footer_links", "Give a list of {label, url}."))
        else:
            parsed["footer_links"], found = _footer_links(raw)
            errors += found
    if errors:
        raise ValidationError("The branding was not saved: " + " ".join(e["message"] for e in errors), errors)
    return parsed


def update(conn: Connection, actor: Actor, settings: Settings, changes: dict[str, Any]) -> Branding:
    """Save the `changes` parsed by `parse` and audit what changed (before and after); the branding now."""
    before = asdict(current(conn, settings))
    for key, value in changes.items():
        conn.execute(delete(site_settings).where(site_settings.c.key == key))
        conn.execute(insert(site_settings).values(key=key, value=json.dumps(value), updated=utcnow()))
    after = current(conn, settings)
    audit.record(conn, actor, "site.branding", "site", "branding",
                 **audit.changed({k: before[k] for k in changes}, {k: asdict(after)[k] for k in changes}))
    return after


def check_image(data: bytes, max_bytes: int) -> str:
    """The media type of an uploaded logo or favicon; ValidationError when it is empty, too large or no image a
    browser shows (PNG, JPEG, GIF, WebP, ICO)."""
    if not data:
        raise ValidationError("Choose an image file.", [field_error("file", "Choose an image file.")])
    if len(data) > max_bytes:
        message = f"The image has {len(data)} bytes; at most {max_bytes} are allowed."
        raise ValidationError(message, [field_error("file", message)])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                kind, size = image.format, image.size
                image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombWarning,
            Image.DecompressionBombError):
        kind, size = None, (0, 0)
    if kind not in IMAGE_FORMATS:
        message = "This file is not an image in PNG, JPEG, GIF, WebP or ICO form."
        raise ValidationError(message, [field_error("file", message)])
    if max(size) > MAX_PIXELS:
        message = f"The image is {size[0]}x{size[1]} pixels; at most {MAX_PIXELS} a side."
        raise ValidationError(message, [field_error("file", message)])
    return IMAGE_FORMATS[str(kind)]


def save_image(conn: Connection, actor: Actor, name: str, data: bytes, max_bytes: int) -> str:
    """Replace the logo or favicon (`name`) with `data`, checked by `check_image`; audited. Its digest."""
    media_type = check_image(data, max_bytes)
    digest = hashlib.sha256(data).hexdigest()
    conn.execute(delete(site_images).where(site_images.c.name == name))
    conn.execute(insert(site_images).values(name=name, media_type=media_type, data=data, digest=digest,
                                            updated=utcnow()))
    audit.record(conn, actor, f"site.{name}", "site", name, media_type=media_type, bytes=len(data), digest=digest)
    return digest


def remove_image(conn: Connection, actor: Actor, name: str) -> None:
    """Go back to no logo, or the default favicon; audited."""
    conn.execute(delete(site_images).where(site_images.c.name == name))
    audit.record(conn, actor, f"site.{name}.remove", "site", name)


def image(conn: Connection, name: str) -> tuple[str, bytes, str] | None:
    """(media type, bytes, digest) of the logo or favicon, or None."""
    row = conn.execute(select(site_images).where(site_images.c.name == name)).mappings().first()
    return (row["media_type"], bytes(row["data"]), row["digest"]) if row else None


def stylesheet(colour: str) -> str:
    """The stylesheet that sets the primary colour over site.css's default (served by the site: the pages' content
    security policy allows no inline style)."""
    return f":root{{--accent:{colour};--accent-dark:{darker(colour)}}}\n"
