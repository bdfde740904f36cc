"""Archiving software releases: metadata files, their validator, and release ingestion."""
