"""Alembic environment: the engine comes from the caller (repository.storage.migrate).

Offline (`migrate --sql`): no connection; the SQL of the pending migrations is written for the engine's dialect
to the output the caller chose, the range of revisions given by the caller."""

from alembic import context

from repository.storage.tables import metadata

engine = context.config.attributes["engine"]

if context.is_offline_mode():
    context.configure(dialect_name=engine.dialect.name, target_metadata=metadata, render_as_batch=True,
                      literal_binds=True, output_buffer=context.config.attributes.get("output"))
    with context.begin_transaction():
        context.run_migrations()
else:
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
