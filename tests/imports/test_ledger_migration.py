"""Migration 0030 makes one import ledger: the records an earlier `import api` took, noted in `import_ledger`, are
in `imported_records` under `api:<base URL>` afterwards, so a rerun after the upgrade still skips them; a
downgrade gives them back."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text

from repository.storage import open_database
from repository.storage.migrate import alembic_config


def test_the_api_ledger_rows_move_to_the_one_ledger_and_back(database_url) -> None:  # type: ignore[no-untyped-def]
    db = open_database(database_url)
    config = alembic_config(db)
    command.downgrade(config, "0029")
    with db.write() as conn:
        conn.execute(text("INSERT INTO recids (id, kind, created) VALUES (7, 'record', '2026-01-01 00:00:00')"))
        conn.execute(text(
            "INSERT INTO import_ledger (source, kind, source_id, local_id, status, reason, updated) VALUES "
            "('https://old.example.org', 'record', '101', 7, 'imported', NULL, '2026-01-02 00:00:00'), "
            "('https://old.example.org', 'concept', '100', 6, 'imported', NULL, '2026-01-02 00:00:00'), "
            "('https://old.example.org', 'record', '102', NULL, 'failed', 'HTTP 404', '2026-01-02 00:00:00')"))
    command.upgrade(config, "0030")
    with db.read() as conn:
        rows = conn.execute(text("SELECT source, source_id, record_id FROM imported_records")).all()
    assert [tuple(row) for row in rows] == [("api:https://old.example.org", "101", 7)]
    command.downgrade(config, "0029")
    with db.read() as conn:
        back = conn.execute(text("SELECT source, kind, source_id, local_id, status FROM import_ledger")).all()
        assert conn.execute(text("SELECT count(*) FROM imported_records")).scalar_one() == 0
    assert [tuple(row) for row in back] == [("https://old.example.org", "record", "101", 7, "imported")]
    with db.write() as conn:
        conn.execute(text("DELETE FROM import_ledger"))
    command.upgrade(config, "head")  # as the other tests expect it
    db.dispose()
