"""Alembic environment: the engine comes from the caller (repository.storage.migrate)."""

from alembic import context

from repository.storage.tables import metadata

engine = context.config.attributes["engine"]

with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
