"""Imports from other repositories (docs/operators/migration.md): from a service that speaks this API (`api`, its
batch writer `api_write` and the polite HTTP source `source`), OAI-PMH harvests (`oai`) and spreadsheets (`csv_rows`),
which become published records through the deposit state machine, each noted in the one ledger (`ledger`) so that a rerun
brings in exactly what is missing; `crosswalk` maps Dublin Core and DataCite to the deposit metadata."""
