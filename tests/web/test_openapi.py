"""The OpenAPI description is generated from the routes: no route may be missing from it."""

import re


def test_every_route_is_described(app, client):
    spec = client.get("/api/openapi.json").json
    assert spec["openapi"].startswith("3.")
    described = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (path, method.lower()) in described, f"{method} {path} missing from the OpenAPI description"


def test_guarded_routes_declare_security(client):
    spec = client.get("/api/openapi.json").json
    assert spec["paths"]["/api/tokens/"]["get"]["security"]
    assert "security" not in spec["paths"]["/api/"]["get"]
    assert spec["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
