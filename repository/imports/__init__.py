"""Imports from other repositories (docs/operators/migration.md): from a service that speaks this API (`api`),
with the import ledger that makes every import resumable (`ledger`) and the polite HTTP source (`source`)."""
