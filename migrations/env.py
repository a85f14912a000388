"""Alembic environment for lector.

The URL comes, in order, from ``Config.attributes["url"]`` (``store.db.migrate``, the tests), from
``alembic -x url=...``, or from ``lector.settings.Settings`` (``LECTOR_DATABASE_URL``, else the
local default). Online upgrades hold a transaction-level advisory lock, so processes that start at
the same time and all run ``upgrade head`` apply each migration once.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, text

from store.db.base import Base
from store.db.models import Account  # noqa: F401  (registers every table on Base.metadata)
from store.db.session import make_engine, normalize_url

# An arbitrary constant: "lector migrations" as a 64-bit advisory lock key.
MIGRATION_LOCK_KEY = 0x6C6563746F72_01

config = context.config
target_metadata = Base.metadata

if config.config_file_name is not None and config.attributes.get("configure_logging", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    url = config.attributes.get("url") or context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        from lector.commands.common import database_url
        from lector.settings import Settings

        url = database_url(Settings())
    return normalize_url(str(url))


def _configure(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, compare_type=True, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_url(), pool=False)
    try:
        with engine.connect() as connection:
            _configure(connection)
            with context.begin_transaction():
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
