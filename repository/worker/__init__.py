"""The background worker: applies the outbox (`repository.outbox`) after each commit and retries what failed (index
rows, DOI registration and hiding), lifts embargoes, runs the periodic tasks the services hang on its pass, and
rebuilds the index (full reindex with parity check, bulk load)."""
