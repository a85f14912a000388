"""What the CLI sub-commands share: the database URL and a migrated, committed unit of work."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy.orm import Session

from lector import runfile
from lector.settings import Settings
from lector.wiring import resolved_database_url
from store.errors import DatabaseUnavailable, StoreError


def database_url(settings: Settings) -> str:
    """``LECTOR_DATABASE_URL``, else the database a running ``make run`` uses (maybe its
    embedded one, recorded in ``.lector/run.json``), else the local server's ``lector`` database."""
    if settings.database_url is None and (record := runfile.read(settings.data_dir)) is not None:
        return record.database_url
    return resolved_database_url(settings)


@contextmanager
def database_session(settings: Settings) -> Iterator[Session]:
    """Bring the schema to head, then yield a session that commits when the block succeeds.

    A one-shot command holds one connection, so the engine has no pool.
    """
    from store.db import make_engine, make_sessionmaker, session_scope
    from store.db.migrate import upgrade
    from store.db.session import translate_db_errors

    url = database_url(settings)
    with translate_db_errors():
        upgrade(url)
    engine = make_engine(url, pool=False)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            yield session
    finally:
        engine.dispose()


def parse_instant(value: str) -> datetime:
    """An ISO 8601 date or date-time; naive values are UTC, a bare date is 00:00 UTC that day."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = datetime.combine(date.fromisoformat(value), datetime.min.time())
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def format_instant(value: datetime | None, none: str = "-") -> str:
    return none if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@contextmanager
def reported_errors() -> Iterator[None]:
    """Print a store error as one red line on stderr and exit 1, instead of a traceback (the
    driver's multi-line messages are joined: one line is what a script or a person can use)."""
    try:
        yield
    except StoreError as error:
        message = " ".join(str(error).split())
        hint = " (is `make run` running? LECTOR_DATABASE_URL names another database)" if isinstance(
            error, DatabaseUnavailable) else ""
        Console(stderr=True).print(f"[red]{type(error).__name__}:[/red] {message}{hint}", highlight=False,
                                   soft_wrap=True)
        raise typer.Exit(1) from error


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A rich table on a terminal; tab-separated lines (header first) when piped, so that nothing
    is cut to fit a width and scripts can read it."""
    console = Console()
    if console.is_terminal:
        table = Table(*headers)
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    for line in (headers, *rows):
        typer.echo("\t".join(line))
