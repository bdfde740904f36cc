"""The embedded engine: tantivy index directories under one root (`engine.EmbeddedSearch`), the query tree in
tantivy's terms, exact facet counts, deep pages through columns, the per-process result cache and the writer lease."""
