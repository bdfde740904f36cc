"""Usage statistics (COUNTER Release 5, Make Data Count): each counted event as it happened, without addresses
(`usage_events`), and the totals the worker's pass aggregates from them, per record version and per concept
(`usage_totals`). Written and read by `repository.records.stats`."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, DateTime, Index, Integer, String, Table, Text

from repository.storage.tables.metadata import metadata

usage_events = Table(
    "usage_events",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(16), nullable=False),  # "view" (an investigation) or "download" (a request)
    Column("recid", Integer, nullable=False),  # the record version
    Column("conceptrecid", Integer, nullable=False),  # its concept (every version)
    Column("file_key", Text, nullable=False, default=""),  # the file downloaded ("" for a view)
    # Keyed hashes (HMAC with the instance's secret), never an address: the visitor (a user, else address and user
    # agent) of one day, for the double-click filter; and COUNTER's session (the visitor and the hour), for uniques.
    Column("visitor", String(32), nullable=False),
    Column("session", String(32), nullable=False),
    Column("created", DateTime, nullable=False),
    Column("size", BigInteger, nullable=False, default=0),  # a download's file size: its share of `volume`
    # NULL until the worker's pass aggregates it; then whether it counts (False: the double-click of another).
    Column("counted", Boolean, nullable=True),
    Index("ix_usage_events_pending", "counted", "created"),
    Index("ix_usage_events_clicks", "visitor", "recid", "kind", "created"),  # the double-click filter
    Index("ix_usage_events_sessions", "session", "recid", "kind"),  # unique per version
    Index("ix_usage_events_concept_sessions", "session", "conceptrecid", "kind"),  # unique per concept
)

usage_totals = Table(
    "usage_totals",
    metadata,
    # A record version's id or a concept's id (one id space): the totals of that version, or of every version.
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("views", BigInteger, nullable=False, default=0),
    Column("unique_views", BigInteger, nullable=False, default=0),
    Column("downloads", BigInteger, nullable=False, default=0),
    Column("unique_downloads", BigInteger, nullable=False, default=0),
    Column("volume", BigInteger, nullable=False, default=0),
)
