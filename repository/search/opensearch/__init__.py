"""The OpenSearch engine: the query tree in the query DSL, index templates and aliases for zero-downtime swaps."""
