"""Flask blueprints, one per resource: thin views that parse, authorize, call the domain and render."""
