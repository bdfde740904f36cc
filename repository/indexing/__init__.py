"""Keeping the search index in step: the outbox applied after each commit, full reindex with parity check, bulk load."""
