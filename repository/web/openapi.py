"""The OpenAPI 3 description, generated from the app's own routes and marshmallow schemas (never hand-kept)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask
from werkzeug.routing import Rule

CONVERTER_TYPES = {"int": "integer", "string": "string", "path": "string", "default": "string", "uuid": "string"}
SKIPPED_ENDPOINTS = {"static"}


def doc(**spec: Any) -> Callable:
    """Attach OpenAPI details to a view: `parameters`, `request` (schema or media types), `responses`, `tags`."""

    def decorator(view: Callable) -> Callable:
        view.__dict__["openapi"] = {**getattr(view, "openapi", {}), **spec}  # read by build_spec
        return view

    return decorator


def _path_and_params(rule: Rule) -> tuple[str, list[dict]]:
    params = []
    path = rule.rule
    for match in re.finditer(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>", rule.rule):
        converter, name = match.group(1) or "default", match.group(2)
        params.append(
            {"name": name, "in": "path", "required": True, "schema": {"type": CONVERTER_TYPES.get(converter, "string")}}
        )
        path = path.replace(match.group(0), "{" + name + "}")
    return path, params


def build_spec(app: Flask, title: str, version: str, server_url: str) -> dict:
    """Walk the URL map; every route and method appears, with its docstring, scope and declared schemas."""
    spec = APISpec(title=title, version=version, openapi_version="3.0.3", plugins=[MarshmallowPlugin()])
    spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer"})
    spec.components.security_scheme("access_token", {"type": "apiKey", "in": "query", "name": "access_token"})
    spec.options["servers"] = [{"url": server_url}]
    error_ref = {"description": "Error object", "content": {"application/json": {"schema": ERROR_SCHEMA}}}
    page_error = {"description": "An error page", "content": {"text/html": {}}}
    paths: dict[str, dict] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if rule.endpoint in SKIPPED_ENDPOINTS:
            continue
        view = app.view_functions[rule.endpoint]
        path, path_params = _path_and_params(rule)
        extra = getattr(view, "openapi", {})
        doc_text = (view.__doc__ or "").strip()
        summary = doc_text.splitlines()[0] if doc_text else rule.endpoint
        # Web pages (the `pages` blueprints) answer HTML, their errors too; their forms need the session's CSRF token.
        is_page = rule.endpoint.startswith("pages.")
        default_ok = {"200": {"description": "The page.", "content": {"text/html": {}}}} if is_page else {
            "200": {"description": "OK"}}
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            operation: dict[str, Any] = {
                "operationId": f"{rule.endpoint}.{method.lower()}",
                "summary": summary,
                "tags": extra.get("tags", [rule.endpoint.split(".")[1 if is_page else 0]]),
                "parameters": path_params + extra.get("parameters", []),
                "responses": extra.get("responses", default_ok) | {"4XX": page_error if is_page else error_ref},
            }
            if doc_text:
                operation["description"] = doc_text
            if getattr(view, "requires_auth", False):
                operation["security"] = [{"bearer": []}, {"access_token": []}]
                scope = getattr(view, "required_scope", None)
                if scope:
                    operation["description"] = operation.get("description", "") + f"\n\nRequires scope `{scope}`."
            if "request" in extra and method in {"POST", "PUT", "PATCH"}:
                operation["requestBody"] = extra["request"]
            paths.setdefault(path, {})[method.lower()] = operation
    for path, operations in paths.items():
        spec.path(path=path, operations=operations)
    return spec.to_dict()


ERROR_SCHEMA = {
    "type": "object",
    "required": ["message", "status"],
    "properties": {
        "message": {"type": "string"},
        "status": {"type": "integer"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["message"],
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}
