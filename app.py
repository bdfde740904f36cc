"""The WSGI entry point: `gunicorn 'app:create_app()'`, `flask --app app ...`."""

from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import IntegerConverter, Map, MapAdapter

from repository.config import Settings
from repository.services import build_services
from repository.web import assets, compression, logs, metrics, request
from repository.web.cors import install_cors
from repository.web.ratelimit import install_limiter
from repository.web.session import install_sessions
from repository.web.template_code import TEMPLATE_CODE


class DatabaseInt(IntegerConverter):
    """`<int:...>` in routes matches only ids a database integer column can hold: larger ones are 404, not a
    driver overflow (a 500)."""

    def __init__(self, url_map: Map, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", 2**31 - 1)
        super().__init__(url_map, *args, **kwargs)


class SlashlessMethodAdapter(MapAdapter):
    """With `strict_slashes` off, Werkzeug matches a slash-less path to its slashed rule only for that rule's methods,
    and answers any other method with 404 (its trailing-slash fallback records no allowed methods). The
    specification writes these paths without the slash (`DELETE /api/deposit/depositions`): a wrong method there is
    the slashed path's 405 with `Allow`."""

    def match(self, path_info: str | None = None, method: str | None = None, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().match(path_info, method, *args, **kwargs)
        except NotFound:
            path = self.path_info if path_info is None else path_info
            if path.endswith("/"):
                raise
            try:
                super().match(path + "/", method, *args, **kwargs)
            except MethodNotAllowed:
                raise
            except HTTPException:  # the slashed path does not match either: the original 404
                pass
            raise


class RepositoryMap(Map):
    """The URL map whose adapters answer wrong methods on slash-less paths with 405 (SlashlessMethodAdapter)."""

    def bind(self, *args: Any, **kwargs: Any) -> MapAdapter:
        adapter = super().bind(*args, **kwargs)
        adapter.__class__ = SlashlessMethodAdapter  # Werkzeug has no hook for the adapter's class; it adds no state
        return adapter

    def bind_to_environ(self, *args: Any, **kwargs: Any) -> MapAdapter:
        adapter = super().bind_to_environ(*args, **kwargs)  # calls Map.bind itself, not self.bind
        adapter.__class__ = SlashlessMethodAdapter
        return adapter


class RepositoryFlask(Flask):
    url_map_class = RepositoryMap
    jinja_options = {**Flask.jinja_options, "bytecode_cache": TEMPLATE_CODE}


def create_app(settings: Settings | None = None) -> Flask:
    """Build the application from `settings` (default: the environment) around the process's services
    (`build_services`), which `repository.web.request.services()` returns to the views."""
    settings = settings or Settings.from_env()
    logs.configure_logging(settings.LOG_LEVEL, settings.LOG_FORMAT)
    services = build_services(settings)

    app = RepositoryFlask(__name__, instance_path=settings.INSTANCE_PATH, static_folder="repository/static")
    app.config.update(SECRET_KEY=services.secret.decode(), MAX_CONTENT_LENGTH=None, JSON_SORT_KEYS=False)
    if settings.TRUSTED_PROXIES:
        n = settings.TRUSTED_PROXIES
        # Flask's documented way to put middleware around the app; mypy sees an assignment to a method.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n, x_port=n)  # type: ignore[method-assign]
    app.url_map.strict_slashes = False
    app.url_map.converters["int"] = DatabaseInt

    app.extensions["repository"] = services
    from repository.api import health
    from serializers import REGISTRY

    # Hooks in this order: compression's response hook runs last, the metrics' clock starts first, and the probes
    # (/healthz, /readyz, /metrics) are marked as having no caller before the rate limiter looks for one.
    compression.install(app, settings, [serializer.mimetype for serializer in REGISTRY.values()])
    metrics.install(app)
    logs.install(app)
    health.install(app)
    install_sessions(app, settings)
    request.install(app)
    install_cors(app)
    # The limiter belongs to this app (its hooks, its limits on blueprints), not to the services: a script or the
    # worker has no requests to limit.
    limiter = install_limiter(app, settings, request.resolve_identity)
    request.install_checks(app)
    limiter.exempt(health.bp)

    from repository import pages
    from repository.api import (
        access_requests,
        admin,
        admin_moderation,
        admin_site,
        archive,
        badges,
        communities,
        community_requests,
        corrections,
        datadesc,
        deposit_files,
        deposits,
        exports,
        files,
        funders,
        grants,
        licenses,
        oai,
        records,
        releases,
        root,
        schemas,
        thumbnails,
        tokens,
        vocabularies,
    )
    from repository.pages import errors

    app.url_map.converters["key"] = files.KeyConverter  # the file keys of /api/files/ routes
    for blueprint in (root.bp, tokens.bp, deposits.bp, deposit_files.bp, files.bp, records.bp, licenses.bp, funders.bp,
                      grants.bp, communities.bp, community_requests.bp, oai.bp, releases.bp, schemas.bp, thumbnails.bp,
                      datadesc.bp, badges.bp, access_requests.bp, archive.bp, corrections.bp, exports.bp,
                      admin.bp, admin_moderation.bp, admin_site.bp, vocabularies.bp):
        app.register_blueprint(blueprint)
    app.register_blueprint(pages.bp)
    errors.install(app)  # after compression's hook, so that the error pages are compressed too
    assets.install(app)
    oai.install_limits(app, limiter, settings)
    if settings.BENCH_CEILING_ENDPOINT:
        from repository.api import ceiling

        app.register_blueprint(ceiling.bp)
    thumbnails.install_limits(limiter, settings)
    return app

