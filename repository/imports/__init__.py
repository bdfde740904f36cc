"""Imports from other repositories (docs/operators/migration.md): OAI-PMH harvests (`oai`) and spreadsheets
(`csv_rows`) become published records through the deposit state machine, each one noted in a ledger (`ledger`) so a
rerun brings in exactly what is missing; `crosswalk` maps Dublin Core and DataCite to the deposit metadata."""
