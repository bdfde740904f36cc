"""What every page's layout shows of the site (docs/operators/branding-and-pages.md): the branding, the content
pages linked in the footer and the banners. Read on every page, so kept per database for a few seconds
(docs/architecture/caches.md#per-process-in-memory): a change made in this process shows at once (`forget`), one made in
another process within LIFETIME seconds. Which banners show is decided at each page from the clock, not cached."""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass

from repository.config import Settings
from repository.site import banners, branding, content
from repository.storage.engine import Database

LIFETIME = 5.0


@dataclass(frozen=True)
class Layout:
    branding: branding.Branding
    footer_pages: list[dict]  # {slug, title}
    banners: list[dict]  # every banner; `banners.showing` picks those of the moment


_cache: weakref.WeakKeyDictionary[Database, tuple[float, Layout]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def read(db: Database, settings: Settings) -> Layout:
    """The layout of the site's pages, at most LIFETIME seconds old."""
    now = time.monotonic()
    with _lock:
        kept = _cache.get(db)
    if kept is not None and now - kept[0] < LIFETIME:
        return kept[1]
    with db.read() as conn:
        found = Layout(branding.current(conn, settings),
                       [{"slug": p["slug"], "title": p["title"]} for p in content.all_pages(conn) if p["in_footer"]],
                       banners.all_banners(conn))
    with _lock:
        _cache[db] = (now, found)
    return found


def forget(db: Database) -> None:
    """Drop the kept layout: the next page reads the change just committed."""
    with _lock:
        _cache.pop(db, None)
