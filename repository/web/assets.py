"""Static assets under content-hashed names: `asset("site.css")` in a template gives `/assets/site.3f9c2a1b.css`,
which is served with a year's `immutable` caching. A changed file gets a new name, so a browser never keeps an old
stylesheet or script, and never asks again for an unchanged one."""

from __future__ import annotations

import hashlib
from pathlib import Path

from flask import Blueprint, Flask, abort, redirect, send_from_directory
from werkzeug.wrappers import Response

FOLDER = Path(__file__).resolve().parent.parent / "static"
YEAR = 365 * 24 * 3600


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:10]


def _hashed_name(name: str, digest: str) -> str:
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}.{digest}.{suffix}" if dot else f"{name}.{digest}"


def build_manifest(folder: Path = FOLDER) -> dict[str, str]:
    """Each file's name → its hashed name (read once when the app is built: the files do not change while it runs)."""
    return {str(p.relative_to(folder)): _hashed_name(str(p.relative_to(folder)), _digest(p))
            for p in sorted(folder.rglob("*")) if p.is_file()}


def install(app: Flask) -> None:
    manifest = build_manifest()
    originals = {hashed: name for name, hashed in manifest.items()}
    bp = Blueprint("assets", __name__)  # one per app: a blueprint's routes are fixed once it is registered

    @app.template_global()
    def asset(name: str) -> str:
        return f"/assets/{manifest[name]}"

    @bp.get("/assets/<path:hashed>")
    def hashed_asset(hashed: str) -> Response:
        """A static file by its content-hashed name (see `asset()`); cached for a year."""
        name = originals.get(hashed)
        if name is None:
            abort(404)
        response = send_from_directory(FOLDER, name, max_age=YEAR, conditional=True)
        response.cache_control.public = True
        response.cache_control.immutable = True
        return response

    @bp.get("/favicon.ico")
    def favicon() -> Response:
        """The site's icon, for clients that ask for it at the conventional address."""
        return redirect(asset("favicon.svg"), 301)

    app.register_blueprint(bp)
