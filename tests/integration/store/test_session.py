"""store/db/session.py: URL rewriting, the one commit, and "database unavailable"."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from store.db import Account, create_account, make_engine, make_sessionmaker, normalize_url, session_scope
from store.errors import DatabaseUnavailable


@pytest.mark.parametrize(
    "url",
    ["postgresql://u:p%25w@h:5/db", "postgres://u:p%25w@h:5/db", "postgresql+psycopg://u:p%25w@h:5/db"],
)
def test_normalize_url_uses_psycopg3(url: str) -> None:
    assert normalize_url(url) == "postgresql+psycopg://u:p%25w@h:5/db"


def test_normalize_url_refuses_other_databases() -> None:
    with pytest.raises(ValueError):
        normalize_url("sqlite:///x.db")


def test_session_scope_commits_on_success(
    db_sessionmaker: sessionmaker[Session], db_session: Session
) -> None:
    name = f"scope-{uuid.uuid4().hex[:8]}"
    with session_scope(db_sessionmaker) as session:
        create_account(session=session, name=name)
    assert db_session.scalar(select(Account.id).where(Account.name == name)) is not None


def test_session_scope_rolls_back_on_error(
    db_sessionmaker: sessionmaker[Session], db_session: Session
) -> None:
    name = f"scope-{uuid.uuid4().hex[:8]}"
    with pytest.raises(RuntimeError), session_scope(db_sessionmaker) as session:
        create_account(session=session, name=name)
        raise RuntimeError("boom")
    assert db_session.scalar(select(Account.id).where(Account.name == name)) is None


def test_unreachable_database_is_database_unavailable() -> None:
    engine = make_engine("postgresql://postgres@127.0.0.1:1/nothing?connect_timeout=2", pool=False)
    try:
        with pytest.raises(DatabaseUnavailable), session_scope(make_sessionmaker(engine)) as session:
            session.execute(select(1))
    finally:
        engine.dispose()


def test_missing_database_is_database_unavailable() -> None:
    engine = make_engine(f"postgresql://postgres@127.0.0.1:5432/absent_{uuid.uuid4().hex[:8]}", pool=False)
    try:
        with pytest.raises(DatabaseUnavailable), session_scope(make_sessionmaker(engine)) as session:
            session.execute(select(1))
    finally:
        engine.dispose()


def test_sql_errors_are_not_mistaken_for_unavailability(db_sessionmaker: sessionmaker[Session]) -> None:
    from sqlalchemy import exc, text

    with pytest.raises(exc.ProgrammingError), session_scope(db_sessionmaker) as session:
        session.execute(text("SELECT * FROM no_such_table"))


def test_the_server_probes_our_connections(pg_url: str) -> None:
    """The backend's own socket carries keepalives and a TCP user timeout (libpq's ``options``):
    the session of a host that vanished (holding assembly's advisory lock) ends in about 30 s,
    not after the server kernel's two hours. The farm's assembly-host test shows the effect."""
    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            shown = {name: conn.execute(text(f"SHOW {name}")).scalar_one()
                     for name in ("tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout")}
    finally:
        engine.dispose()
    # Over a Unix socket the server reports 0 for all of them; the tests connect over TCP.
    assert shown == {"tcp_keepalives_idle": "15", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3",
                     "tcp_user_timeout": "15000"}
