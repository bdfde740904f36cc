"""Content pages (docs/operators/branding-and-pages.md#content-pages): About, Terms of use, Privacy, Contact, Help
and any other an administrator adds, written in Markdown on the web, served at /pages/<slug>, linked in the footer
and listed in the sitemap. Markdown is rendered with markdown-it-py and the result sanitized with nh3: raw HTML in
the text is shown as text, and whatever is left of scripts, event handlers, `javascript:` links or frames is
removed, so a page's text can never run code in a reader's browser."""

from __future__ import annotations

import re
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup
from sqlalchemy import Connection, delete, insert, select, update

from repository.accounts import audit
from repository.accounts.audit import Actor
from repository.errors import NotFound, ValidationError, field_error
from repository.storage.tables.site import content_pages
from repository.timeutil import utcnow

# The pages every site is expected to have, in the footer's order; the administration page offers to write them.
STANDARD = {"about": "About", "terms": "Terms of use", "privacy": "Privacy", "contact": "Contact", "help": "Help"}
TERMS = "terms"
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
MAX_TITLE = 200
MAX_BODY = 200_000

_PARSER = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
         "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul"}


def render(text: str) -> Markup:
    """Markdown to safe HTML: CommonMark with tables, raw HTML escaped, then sanitized (only formatting tags;
    links to http(s), mail and this site's paths; no attribute but those listed). A `# heading` becomes an h2:
    the page's title is its one h1."""
    html = _PARSER.render(text).replace("<h1>", "<h2>").replace("</h1>", "</h2>")
    return Markup(nh3.clean(html, tags=_TAGS, url_schemes={"http", "https", "mailto"},
                            attributes={"a": {"href", "title"}, "img": {"src", "alt", "title"},
                                        "th": {"align"}, "td": {"align"}},
                            link_rel="noopener noreferrer"))  # fmt: skip


def parse(values: dict[str, Any], slug_given: bool = True) -> dict[str, Any]:
    """A page's fields from a form or JSON body (`slug`, `title`, `body`, `in_footer`, `position`), checked;
    ValidationError listing every problem."""
    errors = []
    parsed: dict[str, Any] = {}
    if slug_given:
        slug = values.get("slug")
        if not isinstance(slug, str) or not SLUG.match(slug.strip()):
            errors.append(field_error("slug", "The address is 1 to 64 lower-case letters, digits and hyphens."))
        else:
            parsed["slug"] = slug.strip()
    title, body = values.get("title"), values.get("body")
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE:
        errors.append(field_error("title", f"Give the page a title of at most {MAX_TITLE} characters."))
    else:
        parsed["title"] = " ".join(title.split())
    if not isinstance(body, str) or len(body) > MAX_BODY:
        errors.append(field_error("body", f"Give the text in Markdown, at most {MAX_BODY} characters."))
    else:
        parsed["body"] = body.replace("\r\n", "\n")
    in_footer = values.get("in_footer", True)
    parsed["in_footer"] = in_footer in (True, "on", "true", "1") if not isinstance(in_footer, bool) else in_footer
    position = values.get("position", 0)
    try:
        parsed["position"] = max(0, min(1000, int(position or 0)))
    except (TypeError, ValueError):
        errors.append(field_error("position", "The position is a whole number."))
    if errors:
        raise ValidationError("The page was not saved: " + " ".join(e["message"] for e in errors), errors)
    return parsed


def all_pages(conn: Connection) -> list[dict]:
    """Every page, in the footer's order (position, then title)."""
    query = select(content_pages).order_by(content_pages.c.position, content_pages.c.title)
    return [dict(row) for row in conn.execute(query).mappings()]


def get(conn: Connection, slug: str) -> dict:
    """One page; NotFound when there is none at `slug`."""
    row = conn.execute(select(content_pages).where(content_pages.c.slug == slug)).mappings().first()
    if row is None:
        raise NotFound("There is no such page.")
    return dict(row)


def find(conn: Connection, slug: str) -> dict | None:
    try:
        return get(conn, slug)
    except NotFound:
        return None


def save(conn: Connection, actor: Actor, page: dict[str, Any]) -> dict:
    """Create or replace the page at `page["slug"]` (each save of an existing page counts a new version); audited
    with the text before and after."""
    slug = page["slug"]
    before = find(conn, slug)
    values = {k: page[k] for k in ("title", "body", "in_footer", "position")}
    if before is None:
        conn.execute(insert(content_pages).values(slug=slug, version=1, updated=utcnow(), **values))
    else:
        conn.execute(update(content_pages).where(content_pages.c.slug == slug)
                     .values(version=content_pages.c.version + 1, updated=utcnow(), **values))
    after = get(conn, slug)
    audit.record(conn, actor, "page.create" if before is None else "page.edit", "page", slug,
                 version=after["version"], **audit.changed(
                     {k: before[k] for k in values} if before else {}, {k: after[k] for k in values}))
    return after


def remove(conn: Connection, actor: Actor, slug: str) -> None:
    """Delete the page (NotFound when absent); audited with its last text."""
    page = get(conn, slug)
    conn.execute(delete(content_pages).where(content_pages.c.slug == slug))
    audit.record(conn, actor, "page.delete", "page", slug, title=page["title"], body=page["body"],
                 version=page["version"])
